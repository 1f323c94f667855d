"""Text helpers of OpenClaw's memory search (2026.9.6), ported one to one.

The FTS5 query builder, the keyword extraction of the keyword fallback (its
stop-word lists are :mod:`core.openclaw.memsearch_stopwords`), the tokenizer and
Jaccard similarity of MMR, UTF-16 lengths and truncation, and an approximation of
JavaScript's ``localeCompare`` for tie-breaks.
Each function names the OpenClaw function it ports; the sources are
``dist/manager-search-*.mjs``, ``dist/query-expansion-*.mjs`` and
``dist/tokenize-*.mjs`` of the npm package (docs/notes/openclaw-sqlite.md section 6).
"""

from __future__ import annotations

import functools
import math
import operator
import re
import threading
import unicodedata
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import regex

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    import numpy.typing as npt

from core.openclaw.memsearch_stopwords import KO_PARTICLES, STOP_KO, STOP_WORDS

SNIPPET_CHARS = 700
"""``SNIPPET_MAX_CHARS``: a hit's snippet is its text's first 700 UTF-16 units."""

T = TypeVar("T")

FTS_TOKEN = regex.compile(r"[\p{L}\p{N}_]+")
"""``FTS_QUERY_TOKEN_RE``."""
FTS_TOKEN_MARKS = regex.compile(r"[\p{L}\p{M}\p{N}_]+")
_CJK = regex.compile(
    r"[\u3040-\u309f\u30a0-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\u1100-\u11ff]"
)
_ASCII_WORD = regex.compile(r"[a-z0-9_]+")
_ASCII_TOKEN = re.compile(r"[a-z0-9_]+")
"""``FTS_TOKEN`` on lower-case ASCII text."""
_WORD_BYTES = bytes(
    b | 0x20 if 65 <= b <= 90 else b if (b < 128 and chr(b).isalnum()) or b == 95 else 32
    for b in range(256)
)
"""Each ASCII byte of ``[A-Za-z0-9_]`` lowered, every other byte a space."""
_SPLIT = regex.compile(r"[\s\p{P}]+")
_KANA = regex.compile(r"[\u3040-\u30ff]")
_JA_PARTS = regex.compile(r"[a-z0-9_]+|[\u30a0-\u30ffー]+|[\u4e00-\u9fff]+|[\u3040-\u309f]{2,}")
_HAN = regex.compile(r"[\u4e00-\u9fff]")
_HAN_ONLY = regex.compile(r"^[\u4e00-\u9fff]+$")
_HANGUL = regex.compile(r"[\uac00-\ud7af\u3131-\u3163]")
_HANGUL_SYLLABLE = regex.compile(r"[\uac00-\ud7af]")
_LATIN_ONLY = regex.compile(r"^[a-zA-Z]+$")
_DIGITS_ONLY = regex.compile(r"^\d+$")
_PUNCT_ONLY = regex.compile(r"^[\p{P}\p{S}]+$")
_ALNUM_STEM = regex.compile(r"^[a-z0-9_]+$", regex.IGNORECASE)


def js_lower(text: str) -> str:
    """``String.prototype.toLowerCase`` (Python's ``lower`` is close enough)."""
    return text.lower()


def lower_trimmed(text: str) -> str:
    """``normalizeLowercaseStringOrEmpty``: trimmed, lower case."""
    return js_lower(text.strip())


def entries(tokens: list[str]) -> list[str]:
    """``normalizeStringEntries``: trimmed, empty ones dropped."""
    return [t.strip() for t in tokens if t.strip()]


def unique(values: list[str]) -> list[str]:
    """``uniqueStrings``: first occurrence kept, order kept."""
    return list(dict.fromkeys(values))


def build_fts_query(raw: str) -> str | None:
    """``buildFtsQuery``: every token quoted, joined with AND; None without a token."""
    tokens = entries(FTS_TOKEN.findall(raw))
    if not tokens:
        return None
    return " AND ".join('"' + t.replace('"', "") + '"' for t in tokens)


def match_query_from_terms(terms: list[str]) -> str | None:
    """``buildMatchQueryFromTerms``."""
    if not terms:
        return None
    return " AND ".join('"' + t.replace('"', "") + '"' for t in terms)


def search_tokens(raw: str) -> list[str]:
    """``normalizeSearchTokens``: NFC, tokens, lower case."""
    if raw.isascii():  # NFC leaves ASCII alone, and its letters lower to letters
        return ascii_words(raw).decode().split()
    return [js_lower(t) for t in entries(FTS_TOKEN.findall(unicodedata.normalize("NFC", raw)))]


def ascii_words(text: str) -> bytes:
    """An ASCII *text* lowered, every character outside ``[a-z0-9_]`` a space.

    Its ``split()`` is ``re.findall(r"[a-z0-9_]+", text.lower())``, several times faster.
    """
    return text.encode("ascii").translate(_WORD_BYTES)


def is_ascii(value: str) -> bool:
    """``isAscii``."""
    return value.isascii()


def bm25_rank_to_score(rank: float | None) -> float:
    """``bm25RankToScore``: FTS5's (negative) bm25 rank to a 0..1 score."""
    if rank is None or rank != rank or rank in (float("inf"), float("-inf")):
        return 1 / 1e3
    if rank < 0:
        relevance = -rank
        return relevance / (1 + relevance)
    return 1 / (1 + rank)


def fts_rank_scores(ranks: Sequence[float | None]) -> list[float]:
    """:func:`bm25_rank_to_score` of each of *ranks*, in numpy (the same bits)."""
    if not ranks:
        return []
    r = np.array([math.nan if k is None else k for k in ranks], dtype=np.float64)
    return fts_rank_score_array(r).tolist()  # type: ignore[no-any-return]


def fts_rank_score_array(r: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """:func:`fts_rank_scores` of an array of ranks (NaN: no rank)."""
    with np.errstate(all="ignore"):
        relevance = -r
        scores = np.where(r < 0, relevance / (1 + relevance), 1 / (1 + r))
    return np.where(np.isfinite(r), scores, 1 / 1e3)


# -- exact path candidates (manager-search) ---------------------------------------


def _norm_path_id(value: str) -> str:
    value = value.strip().replace("\\", "/")
    if value.startswith("./"):
        value = value[2:]
    return unicodedata.normalize("NFC", value).lower()


def exact_path_matcher(query: str, forms: frozenset[str] | None = None) -> Callable[[str], int]:
    """``prepareExactPathMatcher``: 3 whole path, 2 file name, 1 stem, else 0.

    *forms*: every :func:`path_forms` of the paths it will be asked about, when the
    caller has them (:func:`core.openclaw.memsearch_rank.warm_path_caches`): a query
    that is none of them matches no path (most queries: sentences, not file names).
    """
    q = _norm_path_id(query)
    if not q or q == "." or (forms is not None and q not in forms):
        return lambda _path: 0
    has_dir = "/" in q

    def match(candidate: str) -> int:
        p, base, stem = path_forms(candidate)
        if q == p:
            return 3
        if has_dir:
            return 0
        if q == base:
            return 2
        return 1 if q == stem else 0

    return match


@functools.lru_cache(maxsize=1 << 16)
def path_forms(candidate: str) -> tuple[str, str, str]:
    """A path as :func:`exact_path_matcher` compares it: normalized, its file name, its stem."""
    p = _norm_path_id(candidate)
    base = p.split("/")[-1]
    dot = base.rfind(".")
    return p, base, base[:dot] if dot > 0 else base


def _like_escape(term: str) -> str:
    return term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def exact_path_patterns(query: str) -> list[str]:
    """``buildExactPathCandidatePatterns``: LIKE patterns that can match an exact path."""
    norm = query.strip().replace("\\", "/")
    if norm.startswith("./"):
        norm = norm[2:]
    if not norm or norm == ".":
        return []
    forms = unique([unicodedata.normalize("NFC", norm), unicodedata.normalize("NFD", norm)])
    if not is_ascii(norm):
        for f in list(forms):
            forms += [f.lower(), f.upper()]
        forms = unique(forms)
    patterns: list[str] = []
    for f in forms:
        esc = _like_escape(f)
        patterns.append(esc)
        if "/" not in norm:
            patterns += [f"{esc}.%", f"%/{esc}", f"%/{esc}.%"]
    if not is_ascii(norm):
        anchors = sorted(
            regex.findall(r"[a-z0-9_]+", unicodedata.normalize("NFD", norm).lower()),
            key=len,
            reverse=True,
        )
        if anchors:
            patterns.append(f"%{_like_escape(anchors[0])}%")
        if norm.lower() != norm.upper():
            first = next((c for c in norm if ord(c) > 127), None)
            if first is not None:
                patterns += [
                    f"%{_like_escape(a)}%" for a in unique([first, first.lower(), first.upper()])
                ]
    return unique(patterns)


# -- UTF-16 (JavaScript string lengths) ----------------------------------------------


def utf16_len(text: str) -> int:
    """``text.length`` in JavaScript: UTF-16 code units."""
    if text.isascii():
        return len(text)
    # a lone surrogate is one unit, as in JavaScript
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def truncate_utf16(text: str, limit: int) -> str:
    """``truncateUtf16Safe``: at most *limit* UTF-16 units, never half a surrogate pair."""
    if text.isascii():
        return text[:limit]
    if utf16_len(text) <= limit:
        return text
    units = 0
    for i, c in enumerate(text):
        units += 2 if ord(c) > 0xFFFF else 1
        if units > limit:
            return text[:i]
    return text


@functools.lru_cache(maxsize=1 << 16)
def locale_key(text: str) -> str:
    """Sort key approximating ``a.localeCompare(b)`` (ICU root collation).

    Punctuation and symbols sort before digits, digits before letters, letters
    without regard to case; exact ties fall back on the code points (see
    :func:`locale_cmp`). Each character of the NFD text (combining marks left out)
    is a pair (its class, its case-folded form), and the key is those pairs spelled
    as one string: ``chr(class + 1) + folded + chr(0)`` each. Two keys compare as
    the tuples of pairs would (a folded form that is a prefix of another ends at the
    ``chr(0)``, below any character a case fold gives) but as one string comparison,
    and an ASCII text's key is one ``str.translate``.
    """
    if text.isascii():
        return text.translate(_ASCII_LOCALE)
    return "".join(
        _spelled(c) for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c)
    )


def _spelled(c: str) -> str:
    if c.isalpha():
        return f"\x04{c.casefold()}\x00"
    if c.isdigit():
        return f"\x03{c}\x00"
    return f"\x01{c}\x00" if c.isspace() else f"\x02{c}\x00"


_ASCII_LOCALE = {i: _spelled(chr(i)) for i in range(128)}
""":func:`locale_key` of each ASCII character (NFD and combining marks change none)."""


def locale_cmp(a: str, b: str) -> int:
    """``a.localeCompare(b)`` as -1/0/1 (lower case before upper case on a tie)."""
    ka, kb = locale_key(a), locale_key(b)
    if ka != kb:
        return -1 if ka < kb else 1
    if a == b:
        return 0
    sa, sb = a.swapcase(), b.swapcase()  # ICU: lower case first
    return -1 if sa < sb else 1


@functools.lru_cache(maxsize=1 << 16)
def locale_sort_key(text: str) -> tuple[str, str]:
    """A sort key ordering strings as :func:`locale_cmp` does (kept: a search sorts twice)."""
    return locale_key(text), text.swapcase()


def sort_by(
    items: Iterable[T],
    key: Callable[[T], Any],
    cmp: Callable[[T, T], int],
    numbers: Sequence[Callable[[T], float]],
    last: Callable[[T], Any] | None = None,
) -> list[T]:
    """*items* sorted by the comparator *cmp*, through the equivalent *key* when it is one.

    A key sorts many times faster than a comparator; the two agree while the
    compared *numbers* (getters: ``operator.attrgetter``) are finite (a NaN makes the
    comparator's order its own). *last*: the key's last element, exactly; *key* then
    ends with a cheap stand-in (a chunk id's locale key costs a microsecond, and only
    items tied on every other element need it), and where any two are so tied the
    items are sorted again with *last*.
    """
    items = list(items)
    if not all_finite(items, numbers):
        return sorted(items, key=functools.cmp_to_key(cmp))
    if last is None:
        return sorted(items, key=key)
    keys = list(map(key, items))
    order = sorted(range(len(items)), key=keys.__getitem__)
    heads = [keys[i][:-1] for i in order]
    if any(map(operator.eq, heads, heads[1:])):
        return sorted(items, key=lambda item: (*key(item)[:-1], last(item)))
    return [items[i] for i in order]


def all_finite(items: Sequence[T], numbers: Sequence[Callable[[T], float]]) -> bool:
    """Whether every number *numbers* gets from each of *items* is finite.

    A NaN or an infinity makes a sum non-finite (so may an overflow: a false
    alarm, which only costs the caller its slow path); summed in C per getter.
    """
    return all(math.isfinite(sum(map(get, items))) for get in numbers)


# -- MMR (tokenize.ts) -----------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def mmr_tokens(text: str) -> frozenset[str]:
    """``tokenize`` of MMR: ASCII words, CJK characters and adjacent CJK pairs."""
    if text.isascii():  # trimming removes no word character
        return frozenset(ascii_words(text).decode().split())
    lower = lower_trimmed(text)
    if lower.isascii():
        return frozenset(_ASCII_TOKEN.findall(lower))
    tokens = set(_ASCII_WORD.findall(lower))
    if not _CJK.search(lower):
        return frozenset(tokens)
    unigrams: list[str] = []
    previous: str | None = None
    for char in lower:
        if _CJK.match(char):
            if previous is not None:
                tokens.add(previous + char)
            unigrams.append(char)
            previous = char
        else:
            previous = None
    tokens.update(unigrams)
    return frozenset(tokens)


@functools.lru_cache(maxsize=8192)
def mmr_token_bytes(text: str) -> frozenset[bytes]:
    """:func:`mmr_tokens` of *text* as UTF-8 bytes (equal tokens, equal bytes)."""
    if text.isascii():  # trimming removes no word character
        return frozenset(ascii_words(text).split())
    return frozenset(t.encode("utf-8", "surrogatepass") for t in mmr_tokens(text))


class TokenIds:
    """:func:`mmr_tokens` of snippets as integer ids (one token, one id).

    The numbering is shared by every search (snippets recur from query to query),
    guarded by a lock, and started over past :attr:`max_tokens` tokens; the ids of
    one :meth:`of` call always come from one numbering.
    """

    def __init__(self, max_tokens: int = 1_000_000, max_texts: int = 8192) -> None:
        self.max_tokens, self.max_texts = max_tokens, max_texts
        self._ids: dict[str, int] = {}
        self._texts: dict[str, npt.NDArray[np.int64]] = {}
        self._lock = threading.Lock()

    def of(self, texts: list[str]) -> list[npt.NDArray[np.int64]]:
        """The token ids of each text (each id once, in no particular order)."""
        with self._lock:
            if len(self._ids) > self.max_tokens:
                self._ids.clear()
                self._texts.clear()
            if len(self._texts) > self.max_texts:
                self._texts.clear()
            out = []
            ids, known = self._ids, self._texts
            setdefault = ids.setdefault
            for text in texts:
                found = known.get(text)
                if found is None:
                    # a new token takes the next id (len(ids) is read before the insert)
                    found = np.array(
                        [setdefault(t, len(ids)) for t in mmr_tokens(text)], dtype=np.int64
                    )
                    known[text] = found
                out.append(found)
            return out


TOKEN_IDS = TokenIds()


def jaccard_similarity(a: frozenset[str], b: frozenset[str]) -> float:
    """``jaccardSimilarity``."""
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    inter = len(a & b)
    union = len(a) + len(b) - inter
    return 0.0 if union == 0 else inter / union


# -- keyword extraction (query-expansion.ts) -------------------------------------------


def _strip_korean_particle(token: str) -> str | None:
    for particle in KO_PARTICLES:
        if len(token) > len(particle) and token.endswith(particle):
            return token[: -len(particle)]
    return None


def _useful_korean_stem(stem: str) -> bool:
    if _HANGUL_SYLLABLE.search(stem):
        return len(stem) >= 2
    return bool(_ALNUM_STEM.match(stem))


def _keyword_tokens(text: str, trigram: bool) -> list[str]:
    tokens: list[str] = []
    for segment in (s for s in _SPLIT.split(lower_trimmed(text)) if s):
        if _KANA.search(segment):
            for part in _JA_PARTS.findall(segment):
                tokens.append(part)
                if _HAN_ONLY.match(part) and not trigram:
                    tokens.extend(part[i : i + 2] for i in range(len(part) - 1))
        elif _HAN.search(segment):
            chars = [c for c in segment if _HAN.match(c)]
            if trigram:
                if chars:
                    tokens.append("".join(chars))
            else:
                tokens.extend(chars)
                tokens.extend(chars[i] + chars[i + 1] for i in range(len(chars) - 1))
        elif _HANGUL.search(segment):
            stem = _strip_korean_particle(segment)
            stem_stop = stem is not None and stem in STOP_KO
            if segment not in STOP_KO and not stem_stop:
                tokens.append(segment)
            if stem and stem not in STOP_KO and _useful_korean_stem(stem):
                tokens.append(stem)
        else:
            tokens.append(segment)
    return tokens


def is_stop_word(token: str) -> bool:
    """``isQueryStopWordToken``."""
    return any(token in words for words in STOP_WORDS)


def _valid_keyword(token: str) -> bool:
    if not token:
        return False
    if _LATIN_ONLY.match(token) and len(token) < 3:
        return False
    if _DIGITS_ONLY.match(token):
        return False
    return not _PUNCT_ONLY.match(token)


def extract_keywords(query: str, *, fts_tokenizer: str = "unicode61") -> list[str]:
    """``extractKeywords``: the keywords the keyword fallback searches one by one."""
    out: list[str] = []
    for token in _keyword_tokens(query, fts_tokenizer == "trigram"):
        if is_stop_word(token) or not _valid_keyword(token) or token in out:
            continue
        out.append(token)
    return out
