"""OpenClaw's MMR (``mmrRerank``): the loop, and the same picks on arrays.

Moved out of :mod:`core.openclaw.memsearch_rank`, which calls :func:`mmr_rerank` on
each exact-path tier and on the other hybrid candidates. ``mmrRerank`` greedily picks
the candidate of the highest ``lam * relevance - (1 - lam) * max Jaccard`` of its
snippet's tokens with those picked (ties to the higher score, then the earlier one).
"""

from __future__ import annotations

import heapq
import itertools
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from core.embed.blas import BLAS
from core.openclaw.memsearch_chunks import token_ids_of
from core.openclaw.memsearch_text import (
    TOKEN_IDS,
    jaccard_similarity,
    lower_trimmed,
    mmr_token_bytes,
    mmr_tokens,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

    from core.openclaw.memsearch_records import MemoryCandidate

MMR_LAMBDA = 0.7


def mmr_rerank(items: list[MemoryCandidate], lam: float = MMR_LAMBDA) -> list[MemoryCandidate]:
    """``mmrRerank``: greedy ``lam*relevance - (1-lam)*max Jaccard`` over snippet tokens.

    Over more than a few items, with finite scores, the same greedy choice is made
    on arrays (:func:`_mmr_arrays`): every Jaccard similarity at once, then one pass
    of vector operations per pick, with the same float64 arithmetic and tie order.
    """
    return list(mmr_picks(items, lam, lazy=False))


def mmr_picks(
    items: list[MemoryCandidate], lam: float = MMR_LAMBDA, *, lazy: bool = True
) -> Iterator[MemoryCandidate]:
    """:func:`mmr_rerank`'s picks, in its order; *lazy*: each made when asked for.

    A caller that needs only the first picks (the few results of a search among
    hundreds of candidates) pays for those: the first :data:`LAZY_PICKS` picks each
    compare one snippet with the others, the rest (when asked for) use the whole
    matrix. The picks are the same either way.
    """
    if len(items) <= 1:
        yield from items
        return
    lam = max(0.0, min(1.0, lam))
    if lam == 1:
        yield from sorted(items, key=lambda c: -c.score)
    elif len(items) > MMR_ARRAY_MIN and picks_every(items):
        yield from _mmr_arrays(items, lam, LAZY_PICKS if lazy else 0)
    else:
        yield from _mmr_loop(items, lam)


def picks_every(items: list[MemoryCandidate]) -> bool:
    """Whether every relevance is a number, so that MMR picks every item.

    The scores and their span must be finite (OpenClaw's loop passes over an item of
    NaN relevance: ``(score - min) / (max - min)`` of an infinite span, for one).
    """
    scores = [c.score for c in items]
    return all(math.isfinite(s) for s in scores) and (
        not scores or math.isfinite(max(scores) - min(scores))
    )


MMR_ARRAY_MIN = 8
"""Above this many items MMR runs on arrays (below, the loop is as fast)."""

LAZY_PICKS = 24
"""Picks made one similarity row at a time before the whole matrix is built (it costs
about 30 rows' time over ~400 snippets; a search's answer needs about as many picks as
results)."""


def _relevance(items: list[MemoryCandidate]) -> list[float]:
    hi, lo = max(c.score for c in items), min(c.score for c in items)
    span = hi - lo
    return [1.0 if span == 0 else (c.score - lo) / span for c in items]


def _mmr_arrays(
    items: list[MemoryCandidate], lam: float, by_rows: int = 0
) -> Iterator[MemoryCandidate]:
    """:func:`_mmr_loop` on arrays: the same picks, in the same order (see :func:`mmr_order`)."""
    scores = np.fromiter((c.score for c in items), dtype=np.float64, count=len(items))
    for i in mmr_order(scores, [c.hit.snippet for c in items], lam, by_rows):
        yield items[i]


def mmr_order(
    scores: np.ndarray[Any, np.dtype[np.float64]], snippets: list[str], lam: float,
    by_rows: int = 0,
) -> Iterator[int]:  # fmt: skip
    """The positions of :func:`_mmr_loop`'s picks among items of *scores* and *snippets*.

    Finite scores of a finite span (:func:`picks_every`), *lam* in [0, 1). The first
    *by_rows* picks take the best ``lam * rel - penalty`` directly (ties to the higher
    score, then the earlier item, as the loop) among the items that can be among them,
    and compare each pick with those (:class:`_SimilarityRows`); the rest go by a lazy
    heap over the matrix.
    """
    n = len(snippets)
    lo, span = scores.min(), scores.max() - scores.min()
    # the loop's relevance, (score - lo) / span: the same float64 operations
    rel = np.ones(n) if span == 0 else (scores - lo) / span
    lam_rel = lam * rel  # the loop's lam * rel[i], the same products every time
    keep = 1 - lam
    # the loop's (1 - lam) * max_sim[i], kept as the max of (1 - lam) * sim: the same
    # numbers (rounding is monotonic, keep > 0)
    penalty = np.zeros(n, dtype=np.float64)
    taken = np.zeros(n, dtype=bool)
    picks: list[int] = []
    if by_rows:
        limit = min(by_rows, n)
        # Only items whose lam * rel reaches the limit-th best's minus (1 - lam) can be
        # among the first *limit* picks: one of the limit best is still there at each, its
        # MMR at least its lam * rel - (1 - lam) (a penalty is (1 - lam) * sim, sim <= 1;
        # float subtraction is monotonic), and an item's MMR is at most its lam * rel.
        floor = np.partition(lam_rel, n - limit)[n - limit] - keep
        active = np.flatnonzero(lam_rel >= floor)
        sub = [snippets[j] for j in active.tolist()]
        rows = _SimilarityRows(sub, *_token_ids(sub))
        sub_rel, sub_scores = lam_rel[active], scores[active]
        sub_penalty = np.zeros(active.size, dtype=np.float64)
        sub_taken = np.zeros(active.size, dtype=bool)
        for _ in range(limit):
            mmr = sub_rel - sub_penalty
            mmr[sub_taken] = -np.inf
            tied = np.flatnonzero(mmr == mmr.max())
            k = int(tied[int(np.argmax(sub_scores[tied]))]) if tied.size > 1 else int(tied[0])
            sub_taken[k] = True
            picks.append(int(active[k]))
            yield picks[-1]
            np.maximum(sub_penalty, keep * rows.row(k), out=sub_penalty)
        if len(picks) == n:
            return
        taken[picks] = True
        penalty[active] = sub_penalty
    ksim = keep * _jaccard_matrix(snippets)
    if picks:  # the others' penalties from the picks so far (the rows' values: the same)
        others = np.ones(n, dtype=bool)
        others[active] = False
        if others.any():
            penalty[others] = ksim[picks][:, others].max(axis=0)
    # Lazy greedy: a heap of (-MMR, -score, index) as of each item's last look. An item's
    # MMR only falls as picks raise its penalty, so a popped item whose MMR has not
    # changed is the best (the order of the key is the loop's: the higher MMR, then the
    # higher score, then the earlier item); one that changed goes back with its new MMR.
    rel_list = lam_rel.tolist()
    now = (lam_rel - penalty).tolist()
    heap = [(-now[i], -float(scores[i]), i) for i in np.flatnonzero(~taken).tolist()]
    heapq.heapify(heap)
    while heap:
        key, neg_score, i = heapq.heappop(heap)
        m = rel_list[i] - float(penalty[i])  # the loop's lam * rel - (1 - lam) * max_sim
        if -m != key:
            heapq.heappush(heap, (-m, neg_score, i))
            continue
        yield i
        np.maximum(penalty, ksim[i], out=penalty)


class _SimilarityRows:
    """One snippet's Jaccard similarity with every snippet, the matrix's row, on demand."""

    def __init__(self, snippets: list[str], lengths: list[int], ids: np.ndarray[Any, Any]) -> None:
        self.n = len(snippets)
        self.sizes = np.array(lengths, dtype=np.float64)
        self.offsets = np.concatenate(([0], np.cumsum(lengths, dtype=np.int64)))
        self.ids = ids.astype(np.intp)  # (np.take: three times as fast as indexing)
        # each snippet's tokens counted by one reduceat over the non-empty ones
        self.filled = np.flatnonzero(self.sizes > 0)
        self.firsts = self.offsets[self.filled]
        self.mark = np.zeros(int(ids.max()) + 1 if ids.size else 0, dtype=np.uint8)
        self.empty = {i: lower_trimmed(snippets[i]) for i, size in enumerate(lengths) if size == 0}

    def row(self, i: int) -> np.ndarray[Any, np.dtype[np.float64]]:
        """:func:`_similarities`'s row *i*: the same divisions of the same counts."""
        mine = self.ids[self.offsets[i] : self.offsets[i + 1]]
        self.mark[mine] = 1
        inter = np.zeros(self.n)
        if self.firsts.size:
            shared = np.take(self.mark, self.ids)
            inter[self.filled] = np.add.reduceat(shared, self.firsts, dtype=np.int64)
        self.mark[mine] = 0
        union = self.sizes[i] + self.sizes - inter
        sim: np.ndarray[Any, np.dtype[np.float64]] = np.divide(
            inter, union, out=np.zeros(self.n), where=union > 0
        )
        if i in self.empty:  # two token-less snippets are alike when their trimmed texts are
            text = self.empty[i]
            for j, other in self.empty.items():
                sim[j] = float(text == other)
        return sim


def _jaccard_matrix(
    snippets: list[str], tokens: tuple[list[int], np.ndarray[Any, Any]] | None = None
) -> np.ndarray[Any, np.dtype[np.float64]]:
    """Every pair's ``jaccardSimilarity`` of snippet tokens (as the loop computes it).

    *tokens*: :func:`_token_ids` of *snippets*, when the caller has them.
    """
    lengths, ids = tokens if tokens is not None else _token_ids(snippets)
    return _similarities(snippets, lengths, *_number(ids))


def _token_ids(snippets: list[str]) -> tuple[list[int], np.ndarray[Any, Any]]:
    """Each snippet's count of distinct tokens, and their ids, snippet after snippet.

    The ids are small non-negative integers, equal for equal tokens: those of a kept
    table (:mod:`core.openclaw.memsearch_chunks`) when it has every snippet; otherwise
    the tokens' hashes numbered (:func:`_number`): as :data:`TOKEN_IDS` numbers them
    exactly when there are as many distinct hashes as distinct tokens; otherwise
    :data:`TOKEN_IDS`'s.
    """
    known = token_ids_of(snippets)
    if known is not None:  # every snippet's token ids kept (ASCII: the same tokens)
        return known[0].tolist(), known[1]
    sets = [mmr_token_bytes(s) for s in snippets]
    lengths = [len(t) for t in sets]
    flat = np.fromiter(map(hash, itertools.chain.from_iterable(sets)), np.int64, sum(lengths))
    _, local, counts = _number(flat)
    if counts.size != len(set[bytes]().union(*sets)):  # two tokens share a hash
        ids = TOKEN_IDS.of(snippets)
        lengths = [a.size for a in ids]
        _, local, _ = _number(np.concatenate(ids) if ids else np.zeros(0, np.int64))
    return lengths, local.astype(np.int32)


def _similarities(
    snippets: list[str], lengths: list[int], order: np.ndarray[Any, Any],
    local: np.ndarray[Any, Any], counts: np.ndarray[Any, Any],
) -> np.ndarray[Any, np.dtype[np.float64]]:  # fmt: skip
    """The Jaccard matrix of snippets with *lengths* tokens, numbered by :func:`_number`."""
    n = len(snippets)
    sizes = np.array(lengths, dtype=np.float64)
    rows = np.repeat(np.arange(n), lengths)
    inter = _intersections(n, rows, local, counts, order)
    union = sizes[:, None] + sizes[None, :] - inter
    sim: np.ndarray[Any, np.dtype[np.float64]] = np.divide(
        inter, union, out=np.zeros((n, n)), where=union > 0
    )
    empty = [i for i, size in enumerate(lengths) if size == 0]
    if empty:  # two token-less snippets are alike when their trimmed texts are
        texts = [lower_trimmed(snippets[i]) for i in empty]
        for a, i in enumerate(empty):
            for b, j in enumerate(empty):
                sim[i, j] = float(texts[a] == texts[b])
    return sim


def _number(
    flat: np.ndarray[Any, Any],
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Tokens (*flat*: their keys) numbered 0.. in key order: the stable sort, numbers, counts.

    As ``np.unique(flat, return_inverse=True)`` and ``argsort(inverse, stable)``, in one sort.
    Non-negative 32-bit ids (a kept table's) are sorted by their two 16-bit halves, the
    low then the high, each by numpy's stable radix sort: the same order, faster.
    """
    if flat.dtype == np.int32 and flat.size and int(flat.min()) >= 0:
        order = np.argsort((flat & 0xFFFF).astype(np.uint16), kind="stable")
        high = (flat >> 16).astype(np.uint16)
        if high.any():
            order = order[np.argsort(high[order], kind="stable")]
    else:
        order = np.argsort(flat, kind="stable")
    if not flat.size:
        return order, np.zeros(0, np.int64), np.zeros(0, np.int64)
    ranked = flat[order]
    first = np.empty(flat.size, dtype=bool)
    first[0] = True
    np.not_equal(ranked[1:], ranked[:-1], out=first[1:])
    number = np.cumsum(first) - 1  # of each token in sorted order
    local = np.empty(flat.size, dtype=np.int64)
    local[order] = number
    counts = np.diff(np.append(np.flatnonzero(first), flat.size))
    return order, local, counts


DENSE_TOKEN_MIN = 16
"""Tokens in this many snippets or more are counted by a matrix product, rarer ones by pairs."""


def _intersections(
    n: int, rows: np.ndarray[Any, Any], local: np.ndarray[Any, Any], counts: np.ndarray[Any, Any],
    order: np.ndarray[Any, Any],
) -> np.ndarray[Any, np.dtype[np.float64]]:  # fmt: skip
    """Shared tokens of every pair of snippets (token *local[k]* is in snippet *rows[k]*).

    *order* sorts the tokens by number, stably. Common tokens by a float32 matrix
    product (exact: small whole numbers), tokens of a few snippets by counting their
    pairs; tokens of one snippet share nothing.
    """
    posting = rows[order]  # the snippets of each token, token after token
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    pairs = []
    for c in range(2, DENSE_TOKEN_MIN):
        toks = np.flatnonzero(counts == c)
        if toks.size:
            group = posting[starts[toks][:, None] + np.arange(c)]  # (tokens, c) snippets
            pairs.append((group[:, :, None] * n + group[:, None, :]).ravel())
    flat = np.concatenate(pairs) if pairs else np.zeros(0, dtype=np.int64)
    inter = np.bincount(flat, minlength=n * n).reshape(n, n).astype(np.float64)
    dense = counts >= DENSE_TOKEN_MIN
    if dense.any():
        column = np.cumsum(dense) - 1
        pick = dense[local]
        member = np.zeros((n, int(dense.sum())), dtype=np.float32)
        member[rows[pick], column[local[pick]]] = 1.0
        with BLAS.single():  # small: a second BLAS thread would only spin
            inter += member @ member.T
    return inter


def _mmr_loop(items: list[MemoryCandidate], lam: float) -> list[MemoryCandidate]:
    """OpenClaw's loop, one item at a time."""
    tokens = [mmr_tokens(c.hit.snippet) for c in items]
    empty_text = [
        lower_trimmed(c.hit.snippet) if not t else None for c, t in zip(items, tokens, strict=True)
    ]
    rel = _relevance(items)
    max_sim = [0.0] * len(items)
    remaining = list(range(len(items)))
    picked: list[MemoryCandidate] = []
    while remaining:
        best, best_mmr = -1, -math.inf
        for i in remaining:
            m = lam * rel[i] - (1 - lam) * max_sim[i]
            if m > best_mmr or (
                m == best_mmr and items[i].score > (items[best].score if best >= 0 else -math.inf)
            ):
                best, best_mmr = i, m
        if best < 0:
            break
        picked.append(items[best])
        remaining.remove(best)
        for i in remaining:
            if not tokens[i] and not tokens[best]:
                sim = float(empty_text[i] == empty_text[best])
            else:
                sim = jaccard_similarity(tokens[i], tokens[best])
            max_sim[i] = max(max_sim[i], sim)
    return picked
