"""English stemming and stopwords for the lab's BM25 tokenizer (no dependency).

:func:`stem` is M. F. Porter's 1980 algorithm ("An algorithm for suffix stripping",
*Program* 14(3)), steps 1a to 5b as published, so ``running``, ``runs`` and ``run``
share one term. It applies to plain lower-case ASCII words only: identifiers, paths,
numbers and non-Latin text pass through unchanged, so a code token keeps its exact
match. :data:`STOPWORDS` are the short function words of English questions ("what",
"did", "the") that carry no topic and only add noise to a BM25 score.
"""

from __future__ import annotations

STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been
    before being below between both but by can could did do does doing down during each
    few for from further had has have having he her here hers herself him himself his how
    i if in into is it its itself just me more most my myself no nor not now of off on
    once only or other our ours ourselves out over own same she should so some such than
    that the their theirs them themselves then there these they this those through to too
    under until up very was we were what when where which while who whom why will with
    would you your yours yourself yourselves""".split()
)

_VOWELS = frozenset("aeiou")
_CACHE: dict[str, str] = {}
_CACHE_MAX = 1 << 17


def _cons(w: str, i: int) -> bool:
    """Whether ``w[i]`` is a consonant in Porter's sense (y after a consonant is a vowel)."""
    c = w[i]
    if c in _VOWELS:
        return False
    if c == "y":
        return i == 0 or not _cons(w, i - 1)
    return True


def _measure(stem: str) -> int:
    """Porter's m: the number of vowel-consonant sequences in *stem*."""
    m, i, n = 0, 0, len(stem)
    while i < n and _cons(stem, i):
        i += 1
    while i < n:
        while i < n and not _cons(stem, i):
            i += 1
        if i >= n:
            break
        m += 1
        while i < n and _cons(stem, i):
            i += 1
    return m


def _has_vowel(stem: str) -> bool:
    return any(not _cons(stem, i) for i in range(len(stem)))


def _double_cons(w: str) -> bool:
    return len(w) >= 2 and w[-1] == w[-2] and _cons(w, len(w) - 1)


def _cvc(w: str) -> bool:
    """Ends consonant-vowel-consonant, the last not w, x or y (``hop``, not ``snow``)."""
    n = len(w)
    return (
        n >= 3
        and _cons(w, n - 1)
        and not _cons(w, n - 2)
        and _cons(w, n - 3)
        and w[-1] not in "wxy"
    )


def _swap(w: str, rules: tuple[tuple[str, str], ...], min_m: int) -> str:
    """The first rule whose suffix ends *w*; applied when its stem's m > *min_m*."""
    for suffix, repl in rules:
        if w.endswith(suffix):
            stem = w[: len(w) - len(suffix)]
            return stem + repl if _measure(stem) > min_m else w
    return w


_STEP2 = (
    ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"),
    ("izer", "ize"), ("abli", "able"), ("alli", "al"), ("entli", "ent"), ("eli", "e"),
    ("ousli", "ous"), ("ization", "ize"), ("ation", "ate"), ("ator", "ate"),
    ("alism", "al"), ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous"),
    ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"),
)  # fmt: skip
_STEP3 = (
    ("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"),
    ("ful", ""), ("ness", ""),
)  # fmt: skip
_STEP4 = (
    "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent",
    "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize",
)  # fmt: skip
_STEP4_LONGEST_FIRST = sorted(_STEP4, key=len, reverse=True)


def _step1(w: str) -> str:
    if w.endswith("sses") or w.endswith("ies"):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    if w.endswith("eed"):
        return w[:-1] if _measure(w[:-3]) > 0 else w
    for suffix in ("ed", "ing"):
        if w.endswith(suffix) and _has_vowel(w[: -len(suffix)]):
            w = w[: -len(suffix)]
            if w.endswith(("at", "bl", "iz")):
                return w + "e"
            if _double_cons(w) and w[-1] not in "lsz":
                return w[:-1]
            if _measure(w) == 1 and _cvc(w):
                return w + "e"
            return w
    return w


def _step4(w: str) -> str:
    for suffix in _STEP4_LONGEST_FIRST:
        if w.endswith(suffix):
            stem = w[: len(w) - len(suffix)]
            if suffix == "ion" and not stem.endswith(("s", "t")):
                return w
            return stem if _measure(stem) > 1 else w
    return w


def _porter(w: str) -> str:
    w = _step1(w)
    if w.endswith("y") and _has_vowel(w[:-1]):
        w = w[:-1] + "i"
    w = _swap(w, _STEP2, 0)
    w = _swap(w, _STEP3, 0)
    w = _step4(w)
    if w.endswith("e"):
        m = _measure(w[:-1])
        if m > 1 or (m == 1 and not _cvc(w[:-1])):
            w = w[:-1]
    if _measure(w) > 1 and _double_cons(w) and w.endswith("l"):
        w = w[:-1]
    return w


def stem(word: str) -> str:
    """Porter stem of a lower-case ASCII word; any other token is returned unchanged."""
    found = _CACHE.get(word)
    if found is not None:
        return found
    out = _porter(word) if len(word) > 2 and word.isascii() and word.isalpha() else word
    if len(_CACHE) >= _CACHE_MAX:
        _CACHE.clear()
    _CACHE[word] = out
    return out
