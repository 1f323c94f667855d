"""Limits on what memlens reads: one place for the size of a line it will parse.

A JSONL line longer than :func:`max_line_bytes` is reported (file and line) and
skipped without being read whole into memory. The default can be changed with
the ``MEMLENS_MAX_LINE_BYTES`` environment variable (the CLI) or the app's
settings (:func:`set_max_line_bytes`).
"""

from __future__ import annotations

import os

MAX_LINE_BYTES = 8 * 1024 * 1024
"""Default: 8 MiB, far above any real transcript line, far below the memory of a machine."""
ENV = "MEMLENS_MAX_LINE_BYTES"
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
"""Default largest whole JSON document read (``sessions.json``): 64 MiB."""
DOCUMENT_ENV = "MEMLENS_MAX_DOCUMENT_BYTES"
DEFAULT_BUDGET_S = 1.0
"""Seconds ``memlens homes`` (:func:`core.dataset.home_scan.scan_homes`) may take over all
homes together; past it, counts are lower bounds."""
_override: int | None = None


def _env_int(name: str, default: int) -> int:
    text = os.environ.get(name, "").strip()
    if text:
        try:
            value = int(text)
        except ValueError:
            return default
        if value > 0:
            return value
    return default


def max_line_bytes() -> int:
    """The longest line memlens parses, in bytes."""
    if _override is not None:
        return _override
    return _env_int(ENV, MAX_LINE_BYTES)


def max_document_bytes() -> int:
    """The largest file read whole as one JSON document (``sessions.json``), in bytes."""
    return _env_int(DOCUMENT_ENV, MAX_DOCUMENT_BYTES)


def set_max_line_bytes(value: int | None) -> None:
    """Set the limit for this process (None: back to the environment or the default)."""
    global _override
    _override = value if value is None or value > 0 else None
