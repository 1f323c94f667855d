"""An incremental BM25 index whose scores equal rank-bm25's ``BM25Okapi``.

rank-bm25 rebuilds everything on every add and scans every document per query;
the agent appends all the time and memlens searches on every keystroke. This
index keeps postings per term, so adding a document touches only its own terms
and a query touches only the postings of its terms. The score is BM25Okapi's:

    idf(t) = ln(N - df + 0.5) - ln(df + 0.5), and a negative idf becomes
             epsilon * (mean idf over every term of the corpus)
    score(d, q) = sum over q's tokens of idf * tf * (k1 + 1) /
                  (tf + k1 * (1 - b + b * len(d) / avgdl))

The mean idf is kept exact in O(distinct df values) through a histogram of
document frequencies, updated as documents come and go.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from collections.abc import Sequence

K1 = 1.5
B = 0.75
EPSILON = 0.25


class BM25Index:
    """Documents are integer slots ``0..n-1`` (assigned by :meth:`add`)."""

    def __init__(self, k1: float = K1, b: float = B, epsilon: float = EPSILON) -> None:
        self.k1 = k1
        self.b = b
        self.epsilon = epsilon
        self._postings: dict[str, tuple[array[int], array[int]]] = {}
        self._df: dict[str, int] = {}
        self._df_hist: Counter[int] = Counter()
        self._doc_terms: list[dict[str, int] | None] = []
        self._doc_len = array("d")
        self._alive = bytearray()
        self._n = 0
        self._total_len = 0.0
        self._mean_idf: float | None = None
        # Query-time caches, dropped when the corpus changes under them.
        self._norm: npt.NDArray[np.float64] | None = None
        self._alive_np: npt.NDArray[np.float64] | None = None
        self._term_arrays: dict[str, tuple[npt.NDArray[np.intp], npt.NDArray[np.float64]]] = {}

    # -- building ----------------------------------------------------------------
    def add(self, tokens: Sequence[str]) -> int:
        """Add a document; returns its slot."""
        slot = len(self._doc_terms)
        counts = dict(Counter(tokens))
        postings, df, hist = self._postings, self._df, self._df_hist
        for term, tf in counts.items():
            post = postings.get(term)
            if post is None:
                post = postings[term] = (array("i"), array("i"))
            post[0].append(slot)
            post[1].append(tf)
            old = df.get(term, 0)
            if old:
                left = hist[old] - 1
                if left:
                    hist[old] = left
                else:
                    del hist[old]
            df[term] = old + 1
            hist[old + 1] += 1
            self._term_arrays.pop(term, None)
        self._doc_terms.append(counts)
        self._doc_len.append(float(len(tokens)))
        self._alive.append(1)
        self._n += 1
        self._total_len += len(tokens)
        self._mean_idf = None
        self._norm = None
        self._alive_np = None
        return slot

    def add_many(self, documents: Sequence[Sequence[str]]) -> range:
        """Add many documents at once (a faster path for opening a store)."""
        first = len(self._doc_terms)
        grow: dict[str, tuple[list[int], list[int]]] = {}
        for offset, tokens in enumerate(documents):
            slot = first + offset
            counts = dict(Counter(tokens))
            for term, tf in counts.items():
                lists = grow.get(term)
                if lists is None:
                    lists = grow[term] = ([], [])
                lists[0].append(slot)
                lists[1].append(tf)
            self._doc_terms.append(counts)
            self._doc_len.append(float(len(tokens)))
            self._total_len += len(tokens)
        self._alive.extend(b"\x01" * len(documents))
        self._n += len(documents)
        df, hist = self._df, self._df_hist
        for term, (slots, tfs) in grow.items():
            post = self._postings.get(term)
            if post is None:
                post = self._postings[term] = (array("i"), array("i"))
            post[0].extend(slots)
            post[1].extend(tfs)
            old = df.get(term, 0)
            if old:
                hist[old] -= 1
                if not hist[old]:
                    del hist[old]
            df[term] = old + len(slots)
            hist[old + len(slots)] += 1
            self._term_arrays.pop(term, None)
        self._mean_idf = None
        self._norm = None
        self._alive_np = None
        return range(first, first + len(documents))

    def remove(self, slot: int) -> None:
        """Remove a document (its slot is not reused)."""
        counts = self._doc_terms[slot]
        if counts is None:
            return
        for term in counts:
            self._bump(term, -1)
        self._doc_terms[slot] = None
        self._alive[slot] = 0
        self._n -= 1
        self._total_len -= self._doc_len[slot]
        self._mean_idf = None
        self._norm = None
        self._alive_np = None

    def _bump(self, term: str, delta: int) -> None:
        old = self._df.get(term, 0)
        new = old + delta
        if old:
            self._df_hist[old] -= 1
            if not self._df_hist[old]:
                del self._df_hist[old]
        if new:
            self._df[term] = new
            self._df_hist[new] += 1
        else:
            self._df.pop(term, None)

    # -- statistics -------------------------------------------------------------
    @property
    def size(self) -> int:
        """Live documents."""
        return self._n

    @property
    def slots(self) -> int:
        """Slots handed out (live and removed)."""
        return len(self._doc_terms)

    def avgdl(self) -> float:
        """Mean document length over live documents."""
        return self._total_len / self._n if self._n else 0.0

    def _raw_idf(self, df: int) -> float:
        return math.log(self._n - df + 0.5) - math.log(df + 0.5)

    def mean_idf(self) -> float:
        """Mean raw idf over every term of the corpus (rank-bm25's average_idf)."""
        if self._mean_idf is None:
            terms = sum(self._df_hist.values())
            total = sum(count * self._raw_idf(df) for df, count in self._df_hist.items())
            self._mean_idf = total / terms if terms else 0.0
        return self._mean_idf

    def idf(self, term: str) -> float:
        """BM25Okapi idf of *term* (0 for a term not in the corpus)."""
        df = self._df.get(term)
        if not df:
            return 0.0
        value = self._raw_idf(df)
        return self.epsilon * self.mean_idf() if value < 0 else value

    def df(self, term: str) -> int:
        """Documents containing *term*."""
        return self._df.get(term, 0)

    # -- scoring ------------------------------------------------------------------
    def _arrays(self, term: str) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float64]] | None:
        cached = self._term_arrays.get(term)
        if cached is None:
            post = self._postings.get(term)
            if post is None:
                return None
            docs = np.array(post[0], dtype=np.intp)
            tf = np.array(post[1], dtype=np.float64)
            cached = self._term_arrays[term] = (docs, tf)
        return cached

    def _doc_norm(self) -> npt.NDArray[np.float64]:
        # k1 * (1 - b + b * len / avgdl) for every slot, kept until the corpus changes
        if self._norm is None:
            lengths = np.array(self._doc_len, dtype=np.float64)
            avgdl = self.avgdl()
            self._norm = self.k1 * (1 - self.b + self.b * lengths / avgdl) if avgdl else lengths * 0
        return self._norm

    def scores(self, query: Sequence[str]) -> npt.NDArray[np.float64]:
        """Score of every slot for *query* (removed slots score 0)."""
        out = np.zeros(len(self._doc_terms), dtype=np.float64)
        if not self._n:
            return out
        norm = self._doc_norm()
        for term in query:  # a repeated query token counts again, as in rank-bm25
            idf = self.idf(term)
            arrays = self._arrays(term) if idf else None
            if arrays is None:
                continue
            docs, tf = arrays
            out[docs] += idf * tf * (self.k1 + 1) / (tf + norm[docs])  # each doc once per term
        if len(self._alive) != self._n:
            if self._alive_np is None:
                self._alive_np = np.frombuffer(bytes(self._alive), dtype=np.uint8).astype(
                    np.float64
                )
            out *= self._alive_np
        return out

    def top(
        self, query: Sequence[str], k: int, mask: npt.NDArray[np.bool_] | None = None
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """The *k* best slots with a positive score (optionally within *mask*)."""
        scores = self.scores(query)
        if mask is not None:
            scores = np.where(mask[: len(scores)], scores, 0.0)
        positive = np.flatnonzero(scores > 0)
        if len(positive) > k:
            part = np.argpartition(-scores[positive], k - 1)[:k]
            positive = positive[part]
        order = np.argsort(-scores[positive], kind="stable")
        chosen = positive[order]
        return chosen, scores[chosen]
