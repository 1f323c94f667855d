"""OpenClaw's lexical boost of keyword hits (``scoreFallbackKeywordResult``).

A hit's bm25 score plus: the share of query tokens found as whole tokens of the
chunk, their density, 0.18 per query token in the path, and up to 0.18 for the
chunk's length; capped at 1. Ported from OpenClaw 2026.9.6 (``dist/manager-search-*.mjs``)
and split from :mod:`core.openclaw.memsearch_keyword`, which uses it; the tokens of
recently seen chunks are kept, so a chunk found again is not tokenized again.
"""

from __future__ import annotations

import functools
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import regex

from core.openclaw.memsearch_text import ascii_words, search_tokens, utf16_len

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy.typing as npt

    from core.openclaw.memsearch_chunks import ChunkTokens
    from core.openclaw.memsearch_postings import BodyPostings


@functools.lru_cache(maxsize=4096)
def literal_pattern(value: str, whole: bool = False) -> regex.Pattern[str]:
    """*value* (NFC) as a case-insensitive literal; *whole*: the whole string (kept per value)."""
    literal = regex.escape(unicodedata.normalize("NFC", value))
    return regex.compile(f"^(?:{literal})$" if whole else literal, regex.IGNORECASE)


def boosted_score(matchers: Sequence[Matcher], path: str, text: str, fts_score: float,
                  path_score: float | None = None) -> float:  # fmt: skip
    """``scoreFallbackKeywordResult``: bm25 score plus OpenClaw's lexical boosts, capped at 1.

    *path_score*: :func:`path_boost` of *path*, when the caller has it already.
    """
    if not matchers:
        return fts_score
    plain, other, distinct, length = _text_tokens(text)
    overlap = sum(1 for word in matchers if _whole_token(word, plain, other))
    boost = path_boost(matchers, path) if path_score is None else path_score
    return boost_of_counts(len(matchers), overlap, distinct, length, fts_score, boost)


def boost_of_counts(
    matchers: int, overlap: int, distinct: int, length: int, fts_score: float, path_score: float
) -> float:
    """:func:`boosted_score` from counts: *overlap* of the *matchers* query tokens found.

    The text has *distinct* tokens and is *length* UTF-16 units long.
    """
    unique_overlap = overlap / matchers
    density = overlap / max(distinct, 1)
    length_boost = min(length / 160, 0.18)
    lexical = unique_overlap * 0.45 + density * 0.2 + path_score + length_boost
    return min(1.0, fts_score + lexical)


def _counts_boost(
    matchers: int, overlap: npt.NDArray[np.float64], distinct: npt.NDArray[np.int64],
    length: npt.NDArray[np.int64], fts_score: npt.NDArray[np.float64],
    path_score: npt.NDArray[np.float64],
) -> npt.NDArray[np.float64]:  # fmt: skip
    """:func:`boost_of_counts` of many hits, the same operations in the same order.

    Each float operation rounds as Python's does (IEEE doubles); Python's
    ``min(a, b)`` is ``b if b < a else a``, spelled so (a NaN stays as ``min`` leaves it).
    """
    unique_overlap = overlap / float(matchers)
    density = overlap / np.maximum(distinct, 1).astype(np.float64)
    by_length = length.astype(np.float64) / 160
    length_boost = np.where(0.18 < by_length, 0.18, by_length)
    lexical = unique_overlap * 0.45 + density * 0.2 + path_score + length_boost
    total = fts_score + lexical
    return np.where(total < 1.0, total, 1.0)


def boosted_scores(
    matchers: Sequence[Matcher], texts: Sequence[str], paths: Sequence[str],
    fts_scores: Sequence[float], path_scores: Sequence[float], tokens: ChunkTokens | None,
) -> list[float]:  # fmt: skip
    """:func:`boosted_score` of many hits; the texts in *tokens* without tokenizing them.

    Only when every query token is :attr:`Matcher.plain` (an ASCII text's token
    equals it exactly when its bytes are the token's); other texts and queries go
    one at a time through :func:`boosted_score`.
    """
    n = len(texts)
    rows = tokens.positions(texts) if tokens is not None and matchers else [None] * n
    known = [i for i, r in enumerate(rows) if r is not None]
    out: list[float | None] = [None] * n
    if known and tokens is not None and all(m.plain for m in matchers):
        at = [rows[i] or 0 for i in known]
        wanted = [tokens.vocab[m.raw] for m in matchers if m.raw in tokens.vocab]
        counts = tokens.counts(at, wanted).astype(np.float64)
        distinct = tokens.starts[np.add(at, 1)] - tokens.starts[at]
        lengths = tokens.lengths[at]
        fts = np.asarray(fts_scores, dtype=np.float64)
        paths_at = np.asarray(path_scores, dtype=np.float64)
        if len(known) < n:
            fts, paths_at = fts[known], paths_at[known]
        found = _counts_boost(len(matchers), counts, distinct, lengths, fts, paths_at).tolist()
        if len(known) == n:
            return found  # type: ignore[no-any-return]
        for k, i in enumerate(known):
            out[i] = found[k]
    return [
        boosted_score(matchers, paths[i], texts[i], fts_scores[i], path_scores[i])
        if s is None
        else s
        for i, s in enumerate(out)
    ]


def boosted_from_postings(
    matchers: Sequence[Matcher], post: BodyPostings, rows: npt.NDArray[np.int64],
    texts: Sequence[str], paths: Sequence[str], fts_scores: npt.NDArray[np.float64],
    path_scores: Sequence[float],
) -> list[float] | None:  # fmt: skip
    """:func:`boosted_score` of the body *rows* (positions) of *post*, from its postings.

    *texts* and *paths* are the rows'. An ASCII text without an underscore has for
    search tokens exactly its FTS terms (both ``[0-9a-z]+`` of the lowered text), so
    a plain query token is a whole token of the text when the row is in that term's
    postings, and the text's distinct tokens are its distinct terms; a text with an
    underscore is tokenized. None unless every query token is plain.
    """
    if not matchers or not all(m.plain for m in matchers):
        return None
    overlap = np.zeros(len(rows), dtype=np.float64)
    for m in matchers:  # a token with an underscore is no term, and no token of such a text
        if b"_" not in m.raw:
            overlap += post.holding(post.terms.get(m.raw, -1), rows)
    boosts = np.asarray(path_scores, dtype=np.float64)
    scores: list[float] = _counts_boost(
        len(matchers), overlap, post.distinct[rows], post.lengths[rows], fts_scores, boosts
    ).tolist()
    for i in np.flatnonzero(post.underscore[rows]).tolist():
        fts = float(fts_scores[i])  # (Python floats: the answer holds no numpy scalar)
        scores[i] = boosted_score(matchers, paths[i], texts[i], fts, path_scores[i])
    return scores


def path_boost(matchers: Sequence[Matcher], path: str) -> float:
    """0.18 per query token found in *path* (NFC), ignoring case."""
    found = 0
    if path.isascii():  # a plain token is in an ASCII path ignoring case iff in its lower case
        lower = path.lower()
        for m in matchers:
            if m.token in lower if m.plain else m.sub.search(path):
                found += 1
    else:
        npath = unicodedata.normalize("NFC", path)
        found = sum(1 for m in matchers if m.sub.search(npath))
    return _eighteens(found)


@functools.lru_cache(maxsize=64)
def _eighteens(n: int) -> float:
    """``0.18`` added *n* times from 0, as OpenClaw's loop (and Python's ``sum``) adds it."""
    return sum(0.18 for _ in range(n))


@functools.lru_cache(maxsize=4096)
def _text_tokens(text: str) -> tuple[frozenset[str | bytes], tuple[str, ...], int, int]:
    """A chunk's search tokens: the ASCII ones, the others, how many distinct, UTF-16 length.

    The ASCII tokens of an ASCII text are bytes (:func:`ascii_words`, not decoded);
    of another text, strings. Kept for the chunks of recent searches: a chunk
    found again is not tokenized again.
    """
    if text.isascii():
        words = frozenset[str | bytes](ascii_words(text).split())
        return words, (), len(words), len(text)
    tokens = search_tokens(text)
    plain = frozenset[str | bytes](t for t in tokens if t.isascii())
    other = tuple(t for t in tokens if not t.isascii())
    return plain, other, len(set(tokens)), utf16_len(text)


def _whole_token(word: Matcher, plain: frozenset[str | bytes], other: tuple[str, ...]) -> bool:
    """Whether the query token of *word* equals a text token, ignoring case.

    An ASCII token equals a lower-case ASCII query token exactly when it is that
    token (text tokens are lower case): a set lookup, not a regex per token. A
    non-ASCII token may still match an ASCII literal by case folding (U+017F, long s, is
    ``s``): those go through the pattern, as every token does for a non-ASCII one.
    """
    if word.plain:
        return (word.token in plain or word.raw in plain) or any(word.whole.match(t) for t in other)
    return any(word.whole.match(t if isinstance(t, str) else t.decode()) for t in plain) or any(
        word.whole.match(t) for t in other
    )


@dataclass(frozen=True, slots=True)
class Matcher:
    """One query token of the lexical boost: whole-token and substring patterns.

    The patterns are compiled when first needed (a plain token's tests of ASCII texts
    and paths need none; compiling one takes about 0.2 ms) and kept per token.
    """

    token: str
    plain: bool
    """The token is lower-case ASCII letters, digits and underscores."""
    raw: bytes
    """The token's bytes (an ASCII text's tokens are bytes)."""

    @property
    def whole(self) -> regex.Pattern[str]:
        """The token as the whole string, ignoring case."""
        return literal_pattern(self.token, whole=True)

    @property
    def sub(self) -> regex.Pattern[str]:
        """The token anywhere, ignoring case."""
        return literal_pattern(self.token)


def boost_matcher(token: str) -> Matcher:
    """The :class:`Matcher` of one (lower-case) query token."""
    plain = token.isascii() and token == token.lower() and token.replace("_", "a").isalnum()
    return Matcher(token, plain, token.encode("utf-8", "surrogatepass"))
