"""numpy's OpenBLAS thread count, held to one thread where more only cost.

A matrix-vector product over a warm store (a few thousand to 20,000 rows of 384
floats) takes a fraction of a millisecond on one thread; a second OpenBLAS thread
then only adds its wake-up, and on a busy machine (two cores, the agent running) it
spins for its share: a recall of 0.2 ms took 1.5 ms in the eval benchmark that way.
:data:`BLAS` finds OpenBLAS's ``set/get_num_threads`` in numpy's bundled library and
:meth:`BlasThreads.single` holds it to one thread inside a ``with`` block (nested and
concurrent blocks share the hold; the caller's setting comes back when the last
leaves). Without the library (another BLAS), it does nothing.

The two functions are called through ``ctypes.PyDLL``, holding the GIL (they return
at once): a ``CDLL`` call lets the GIL go, and a worker thread entering the block
while the caller runs Python then waited for the caller's switch interval to get it
back (the memory search's vector product started up to 1.5 ms late that way).
"""

from __future__ import annotations

import ctypes
import threading
from pathlib import Path
from typing import Any

import numpy as np


class BlasThreads:
    """Holds numpy's OpenBLAS to one thread: our threads share the cores, or it is small."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users = self._saved = 0
        self._set: Any = None
        self._get: Any = None
        self.available = False
        self._single = _Single(self)
        root = Path(np.__file__).parent
        for lib in [*root.parent.glob("numpy.libs/*openblas*"), *root.glob(".dylibs/*openblas*")]:
            try:
                dll = ctypes.PyDLL(str(lib))  # keeps the GIL: see the module docstring
            except OSError:
                continue
            for name in ("scipy_openblas_{}_num_threads64_", "openblas_{}_num_threads64_",
                         "openblas_{}_num_threads"):  # fmt: skip
                if hasattr(dll, name.format("set")) and hasattr(dll, name.format("get")):
                    self._set, self._get = dll[name.format("set")], dll[name.format("get")]
                    self.available = True
                    return

    def single(self) -> _Single:
        """One BLAS thread inside a ``with`` block, the caller's setting back after it.

        Nested and concurrent blocks share the hold; the setting comes back when the
        last leaves. A plain context manager: a recall enters it once per search.
        """
        return self._single

    def _enter(self) -> None:
        if not self.available:
            return
        with self._lock:
            if self._users == 0:
                self._saved = int(self._get())
                if self._saved != 1:
                    self._set(1)
            self._users += 1

    def _exit(self) -> None:
        if not self.available:
            return
        with self._lock:
            self._users -= 1
            if self._users == 0 and self._saved != 1:
                self._set(self._saved)


class _Single:
    """The context manager of :meth:`BlasThreads.single` (one per :class:`BlasThreads`)."""

    __slots__ = ("_owner",)

    def __init__(self, owner: BlasThreads) -> None:
        self._owner = owner

    def __enter__(self) -> None:
        self._owner._enter()

    def __exit__(self, *exc: object) -> None:
        self._owner._exit()


BLAS = BlasThreads()
"""The process's OpenBLAS thread control."""
