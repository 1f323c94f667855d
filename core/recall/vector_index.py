"""A growable matrix of unit vectors with cosine top-k (numpy ``argpartition``)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


class VectorIndex:
    """Rows are slots; a slot without a vector never ranks.

    The matrix grows by doubling, so adding a vector copies nothing in the
    common case (amortised O(dim) per add).
    """

    def __init__(self, dim: int, capacity: int = 1024) -> None:
        self.dim = dim
        self._mat = np.zeros((max(capacity, 1), dim), dtype=np.float32)
        self._has = np.zeros(max(capacity, 1), dtype=bool)
        self._n = 0

    @property
    def slots(self) -> int:
        """Slots in use (with or without a vector)."""
        return self._n

    @property
    def matrix(self) -> npt.NDArray[np.float32]:
        """A view of the rows in use."""
        return self._mat[: self._n]

    def count(self) -> int:
        """Slots that hold a vector."""
        return int(self._has[: self._n].sum())

    def has(self, slot: int) -> bool:
        """Whether *slot* holds a vector."""
        return slot < self._n and bool(self._has[slot])

    def _grow(self, need: int) -> None:
        if need <= len(self._mat):
            return
        cap = len(self._mat)
        while cap < need:
            cap *= 2
        mat = np.zeros((cap, self.dim), dtype=np.float32)
        mat[: self._n] = self._mat[: self._n]
        has = np.zeros(cap, dtype=bool)
        has[: self._n] = self._has[: self._n]
        self._mat, self._has = mat, has

    def reserve(self, slot: int) -> None:
        """Make sure *slot* exists (rows between stay empty)."""
        self._grow(slot + 1)
        self._n = max(self._n, slot + 1)

    def set(self, slot: int, vector: npt.ArrayLike) -> None:
        """Store a vector at *slot* (normalised to unit length; zero stays empty)."""
        self.reserve(slot)
        vec = np.asarray(vector, dtype=np.float32).reshape(-1)
        if vec.shape[0] != self.dim:
            raise ValueError(f"vector has {vec.shape[0]} dims, the index {self.dim}")
        norm = float(np.linalg.norm(vec))
        if norm == 0:
            self._mat[slot] = 0
            self._has[slot] = False
            return
        self._mat[slot] = vec / norm
        self._has[slot] = True

    def set_many(self, slots: npt.NDArray[np.int64], vectors: npt.NDArray[np.float32]) -> None:
        """Store many vectors at once (rows normalised)."""
        if len(slots) == 0:
            return
        self.reserve(int(slots.max()))
        norms = np.linalg.norm(vectors, axis=1)
        ok = norms > 0
        self._mat[slots[ok]] = vectors[ok] / norms[ok, None]
        self._has[slots[ok]] = True
        self._has[slots[~ok]] = False

    def clear(self, slot: int) -> None:
        """Forget the vector at *slot*."""
        if slot < self._n:
            self._mat[slot] = 0
            self._has[slot] = False

    def cosine(self, query: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """Cosine of *query* (unit length) with every slot; empty slots give 0."""
        return self._mat[: self._n] @ query

    def top(
        self,
        query: npt.NDArray[np.float32],
        k: int,
        mask: npt.NDArray[np.bool_] | None = None,
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """The *k* slots most similar to *query*, best first (only slots with vectors)."""
        sims = self.cosine(query)
        allowed = self._has[: self._n] if mask is None else self._has[: self._n] & mask[: self._n]
        cand = np.flatnonzero(allowed)
        if len(cand) == 0 or k <= 0:
            return cand[:0], sims[:0]
        if len(cand) > k:
            part = np.argpartition(-sims[cand], k - 1)[:k]
            cand = cand[part]
        order = np.argsort(-sims[cand], kind="stable")
        chosen = cand[order]
        return chosen, sims[chosen]
