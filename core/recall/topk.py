"""The k best of a score array, ties to the earlier slot: recall's one top-k rule.

A search takes its candidates as the top ``2 * limit`` by cosine and the top
``2 * limit`` by BM25. Where scores tie at the cut (the same text in two sessions,
short texts, a BM25 query whose terms the tied segments hold equally), the earlier
slot (the older segment) is taken first: the order of a stable sort of every slot by
score, which is what the agent's JavaScript ``Array.prototype.sort`` gives, what the
"why not" explanation's full ranking uses (:mod:`core.recall.rankings`) and what the
lab's rank-bm25 reference row uses. ``argpartition`` (the rule before) keeps an
arbitrary one of the tied, so a segment could be ranked inside the cut-off by the
explanation and still not be a candidate.

:func:`best_k` gives exactly that stable sort's first k without sorting every slot:
the values at or beyond a threshold read from an evenly spaced sample (about
``3 x (k + 1)`` of them: a hundred of 20,000 for k = 16) are the only ones ordered,
and the threshold is only used when at least k values reach it, so that every value
tied with the k-th is among them.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

SAMPLE = 512
"""Values sampled (evenly spaced) for the threshold of :func:`best_k`."""
SAMPLE_RANK = 3
"""The threshold: the sample's 3rd best, or lower so that about 3 x (k + 1) values reach it."""
SORTED = 256
"""Candidates sorted whole; more are first cut to those at or before the k-th best."""

EMPTY = np.empty(0, dtype=np.intp)


def best_k(keys: npt.NDArray[np.floating], k: int, bound: float = np.inf) -> npt.NDArray[np.intp]:
    """Positions of the *k* smallest *keys* below *bound*, smallest first, ties by position.

    Exactly ``np.argsort(keys[sel], kind="stable")[:k]`` mapped back to positions,
    where ``sel`` are the positions whose key is below *bound* (a NaN key is never
    below it: never taken). Fewer than k such keys: all of them. Callers pass negated
    scores (the best score first) and a bound of 0 for "a positive score only".
    """
    n = len(keys)
    if k <= 0 or n == 0:
        return EMPTY
    if n > 4 * SAMPLE:
        sample = keys[:: n // SAMPLE]
        m = len(sample)
        rank = min(m, max(SAMPLE_RANK, -(-SAMPLE_RANK * (k + 1) * m // n)))
        threshold = np.partition(sample, rank - 1)[rank - 1]
        if threshold < bound:  # a NaN threshold (the sample's NaNs sort last) is not
            cand = np.flatnonzero(keys <= threshold)
            if len(cand) >= k:  # the k-th smallest and all its ties are in cand
                return _first(keys, cand, k)
    return _first(keys, np.flatnonzero(keys < bound), k)


def _first(
    keys: npt.NDArray[np.floating], cand: npt.NDArray[np.intp], k: int
) -> npt.NDArray[np.intp]:
    """The first *k* of the ascending positions *cand* in (key, position) order."""
    vals = keys[cand]
    if len(cand) > SORTED and len(cand) > k:
        kth = np.partition(vals, k - 1)[k - 1]
        keep = np.flatnonzero(vals <= kth)  # the k best and every value tied with the k-th
        cand, vals = cand[keep], vals[keep]
    order = np.argsort(vals, kind="stable")[:k]
    return cand[order]
