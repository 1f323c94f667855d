"""numpy's OpenBLAS thread count, held to one thread where more only cost.

A matrix-vector product over a warm store (a few thousand to 20,000 rows of 384
floats) takes a fraction of a millisecond on one thread; a second OpenBLAS thread
then only adds its wake-up, and on a busy machine (two cores, the agent running) it
spins for its share: a recall of 0.2 ms took 1.5 ms in the eval benchmark that way.
:data:`BLAS` finds OpenBLAS's ``set/get_num_threads`` in numpy's bundled library and
:meth:`BlasThreads.single` holds it to one thread inside a ``with`` block (nested and
concurrent blocks share the hold; the caller's setting comes back when the last
leaves). Without the library (another BLAS), it does nothing.
"""

from __future__ import annotations

import ctypes
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Iterator


class BlasThreads:
    """Holds numpy's OpenBLAS to one thread: our threads share the cores, or it is small."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users = self._saved = 0
        self._set: Any = None
        self._get: Any = None
        self.available = False
        root = Path(np.__file__).parent
        for lib in [*root.parent.glob("numpy.libs/*openblas*"), *root.glob(".dylibs/*openblas*")]:
            try:
                dll = ctypes.CDLL(str(lib))
            except OSError:
                continue
            for name in ("scipy_openblas_{}_num_threads64_", "openblas_{}_num_threads64_",
                         "openblas_{}_num_threads"):  # fmt: skip
                if hasattr(dll, name.format("set")) and hasattr(dll, name.format("get")):
                    self._set, self._get = dll[name.format("set")], dll[name.format("get")]
                    self.available = True
                    return

    @contextmanager
    def single(self) -> Iterator[None]:
        """One BLAS thread inside, the caller's setting back when the last user leaves."""
        if not self.available:
            yield
            return
        with self._lock:
            if self._users == 0:
                self._saved = int(self._get())
                self._set(1)
            self._users += 1
        try:
            yield
        finally:
            with self._lock:
                self._users -= 1
                if self._users == 0:
                    self._set(self._saved)


BLAS = BlasThreads()
"""The process's OpenBLAS thread control."""
