"""The float32 product that picks the rows a vector search rescores, in blocks.

:func:`core.openclaw.memsearch_vectors.top_rows` rescores in float64 every row of the
cached matrix whose float32 score is within a proven margin of the limit-th
(:func:`error_margin`). The product over a large matrix (50,000 x 384: 77 MB, about 5 ms
on one core) runs as a :class:`Scan`: fixed blocks of rows that a worker thread takes
from the front while the caller's keyword search runs, and the caller from the back
once it needs the scores, so that two cores read the end of the matrix together. Which
thread computes a block changes no answer.
"""

from __future__ import annotations

import math
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Protocol

import numpy as np

from core.embed.blas import BLAS

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy.typing as npt


class ScanMatrix(Protocol):
    """What a scan reads of :class:`core.openclaw.memsearch_vectors.VectorMatrix`."""

    @property
    def dims(self) -> int:
        """The vectors' length."""

    @property
    def rowids(self) -> npt.NDArray[np.int64]:
        """The matrix's rows (their chunks' rowids)."""

    @property
    def columns(self) -> npt.NDArray[np.float32]:
        """The unit vectors as float32 columns (``dims x rows``)."""


NORM_RANGE = (1e-150, 1e150)
"""Norms of a vector (stored or the query's) the matrix path takes; others go the slow way."""


def error_margin(dims: int) -> float:
    """Twice the largest gap between a float32 cosine of unit vectors and the exact one."""
    unit = 2.0**-24
    return 2 * (dims + 4) * unit * 1.01 + 1e-12


def prepare(
    cached: ScanMatrix, query_vec: Sequence[float]
) -> tuple[npt.NDArray[np.float64], float] | None:
    """The query as float64 and its norm; None when the matrix path must refuse it."""
    q = np.asarray(query_vec, dtype=np.float64)
    if q.ndim != 1 or q.size != cached.dims or not np.all(np.isfinite(q)):
        return None
    qnorm = math.sqrt(float(np.dot(q, q)))
    if not NORM_RANGE[0] < qnorm < NORM_RANGE[1]:
        return None
    return q, qnorm


SPLIT_BLOCKS = (0.7, 0.1, 0.2)
"""The product's blocks, as shares of the rows: the worker takes them from the front,
the caller from the back once its keyword search is done, so that two cores stream the
end of the matrix together (one core reads about 16 GB/s here, two nearly twice that).
The worker's first block is most of the product: the caller's keyword search, Python,
holds the GIL that the worker needs between blocks (a first block of half the rows was
no better than one block; this split, p50 9.7-9.9 -> 8.8-9.0 ms, alternated)."""

SPLIT_MIN = 1 << 22
"""Matrices of fewer values (rows x dims) are one block: their product is short."""


class Scan:
    """The float32 product of one query with a :class:`ScanMatrix`, in blocks.

    Fixed cuts per matrix (:data:`SPLIT_BLOCKS`), so the scores are the same bits
    whichever thread computes a block. The worker (:func:`start_top_rows`) calls
    :meth:`work`, the caller :meth:`keep`; each takes the blocks left, under a lock.
    """

    def __init__(self, cached: ScanMatrix, q: npt.NDArray[np.float64], qnorm: float,
                 limit: int) -> None:  # fmt: skip
        self.cached, self.limit, self.q, self.qnorm = cached, limit, q, qnorm
        self.query = (q / qnorm).astype(np.float32)
        n = cached.rowids.size
        shares = SPLIT_BLOCKS if n * cached.dims >= SPLIT_MIN else (1.0,)
        cuts = [0]
        for share in shares[:-1]:
            cuts.append(cuts[-1] + int(n * share))
        self.cuts = [*cuts, n]
        self.parts: list[npt.NDArray[np.float32] | None] = [None] * len(shares)
        self._lock = threading.Lock()
        self._front, self._back = 0, len(shares)
        self._future: Future[None] | None = None
        self.started = threading.Event()
        """Set as the worker begins (see :func:`start_top_rows`)."""

    def _take(self, front: bool) -> int | None:
        with self._lock:
            if self._front >= self._back:
                return None
            if front:
                self._front += 1
                return self._front - 1
            self._back -= 1
            return self._back

    def _run(self, k: int) -> None:
        with BLAS.single():  # a second BLAS thread would only wait (two cores, both busy)
            self.parts[k] = self.query @ self.cached.columns[:, self.cuts[k] : self.cuts[k + 1]]

    def work(self) -> None:
        """The worker's share: blocks from the front until none is left."""
        self.started.set()
        while (k := self._take(True)) is not None:
            self._run(k)

    def keep(self) -> npt.NDArray[np.intp]:
        """Positions of the rows whose float32 score is within the error margin of the limit-th.

        Runs the blocks the worker has not taken, then waits for those it has.
        """
        while (k := self._take(False)) is not None:
            self._run(k)
        with self._lock:
            took = self._front > 0  # only the worker takes from the front
        if took and self._future is not None:
            self._future.result()
        n, limit = self.cached.rowids.size, self.limit
        if n <= limit:
            return np.arange(n)
        parts = [p for p in self.parts if p is not None]
        if len(parts) != len(self.parts):  # a block claimed and never done: no short answer
            raise RuntimeError("a block of the vector product is missing")
        approx = np.concatenate(parts)
        kth = float(np.partition(approx, n - limit)[n - limit])
        return np.flatnonzero(approx >= kth - error_margin(self.cached.dims))


_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()
_QUEUED = 0
"""Scans given to the worker and not finished (a server may search from several threads)."""


def start_top_rows(cached: ScanMatrix, query_vec: Sequence[float], limit: int) -> Scan | None:
    """Start ``top_rows``' matrix product in a worker thread; None if it would refuse.

    The product over a large index (50,000 x 384: 77 MB read, about 5 ms on one
    core) runs in BLAS without the GIL, so the caller's keyword search (SQLite and
    Python) runs meanwhile on the other core; the caller takes the blocks left when it
    needs the scores (:class:`Scan`); while the worker is on another thread's search,
    the caller takes them all. Pass the scan to
    :func:`~core.openclaw.memsearch_vectors.top_rows`: the answer is the same as without it.
    """
    prepared = prepare(cached, query_vec)
    if prepared is None:
        return None
    global _POOL, _QUEUED
    scan = Scan(cached, *prepared, limit)
    with _POOL_LOCK:
        if _QUEUED:  # the worker is on another search's product: the caller does it all
            return scan
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memlens-vectors")
        _QUEUED += 1
        scan._future = _POOL.submit(_work, scan)
    # The worker needs the GIL to reach the product, and the caller's keyword search,
    # mostly Python, would hold it until its first SQL statement or for the whole
    # switch interval (5 ms): waiting here lets it in (a few microseconds).
    scan.started.wait(_START_WAIT)
    return scan


def _work(scan: Scan) -> None:
    global _QUEUED
    try:
        scan.work()
    finally:
        with _POOL_LOCK:
            _QUEUED -= 1


_START_WAIT = 0.005
"""Seconds :func:`start_top_rows` waits at most for the idle worker to begin (it does in
microseconds): the switch interval it saves."""
