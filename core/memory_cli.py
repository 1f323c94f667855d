"""``memlens memory``: OpenClaw's memory index (status, files, chunks, search)."""

from __future__ import annotations

from typing import Any


def register(sub: Any) -> None:
    """Add the ``memory`` command to the CLI's subcommands."""
