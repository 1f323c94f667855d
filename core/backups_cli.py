"""``memlens backups``: the backups memlens keeps of the files it writes (list, prune)."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> argparse.ArgumentParser:
    """Add ``backups`` to the CLI's subparsers *sub*."""
    about = "list the backups memlens made before writing an agent's files"
    p: argparse.ArgumentParser = sub.add_parser("backups", help=about, description=about)
    p.add_argument("path", metavar="PATH", help="a data directory or transcript")
    p.add_argument("--json", action="store_true", help="machine-readable JSON output")
    p.add_argument("--pretty", action="store_true", help="indent the JSON output")
    return p
