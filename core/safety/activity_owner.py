"""Whose file a write touched: an agent's data, or memlens's own files.

memlens writes its own files too: the demo data it generates, its vector cache, its
settings and logs. The activity log (:mod:`core.safety.activity`) tells them apart
from the writes to an agent's data, so that the Writes view and its counts show
only what memlens did to the agent's files, and memlens's own writes separately.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

AGENT, MEMLENS = "agent", "memlens"
OWNERS = (AGENT, MEMLENS)
"""Whose file a line touched: the agent's data, or memlens's own files."""
_OWN_SCOPE: ContextVar[str] = ContextVar("memlens_own_writes", default="")


@contextmanager
def own_writes(why: str) -> Iterator[None]:
    """Log every write this thread makes meanwhile as memlens's own (*why*: ``demo data``).

    Write observers run in the writing thread, so a job that wraps its work in this
    scope marks exactly its own writes, whatever runs beside it.
    """
    token = _OWN_SCOPE.set(why or "memlens")
    try:
        yield
    finally:
        _OWN_SCOPE.reset(token)


def own_scope() -> str:
    """Why this thread's writes are memlens's own now (:func:`own_writes`), else ""."""
    return _OWN_SCOPE.get()


def _norm(path: str | os.PathLike[str]) -> str:
    return os.path.normcase(os.path.abspath(os.fspath(path)))


def _within(path: str, roots: Iterable[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


@dataclass(frozen=True, slots=True)
class OwnFiles:
    """Which files are memlens's own: under one of *roots*, unless under one of *places*.

    *places* are agents' data kept inside those folders (the demo home in the cache
    folder): a fact the user adds there is a write to an agent's data.
    """

    roots: tuple[str, ...] = ()
    places: tuple[str, ...] = ()

    @classmethod
    def of(
        cls,
        roots: Iterable[str | os.PathLike[str]],
        places: Iterable[str | os.PathLike[str]] = (),
    ) -> OwnFiles:
        """The rule for these folders (normalised absolute paths)."""
        return cls(tuple(_norm(r) for r in roots), tuple(_norm(p) for p in places))

    def owner(self, path: str) -> str:
        """:data:`MEMLENS` for memlens's own file, else :data:`AGENT`."""
        where = _norm(path)
        if _within(where, self.places) or not _within(where, self.roots):
            return AGENT
        return MEMLENS
