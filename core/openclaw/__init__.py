"""OpenClaw files memlens reads: ``openclaw.json``, ``sessions.json``, the memory index.

``openclaw.json`` and the memory index are only ever read; ``sessions.json`` is
rewritten (atomically, with a backup) only when the user asks for a change.
"""

from __future__ import annotations

from core.openclaw.config import (
    CompactionConfig,
    MemoryContextConfig,
    MemoryFlushConfig,
    ModelEntry,
    OpenClawConfig,
    context_window_for,
    load_openclaw_config,
    parse_openclaw_config,
)
from core.openclaw.memindex import MemoryIndex, open_memory_index
from core.openclaw.memindex_records import IndexChunk, IndexFile, IndexLayout, SourceSummary
from core.openclaw.sessions_store import (
    REMOVE,
    SessionEntry,
    SessionStore,
    StoreWrite,
    load_sessions_store,
    parse_sessions_store,
    render_sessions_store,
    update_sessions_store,
)

__all__ = [
    "REMOVE",
    "CompactionConfig",
    "IndexChunk",
    "IndexFile",
    "IndexLayout",
    "MemoryContextConfig",
    "MemoryFlushConfig",
    "MemoryIndex",
    "ModelEntry",
    "OpenClawConfig",
    "SessionEntry",
    "SessionStore",
    "SourceSummary",
    "StoreWrite",
    "context_window_for",
    "load_openclaw_config",
    "load_sessions_store",
    "open_memory_index",
    "parse_openclaw_config",
    "parse_sessions_store",
    "render_sessions_store",
    "update_sessions_store",
]
