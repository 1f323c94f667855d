"""The BM25 tokenizer: words, code identifiers, file paths, CJK bigrams.

* Lower-case words of letters, digits and ``_``.
* A code identifier or path (``src/core/agent_session.ts``, ``getUserName``,
  ``memory-context``) is kept whole *and* split into its parts (on ``/ . - _``
  and camelCase humps), so a query for ``agent_session`` or ``session`` finds it.
* Runs of CJK characters become overlapping bigrams (a lone character stays).
"""

from __future__ import annotations

import re

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_W = rf"[^\W{_CJK}]"  # a word character (letter, digit, _) that is not CJK
_TOKEN = re.compile(rf"([{_CJK}]+)|({_W}+(?:[./\-:@]{_W}+)*)")
_WORD = re.compile(rf"{_W}+(?:[./\-:@]{_W}+)*")
_HAS_CJK = re.compile(rf"[{_CJK}]")
_CACHE: dict[str, tuple[str, ...]] = {}
_CACHE_MAX = 1 << 18
_SPLIT = re.compile(r"[./\-:@_]+")
_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def word_tokens(word: str) -> tuple[str, ...]:
    """The tokens of one word: the word lower-cased, then its parts (memoised)."""
    found = _CACHE.get(word)
    if found is None:
        if len(_CACHE) >= _CACHE_MAX:
            _CACHE.clear()
        found = _CACHE[word] = _split_word(word)
    return found


def _split_word(word: str) -> tuple[str, ...]:
    whole = word.lower()
    if word.isalnum() and (word.islower() or word.isupper() or word[1:].islower()):
        return (whole,)  # a plain word: nothing to split
    parts = [p.lower() for chunk in _SPLIT.split(word) for p in _HUMP.split(chunk) if p]
    return (whole, *(p for p in parts if p != whole))


def tokenize(text: str) -> list[str]:
    """Tokens of *text*, in order (a compound token is followed by its parts)."""
    out: list[str] = []
    if not _HAS_CJK.search(text):  # the common case: one pattern, cached words
        get = _CACHE.get
        for word in _WORD.findall(text):
            found = get(word)
            out += found if found is not None else word_tokens(word)
        return out
    for cjk, word in _TOKEN.findall(text):
        if word:
            out.extend(word_tokens(word))
        elif len(cjk) == 1:
            out.append(cjk)
        else:
            out.extend(cjk[i : i + 2] for i in range(len(cjk) - 1))
    return out
