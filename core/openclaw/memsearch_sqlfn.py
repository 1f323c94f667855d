"""The SQL functions of OpenClaw's memory search, registered once per connection.

OpenClaw registers two functions on its connection (``dist/manager-search-*.mjs``):
the exact path specificity of a path (3 the whole path, 2 the file name, 1 the
stem) and a normalized substring test. Registering a function expires every
prepared statement of the connection, so that SQLite compiles each statement
again; memlens registers them once per connection and each search sets what
they match (:mod:`core.openclaw.memsearch_keyword`).
"""

from __future__ import annotations

import threading
import unicodedata
import weakref
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable

    import regex

    from core.openclaw.memindex import MemoryIndex

EXACT_FN = "openclaw_memory_exact_path_specificity"
CONTAINS_FN = "openclaw_memory_normalized_contains"
CACHE_KIB = 32 * 1024
"""The page cache of a searched index's connection (read-only: it only costs memory)."""


class SqlFunctions:
    """The two SQL functions OpenClaw registers, registered once per connection.

    Registering a function again expires every prepared statement of the
    connection (SQLite recompiles them all); each search sets what the functions
    match instead, which gives the same answers as registering them anew.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.matchers: dict[str, regex.Pattern[str]] = {}
        self.exact: Callable[[str], int] = lambda _path: 0
        # SQLite's default page cache (2 MB) is a small part of a large index: every
        # search's bm25, id and recall lookups went to the OS for the same pages again
        conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        conn.create_function(CONTAINS_FN, 2, self.contains, deterministic=True)
        conn.create_function(EXACT_FN, 1, self.exact_path, deterministic=True)

    def contains(self, value: Any, query: Any) -> int:
        """``openclaw_memory_normalized_contains``."""
        if not isinstance(value, str) or not isinstance(query, str):
            return 0
        m = self.matchers.get(query)
        return int(m is not None and m.search(unicodedata.normalize("NFC", value)) is not None)

    def exact_path(self, path: Any) -> int:
        """``openclaw_memory_exact_path_specificity``."""
        return self.exact(path) if isinstance(path, str) else 0


_FUNCTIONS: weakref.WeakKeyDictionary[MemoryIndex, SqlFunctions] = weakref.WeakKeyDictionary()
_FUNCTIONS_LOCK = threading.Lock()


def sql_functions(index: MemoryIndex) -> SqlFunctions:
    """The SQL functions of *index*'s current connection (registered on first use)."""
    conn = index.connection
    with _FUNCTIONS_LOCK:
        found = _FUNCTIONS.get(index)
        if found is None or found.conn is not conn:  # a reopened connection has none
            found = _FUNCTIONS[index] = SqlFunctions(conn)
        return found
