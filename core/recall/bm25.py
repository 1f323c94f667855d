"""BM25 scoring, the one engine behind recall and smart trim (figures equal rank-bm25's).

Two ways in, one set of formulas (the module-level functions below):

* :class:`BM25Index`, incremental, for the warm store that recall searches;
* :func:`bm25_scores`, a one-shot corpus of texts scored for one query, for smart
  trim (the texts' token ids come from :mod:`core.recall.token_table`, memoised).


rank-bm25 rebuilds everything on every add and scans every document per query;
the agent appends all the time and memlens searches on every keystroke. This
index keeps postings per term, so adding a document touches only its own terms
and a query touches only the postings of its terms. The score is BM25Okapi's:

    idf(t) = ln(N - df + 0.5) - ln(df + 0.5), and a negative idf becomes
             epsilon * (mean idf over every term of the corpus)
    score(d, q) = sum over q's tokens of idf * tf * (k1 + 1) /
                  (tf + k1 * (1 - b + b * len(d) / avgdl))

The index's mean idf is kept exact in O(distinct df values) through a histogram of
document frequencies, updated as documents come and go.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from core.recall.token_table import TABLE
from core.recall.topk import best_k

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from core.recall.token_table import TextTerms, TokenTable

K1 = 1.5
B = 0.75
EPSILON = 0.25
CONTRIB_CACHE = 1 << 21
"""Score shares (8 bytes each) of query terms kept between changes of the corpus."""
DENSE_SHARE = 4
"""A term in more than 1 / 4 of the slots keeps a share for every slot (zeros included)."""


def raw_idf(n: int, df: int) -> float:
    """BM25Okapi's idf, ``ln(N - df + 0.5) - ln(df + 0.5)``, before a negative one is floored."""
    return math.log(n - df + 0.5) - math.log(df + 0.5)


def mean_idf(n: int, df_histogram: Iterable[tuple[int, int]]) -> float:
    """Mean raw idf over every term, from ``(document frequency, terms with it)`` pairs."""
    terms = 0
    total = 0.0
    for df, count in df_histogram:
        terms += count
        total += count * raw_idf(n, df)
    return total / terms if terms else 0.0


def length_norm(
    lengths: npt.NDArray[np.float64], avgdl: float, k1: float = K1, b: float = B
) -> npt.NDArray[np.float64]:
    """``k1 * (1 - b + b * len / avgdl)`` for every document (0 when avgdl is 0)."""
    return k1 * (1 - b + b * lengths / avgdl) if avgdl else lengths * 0


def term_scores(
    idf: float, tf: npt.NDArray[np.float64], norm: npt.NDArray[np.float64], k1: float = K1
) -> npt.NDArray[np.float64]:
    """One query term's share of the score of documents with term counts *tf*."""
    return idf * tf * (k1 + 1) / (tf + norm)


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
        self._contrib: dict[str, tuple[npt.NDArray[np.intp] | None, npt.NDArray[np.float64]]] = {}
        self._contrib_size = 0

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
        self._changed()
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
        self._changed()
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
        self._changed()

    def _changed(self) -> None:
        # idf and the length norms move with every document: drop what depends on them
        self._mean_idf = None
        self._norm = None
        self._alive_np = None
        self._contrib.clear()
        self._contrib_size = 0

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

    def mean_idf(self) -> float:
        """Mean raw idf over every term of the corpus (rank-bm25's average_idf)."""
        if self._mean_idf is None:
            self._mean_idf = mean_idf(self._n, self._df_hist.items())
        return self._mean_idf

    def idf(self, term: str) -> float:
        """BM25Okapi idf of *term* (0 for a term not in the corpus)."""
        df = self._df.get(term)
        if not df:
            return 0.0
        value = raw_idf(self._n, df)
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

    def _contribution(
        self, term: str
    ) -> tuple[npt.NDArray[np.intp] | None, npt.NDArray[np.float64]] | None:
        """*term*'s share of the scores: of the documents holding it, or of every slot.

        ``(docs, shares)``, or ``(None, shares of every slot)`` for a term in more than
        a quarter of the slots, whose dense sum is cheaper than the scattered one. Kept
        until the corpus changes.
        """
        found = self._contrib.get(term)
        if found is None:
            idf = self.idf(term)
            arrays = self._arrays(term) if idf else None
            if arrays is None:
                return None
            docs, tf = arrays
            share = term_scores(idf, tf, self._doc_norm()[docs], self.k1)
            slots = len(self._doc_terms)
            size = len(docs)
            if size * DENSE_SHARE > slots:
                every = np.zeros(slots, dtype=np.float64)
                every[docs] = share  # x + 0.0 is x: the sum is the scattered one's
                found, size = (None, every), slots
            else:
                found = (docs, share)
            if self._contrib_size + size > CONTRIB_CACHE:
                self._contrib.clear()
                self._contrib_size = 0
            self._contrib[term] = found
            self._contrib_size += size
        return found

    def _doc_norm(self) -> npt.NDArray[np.float64]:
        # kept until the corpus changes
        if self._norm is None:
            lengths = np.array(self._doc_len, dtype=np.float64)
            self._norm = length_norm(lengths, self.avgdl(), self.k1, self.b)
        return self._norm

    def scores(self, query: Sequence[str]) -> npt.NDArray[np.float64]:
        """Score of every slot for *query* (removed slots score 0)."""
        return self._sum(query, negate=False)

    def _sum(self, query: Sequence[str], *, negate: bool) -> npt.NDArray[np.float64]:
        # Negated as it is summed for top(): -(a + b) is (-a) - b exactly (rounding to
        # nearest is symmetric), so top() gets its keys (best first) without a pass more.
        out = np.zeros(len(self._doc_terms), dtype=np.float64)
        if not self._n:
            return out
        for term in query:  # a repeated query token counts again, as in rank-bm25
            found = self._contribution(term)
            if found is None:
                continue
            docs, share = found
            if docs is None:
                (np.subtract if negate else np.add)(out, share, out=out)
            elif negate:
                out[docs] -= share  # each doc once per term
            else:
                out[docs] += share
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
        """The *k* best slots with a positive score (optionally within *mask*), best first.

        Ties go to the earlier slot (:func:`core.recall.topk.best_k`).
        """
        neg = self._sum(query, negate=True)
        if mask is not None:
            neg = np.where(mask[: len(neg)], neg, 0.0)
        chosen = best_k(neg, k, 0.0)
        return chosen, -neg[chosen]


# -- a one-shot corpus ------------------------------------------------------------
def bm25_scores(
    texts: Sequence[str], query: Sequence[str], table: TokenTable = TABLE
) -> npt.NDArray[np.float64]:
    """BM25Okapi scores of *texts* for the *query* tokens.

    The corpus is *texts* alone; a repeated query token counts again, as in
    rank-bm25. Token ids and counts of each text come from *table* (memoised), so
    no per-text dictionary is built.
    """
    with table.lock:  # the ids below must not be renumbered midway
        return _batch_scores(table, table.terms(texts), query)


def _batch_scores(
    table: TokenTable, terms: list[TextTerms], query: Sequence[str]
) -> npt.NDArray[np.float64]:
    n = len(terms)
    out = np.zeros(n, dtype=np.float64)
    lengths = np.fromiter((t.length for t in terms), np.int64, n)
    if not n or not lengths.any():
        return out
    width = len(table)
    present_ids = np.concatenate([t.ids for t in terms])
    df = np.bincount(present_ids, minlength=width)
    norm = length_norm(lengths.astype(np.float64), float(lengths.sum()) / n)

    ids = [table.token_ids.get(t, -1) for t in query]
    wanted = sorted({i for i in ids if i >= 0 and df[i]})
    if not wanted:
        return out
    slot = np.full(width, -1, dtype=np.int64)
    slot[wanted] = np.arange(len(wanted))
    where = slot[present_ids]
    hit = np.flatnonzero(where >= 0)
    docs = np.repeat(np.arange(n, dtype=np.int64), [len(t.ids) for t in terms])[hit]
    tf = np.zeros((len(wanted), n), dtype=np.float64)
    tf[where[hit], docs] = np.concatenate([t.counts for t in terms])[hit]
    mean: float | None = None
    for i in ids:  # in query order, as rank-bm25 adds them
        if i < 0 or not df[i]:
            continue
        idf = raw_idf(n, int(df[i]))
        if idf < 0:
            if mean is None:
                values, counts = np.unique(df[df > 0], return_counts=True)
                mean = mean_idf(n, zip(values.tolist(), counts.tolist(), strict=True))
            idf = EPSILON * mean
        out += term_scores(idf, tf[slot[i]], norm)  # + 0.0 where the term is absent
    return out
