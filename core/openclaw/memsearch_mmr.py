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
    from core.openclaw.memsearch_records import MemoryCandidate

MMR_LAMBDA = 0.7


def mmr_rerank(items: list[MemoryCandidate], lam: float = MMR_LAMBDA) -> list[MemoryCandidate]:
    """``mmrRerank``: greedy ``lam*relevance - (1-lam)*max Jaccard`` over snippet tokens.

    Over more than a few items, with finite scores, the same greedy choice is made
    on arrays (:func:`_mmr_arrays`): every Jaccard similarity at once, then one pass
    of vector operations per pick, with the same float64 arithmetic and tie order.
    """
    if len(items) <= 1:
        return list(items)
    lam = max(0.0, min(1.0, lam))
    if lam == 1:
        return sorted(items, key=lambda c: -c.score)
    if len(items) > MMR_ARRAY_MIN and all(math.isfinite(c.score) for c in items):
        return _mmr_arrays(items, lam)
    return _mmr_loop(items, lam)


MMR_ARRAY_MIN = 8
"""Above this many items MMR runs on arrays (below, the loop is as fast)."""


def _relevance(items: list[MemoryCandidate]) -> list[float]:
    hi, lo = max(c.score for c in items), min(c.score for c in items)
    span = hi - lo
    return [1.0 if span == 0 else (c.score - lo) / span for c in items]


def _mmr_arrays(items: list[MemoryCandidate], lam: float) -> list[MemoryCandidate]:
    """:func:`_mmr_loop` on arrays: the same picks, in the same order."""
    n = len(items)
    sim = _jaccard_matrix(items)
    rel = np.array(_relevance(items), dtype=np.float64)
    scores = np.array([c.score for c in items], dtype=np.float64)
    lam_rel = lam * rel  # the loop's lam * rel[i], the same products every time
    keep = 1 - lam
    # the loop's (1 - lam) * max_sim[i], kept as the max of (1 - lam) * sim: the same
    # numbers (rounding is monotonic, keep > 0)
    ksim = keep * sim
    # Lazy greedy: a heap of (-MMR, -score, index) as of each item's last look. An item's
    # MMR only falls as picks raise its penalty, so a popped item whose MMR has not
    # changed is the best (the order of the key is the loop's: the higher MMR, then the
    # higher score, then the earlier item); one that changed goes back with its new MMR.
    rel_list = lam_rel.tolist()
    heap = [(-m, -s, i) for i, (m, s) in enumerate(zip(rel_list, scores.tolist(), strict=True))]
    heapq.heapify(heap)
    penalty = np.zeros(n, dtype=np.float64)
    picked: list[MemoryCandidate] = []
    while heap:
        key, neg_score, i = heapq.heappop(heap)
        m = rel_list[i] - float(penalty[i])  # the loop's lam * rel - (1 - lam) * max_sim
        if -m != key:
            heapq.heappush(heap, (-m, neg_score, i))
            continue
        picked.append(items[i])
        np.maximum(penalty, ksim[i], out=penalty)
    return picked


def _jaccard_matrix(items: list[MemoryCandidate]) -> np.ndarray[Any, np.dtype[np.float64]]:
    """Every pair's ``jaccardSimilarity`` of snippet tokens (as the loop computes it).

    The tokens are the ids of a kept table (:mod:`core.openclaw.memsearch_chunks`) when
    it has every snippet; otherwise numbered by their hashes: as :data:`TOKEN_IDS`
    numbers them (equal tokens, equal numbers) exactly when there are as many distinct
    hashes as distinct tokens; otherwise by :data:`TOKEN_IDS`.
    """
    known = token_ids_of([c.hit.snippet for c in items])
    if known is not None:  # every snippet's token ids kept (ASCII: the same tokens)
        return _similarities(items, known[0].tolist(), *_number(known[1]))
    sets = [mmr_token_bytes(c.hit.snippet) for c in items]
    lengths = [len(t) for t in sets]
    flat = np.fromiter(map(hash, itertools.chain.from_iterable(sets)), np.int64, sum(lengths))
    order, local, counts = _number(flat)
    if counts.size != len(set[bytes]().union(*sets)):  # two tokens share a hash
        ids = TOKEN_IDS.of([c.hit.snippet for c in items])
        lengths = [a.size for a in ids]
        order, local, counts = _number(np.concatenate(ids) if ids else np.zeros(0, np.int64))
    return _similarities(items, lengths, order, local, counts)


def _similarities(
    items: list[MemoryCandidate], lengths: list[int], order: np.ndarray[Any, Any],
    local: np.ndarray[Any, Any], counts: np.ndarray[Any, Any],
) -> np.ndarray[Any, np.dtype[np.float64]]:  # fmt: skip
    """The Jaccard matrix of snippets with *lengths* tokens, numbered by :func:`_number`."""
    n = len(items)
    sizes = np.array(lengths, dtype=np.float64)
    rows = np.repeat(np.arange(n), lengths)
    inter = _intersections(n, rows, local, counts, order)
    union = sizes[:, None] + sizes[None, :] - inter
    sim: np.ndarray[Any, np.dtype[np.float64]] = np.divide(
        inter, union, out=np.zeros((n, n)), where=union > 0
    )
    empty = [i for i, size in enumerate(lengths) if size == 0]
    if empty:  # two token-less snippets are alike when their trimmed texts are
        texts = [lower_trimmed(items[i].hit.snippet) for i in empty]
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
