"""OpenClaudeCode's sessions and memory (seed document 004's design), read-only.

A data directory (``~/.openclaudecode`` or any folder) holds one SQLite database
(``*.db``, ``*.sqlite`` or ``*.sqlite3`` at its top level) with a ``sessions`` table
and the memory tables ``memory_chunks`` + ``memory_fts`` (FTS5), and a ``sessions/``
folder of ``{sessionId}.jsonl`` transcripts of ``session``, ``message`` and
``compaction`` events.

* :mod:`.home`: :func:`find_openclaudecode` recognises such a directory (the database
  found by its tables) and gives an :class:`OccHome`.
* :mod:`.sessions_table`: the ``sessions`` rows (snake_case or camelCase columns).
* :mod:`.transcript`: a transcript as memlens's :class:`~core.transcript.model.Session`
  (timeline, replay: after a compaction the context is its summary and what follows).
* :mod:`.memory_fts`: :func:`search_memory`, the agent's FTS5 memory search.

memlens never writes here: databases are opened with :mod:`core.openclaw.sqlite_ro`
and every write (a compaction on demand) is refused (:data:`READ_ONLY`).
"""

from __future__ import annotations

from core.openclaudecode.home import OccHome, find_openclaudecode
from core.openclaudecode.memory_fts import MemoryFts, MemoryFtsHit, MemoryFtsResult, search_memory
from core.openclaudecode.transcript import FORMAT, FORMAT_KEY, READ_ONLY

__all__ = [
    "FORMAT",
    "FORMAT_KEY",
    "READ_ONLY",
    "MemoryFts",
    "MemoryFtsHit",
    "MemoryFtsResult",
    "OccHome",
    "find_openclaudecode",
    "search_memory",
]
