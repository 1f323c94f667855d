"""Where memlens keeps its own files (never inside an agent's data directory)."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from core.safety import session_lock


def cache_dir() -> Path:
    """Memlens cache: demo data and vector caches (``MEMLENS_CACHE_DIR`` overrides)."""
    override = os.environ.get("MEMLENS_CACHE_DIR")
    return Path(override) if override else Path(platformdirs.user_cache_dir("memlens"))


def data_dir() -> Path:
    """Memlens data: the activity log, lane locks (``MEMLENS_DATA_DIR`` overrides).

    The same folder the command line uses (:func:`core.safety.session_lock.memlens_data_dir`).
    """
    return session_lock.memlens_data_dir()
