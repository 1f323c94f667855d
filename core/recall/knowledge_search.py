r"""Knowledge search, as memory-context's ``KnowledgeStore.search`` does it, with reasons.

The agent's rule (mode ``"idf"``, the default):

* Tokens: the text is split by ``([CJK]+)|([^\s CJK]+)`` (CJK = U+4E00-9FFF,
  U+3400-4DBF, U+F900-FAFF; ``\s`` is JavaScript's). A non-CJK run is one
  lower-cased token; a CJK run of one character is kept unless it is a stop word;
  a longer run becomes overlapping bigrams, a bigram dropped only when both of its
  characters are stop words (:data:`CJK_STOP`, 35 particles and pronouns).
* Documents are the *active* facts (neither superseded nor deleted); a fact's text
  is ``(content + " " + (context or "")).lower()``. ``df(t)`` counts the facts whose
  text's token set holds ``t``; ``idf(t) = ln((N + 1) / (df(t) + 1))``.
* Query tokens are deduplicated (first occurrence kept) and only those *known* to
  the IDF map (``df > 0``) count. A fact's score is the idf of the known query
  tokens that occur in its text *as substrings*, over the idf of all known query
  tokens (summed in query order, as the agent does). No known token, or a total of
  0 (every known token is in every fact), gives no results.
* Kept: ``score >= min_score`` (0.5); sorted by score, then newest first, then
  log order; cut to ``limit`` (10).

Mode ``"adaptive"`` is the rule of the seed design. With ``n`` = the number of
known query tokens, a fact is kept when the number of those tokens it contains is
at least ``n`` when ``n <= 2``, ``ceil(n / 2)`` when ``n <= 8`` and
``min(ceil(0.3 * n), 6)`` above; ``min_score`` is not used. Ranking is the same
idf score (0 for every fact when the known tokens' idf sums to 0, so the order is
then newest first), and the same ``limit`` applies.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from dataclasses import dataclass, replace
from itertools import pairwise
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from core.store.knowledge import Fact, KnowledgeLog

Mode = Literal["idf", "adaptive"]
Verdict = Literal[
    "hit",
    "unknown_fact",
    "not_active",
    "no_known_tokens",
    "no_weight",
    "below_min_score",
    "too_few_matches",
    "cut_by_limit",
]

DEFAULT_LIMIT = 10
DEFAULT_MIN_SCORE = 0.5

_CJK = "\u4e00-\u9fff\u3400-\u4dbf\uf900-\ufaff"
# JavaScript's \s (Python's differs: it adds \x1c-\x1f and \x85, lacks \ufeff).
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_TOKEN_RE = re.compile(f"([{_CJK}]+)|([^{_JS_SPACE}{_CJK}]+)")
_CHUNK_RE = re.compile(f"[^{_JS_SPACE}]+")
CJK_STOP = frozenset("的是了在我你他她它也都就和有这那不会到着过得地吗呢吧啊么与及把被让之其")
"""The agent's CJK stop words."""


def knowledge_tokens(text: str) -> list[str]:
    """Tokens of *text* in order, duplicates kept (the agent's ``tokenize``)."""
    tokens: list[str] = []
    for cjk, word in _TOKEN_RE.findall(text):
        if cjk:
            if len(cjk) == 1:
                if cjk not in CJK_STOP:
                    tokens.append(cjk)
                continue
            for a, b in pairwise(cjk):
                if a not in CJK_STOP or b not in CJK_STOP:
                    tokens.append(a + b)
        else:
            tokens.append(word.lower())
    return tokens


def fact_text(fact: Fact) -> str:
    """The lower-cased text a fact is searched in: content, a space, context."""
    return f"{fact.content} {fact.context or ''}".lower()


def adaptive_required(known: int) -> int:
    """How many of *known* query tokens a fact must contain in adaptive mode."""
    if known <= 2:
        return known
    if known <= 8:
        return (known + 1) // 2
    return min((3 * known + 9) // 10, 6)  # integer ceil(0.3 n): 0.3 * 10 is not 3.0


@dataclass(frozen=True, slots=True)
class TokenWeight:
    """A known query token, its document frequency and its idf."""

    token: str
    df: int
    idf: float


@dataclass(frozen=True, slots=True)
class QueryTerms:
    """How a query was read against the index."""

    tokens: tuple[str, ...]
    """Distinct query tokens, in query order."""
    weights: tuple[TokenWeight, ...]
    """The known ones (df > 0) with their idf, in query order."""
    ignored: tuple[str, ...]
    """Tokens no active fact contains as a token: they do not count."""
    total_weight: float
    active: int
    """N, the number of active facts."""


@dataclass(frozen=True, slots=True)
class KnowledgeHit:
    """One ranked fact and what made its score."""

    fact: Fact
    score: float
    rank: int
    """1-based position among all facts that passed the threshold."""
    matched: tuple[str, ...]
    missing: tuple[str, ...]
    weights: tuple[TokenWeight, ...]

    @property
    def idf(self) -> dict[str, float]:
        """Each known query token's idf."""
        return {w.token: w.idf for w in self.weights}

    def to_json(self) -> dict[str, Any]:
        """The hit as ``memlens knowledge --json`` and the MCP ``knowledge_search`` give it."""
        return {
            "id": self.fact.id,
            "type": self.fact.type,
            "content": self.fact.content,
            "context": self.fact.context,
            "score": self.score,
            "rank": self.rank,
            "matched": list(self.matched),
            "missing": list(self.missing),
            "idf": self.idf,
        }


@dataclass(frozen=True, slots=True)
class FactExplanation:
    """Why a fact is, or is not, a hit for a query."""

    fact_id: str
    verdict: Verdict
    message: str
    fact: Fact | None = None
    score: float | None = None
    rank: int | None = None
    passing: int = 0
    """How many facts passed the threshold (before the limit)."""
    matched: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    weights: tuple[TokenWeight, ...] = ()


@dataclass(frozen=True, slots=True)
class _Ranking:
    terms: QueryTerms
    masks: list[NDArray[np.bool_]]
    scores: NDArray[np.float64]
    order: NDArray[np.intp]
    """Passing slots, best first."""
    required: int


class KnowledgeIndex:
    """Knowledge search over a :class:`KnowledgeLog`, kept current incrementally.

    Each active fact's lowered text is kept and read once into the df map and
    into postings from every distinct whitespace-free chunk of the texts to the
    facts holding it. A query token has no whitespace, so it is a substring of a
    text exactly when it is a substring of one of its chunks: a token is found in
    the (much smaller) string of distinct chunks, and its facts are the union of
    those chunks' postings. A one-character token, in most chunks, is looked for
    in the texts instead. The facts of the last *cache_size* tokens are kept, and
    kept current by :meth:`update`.

    Call :meth:`update` with a fact's new state after each edit (or :meth:`sync`
    after a replay of appended lines); :meth:`rebuild` starts over from the log.
    """

    def __init__(self, log: KnowledgeLog, *, cache_size: int = 1024) -> None:
        self.log = log
        self.cache_size = cache_size
        self.rebuild()

    # -- maintenance --------------------------------------------------------
    def rebuild(self) -> None:
        """Index every fact of the log again."""
        self._slot_of: dict[str, int] = {}
        self._facts: list[Fact] = []
        self._texts: list[str] = []  # "" unless active
        self._ts = np.zeros(64, dtype=np.int64)
        self._live = np.zeros(64, dtype=np.bool_)
        self._df: dict[str, int] = {}
        self._active = 0
        self._chunk_id: dict[str, int] = {}
        self._chunk_bits: list[int] = []
        self._chunk_text: list[str] = []
        self._starts: list[int] = []
        self._blob_len = 0
        self._blob: str | None = ""
        self._cache: dict[str, int] = {}  # token -> slots bitmask, least recent first
        for fact in self.log.facts.values():
            self.update(fact)

    def sync(self) -> int:
        """Take in every fact whose state in the log changed; return how many."""
        changed = 0
        for fid, fact in self.log.facts.items():
            slot = self._slot_of.get(fid)
            if slot is None or self._facts[slot] is not fact:
                self.update(fact)
                changed += 1
        return changed

    def update(self, fact: Fact) -> None:
        """Index *fact*'s current state (new, edited, superseded, deleted, restored)."""
        slot = self._slot_of.get(fact.id)
        if slot is None:
            slot = len(self._facts)
            self._slot_of[fact.id] = slot
            self._facts.append(fact)
            self._texts.append("")
            if slot == len(self._ts):
                self._ts = np.concatenate([self._ts, np.zeros_like(self._ts)])
                self._live = np.concatenate([self._live, np.zeros_like(self._live)])
        else:
            self._index(slot, -1)
        self._facts[slot] = fact
        self._ts[slot] = fact.timestamp
        if fact.status == "active":
            self._texts[slot] = fact_text(fact)
            self._index(slot, 1)

    def _index(self, slot: int, sign: int) -> None:
        """Add (*sign* 1) or take out (-1) the active text of *slot*."""
        text = self._texts[slot]
        if not text:
            return
        df = self._df
        for t in set(knowledge_tokens(text)):
            left = df.get(t, 0) + sign
            if left:
                df[t] = left
            else:
                del df[t]
        bit = 1 << slot
        mask = bit if sign > 0 else ~bit
        chunk_bits = self._chunk_bits
        for chunk in set(_CHUNK_RE.findall(text)):
            k = self._chunk_id.get(chunk)
            if k is None:
                k = self._new_chunk(chunk)
            chunk_bits[k] = chunk_bits[k] | bit if sign > 0 else chunk_bits[k] & mask
        cache = self._cache
        for t, bits in cache.items():
            if t in text:
                cache[t] = bits | bit if sign > 0 else bits & mask
        self._live[slot] = sign > 0
        self._active += sign
        if sign < 0:
            self._texts[slot] = ""

    def _new_chunk(self, chunk: str) -> int:
        k = len(self._chunk_text)
        self._chunk_id[chunk] = k
        self._chunk_text.append(chunk)
        self._chunk_bits.append(0)
        self._starts.append(self._blob_len)
        self._blob_len += len(chunk) + 1
        self._blob = None
        return k

    # -- reading ------------------------------------------------------------
    @property
    def active(self) -> int:
        """N: how many active facts the IDF is over."""
        return self._active

    def df(self, token: str) -> int:
        """How many active facts hold *token* as a token."""
        return self._df.get(token, 0)

    def idf(self, token: str) -> float | None:
        """``ln((N + 1) / (df + 1))``, or None when no active fact holds *token*."""
        df = self._df.get(token, 0)
        return math.log((self._active + 1) / (df + 1)) if df else None

    def terms(self, query: str) -> QueryTerms:
        """The query's tokens, which of them count, and their weights."""
        tokens = tuple(dict.fromkeys(knowledge_tokens(query)))
        weights: list[TokenWeight] = []
        ignored: list[str] = []
        total = 0.0
        n1 = self._active + 1
        for t in tokens:
            df = self._df.get(t, 0)
            if df:
                w = math.log(n1 / (df + 1))
                weights.append(TokenWeight(t, df, w))
                total += w  # in query order, as the agent's reduce
            else:
                ignored.append(t)
        return QueryTerms(tokens, tuple(weights), tuple(ignored), total, self._active)

    def search(
        self,
        query: str,
        *,
        limit: int = DEFAULT_LIMIT,
        min_score: float = DEFAULT_MIN_SCORE,
        mode: Mode = "idf",
    ) -> list[KnowledgeHit]:
        """The best active facts for *query*, best first (see the module docstring).

        Parameters
        ----------
        query
            Free text; tokenised like the facts.
        limit
            At most this many hits.
        min_score
            Lowest score kept in ``"idf"`` mode (ignored in ``"adaptive"`` mode).
        mode
            ``"idf"``: the agent's rule. ``"adaptive"``: the seed design's count rule.
        """
        ranking = self._rank(query, min_score, mode)
        if ranking is None:
            return []
        hits = []
        for i, slot in enumerate(ranking.order[: max(limit, 0)].tolist()):
            matched, missing = _split(ranking, slot)
            hits.append(
                KnowledgeHit(
                    fact=self._facts[slot],
                    score=float(ranking.scores[slot]),
                    rank=i + 1,
                    matched=matched,
                    missing=missing,
                    weights=ranking.terms.weights,
                )
            )
        return hits

    def explain(
        self,
        query: str,
        fact_id: str,
        *,
        limit: int = DEFAULT_LIMIT,
        min_score: float = DEFAULT_MIN_SCORE,
        mode: Mode = "idf",
    ) -> FactExplanation:
        """Why the fact *fact_id* is or is not a hit of ``search`` with these arguments."""
        slot = self._slot_of.get(fact_id)
        if slot is None:
            return FactExplanation(fact_id, "unknown_fact", f"no fact with id {fact_id!r}")
        fact = self._facts[slot]
        if fact.status != "active":
            by = f" by {fact.superseded_by}" if fact.status == "superseded" else ""
            return FactExplanation(
                fact_id,
                "not_active",
                f"the fact is {fact.status}{by}: only active facts are searched",
                fact,
            )
        terms = self.terms(query)
        ranking = self._rank(query, min_score, mode, terms)
        if ranking is None:
            if not terms.weights:
                ignored = ", ".join(terms.ignored) or "none"
                return FactExplanation(
                    fact_id,
                    "no_known_tokens",
                    f"no query token is known to the IDF map (ignored: {ignored})",
                    fact,
                )
            return FactExplanation(
                fact_id,
                "no_weight",
                f"every known query token is in all {terms.active} active facts (idf 0)",
                fact,
                weights=terms.weights,
            )
        matched, missing = _split(ranking, slot)
        score = float(ranking.scores[slot])
        hits = ranking.order.tolist()
        base = FactExplanation(
            fact_id,
            "hit",
            "",
            fact,
            score=score,
            passing=len(hits),
            matched=matched,
            missing=missing,
            weights=terms.weights,
        )
        figures = _figures(ranking, slot)
        if slot not in hits:
            if mode == "adaptive":
                return replace(
                    base,
                    verdict="too_few_matches",
                    message=f"contains {len(matched)} of {len(terms.weights)} known query "
                    f"tokens, adaptive mode needs {ranking.required}; {figures}",
                )
            return replace(
                base,
                verdict="below_min_score",
                message=f"score {score:.4f} < minScore {min_score}: {figures}",
            )
        rank = hits.index(slot) + 1
        if rank > limit:
            return replace(
                base,
                verdict="cut_by_limit",
                rank=rank,
                message=f"rank {rank} of {len(hits)} passing facts (score {score:.4f}), "
                f"cut by limit {limit}",
            )
        return replace(
            base,
            rank=rank,
            message=f"hit at rank {rank} of {len(hits)} (score {score:.4f}): {figures}",
        )

    # -- internals ----------------------------------------------------------
    def _token_bits(self, token: str) -> int:
        """The slots whose text contains *token* as a substring, as a bitmask."""
        cache = self._cache
        bits = cache.pop(token, None)
        if bits is None:
            bits = self._scan_texts(token) if len(token) == 1 else self._scan_chunks(token)
        if self.cache_size > 0:
            cache[token] = bits  # now the most recent
            if len(cache) > self.cache_size:
                del cache[next(iter(cache))]
        return bits

    def _scan_chunks(self, token: str) -> int:
        if self._blob is None:
            self._blob = "\n".join(self._chunk_text) + "\n"
        blob, starts, bits_of = self._blob, self._starts, self._chunk_bits
        last = len(starts) - 1
        bits = 0
        pos = blob.find(token)
        while pos != -1:
            k = bisect_right(starts, pos) - 1
            bits |= bits_of[k]
            if k == last:
                break
            pos = blob.find(token, starts[k + 1])  # one hit per chunk is enough
        return bits

    def _scan_texts(self, token: str) -> int:
        found = np.zeros(len(self._texts), dtype=np.bool_)
        found[[i for i, text in enumerate(self._texts) if token in text]] = True
        return int.from_bytes(np.packbits(found, bitorder="little").tobytes(), "little")

    def _rank(
        self, query: str, min_score: float, mode: Mode, terms: QueryTerms | None = None
    ) -> _Ranking | None:
        terms = self.terms(query) if terms is None else terms
        if not terms.weights or (mode == "idf" and terms.total_weight <= 0):
            return None
        size = len(self._facts)
        nbytes = (size + 7) // 8
        ts, active = self._ts[:size], self._live[:size]
        match = np.zeros(size, dtype=np.float64)
        counts = np.zeros(size, dtype=np.int64)
        masks = []
        for tw in terms.weights:
            raw = np.frombuffer(self._token_bits(tw.token).to_bytes(nbytes, "little"), np.uint8)
            mask = np.unpackbits(raw, count=size, bitorder="little").view(np.bool_)
            masks.append(mask)
            match += mask * tw.idf  # + 0.0 where absent: the agent's sum, bit for bit
            counts += mask
        total = terms.total_weight
        scores = match / total if total > 0 else match
        required = 0
        if mode == "adaptive":
            required = adaptive_required(len(terms.weights))
            keep = active & (counts >= required)
        else:
            keep = active & (scores >= min_score)
        idx = np.flatnonzero(keep)
        order = idx[np.lexsort((idx, -ts[idx], -scores[idx]))]
        return _Ranking(terms, masks, scores, order, required)


def _split(ranking: _Ranking, slot: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    matched: list[str] = []
    missing: list[str] = []
    for tw, mask in zip(ranking.terms.weights, ranking.masks, strict=True):
        (matched if mask[slot] else missing).append(tw.token)
    return tuple(matched), tuple(missing)


def _figures(ranking: _Ranking, slot: int) -> str:
    parts = []
    got = 0.0
    for tw, mask in zip(ranking.terms.weights, ranking.masks, strict=True):
        found = bool(mask[slot])
        got += tw.idf if found else 0.0
        parts.append(f"{tw.token} {'found' if found else 'missing'} (idf {tw.idf:.4f})")
    total = ranking.terms.total_weight
    return f"{', '.join(parts)}; {got:.4f} of {total:.4f}"
