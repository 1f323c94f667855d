"""The hash embedding of memory-context, bit-compatible with the agent's vectors.bin.

algorithms.md section 3: lower case, whitespace runs to one space, every char
that is not a letter, number, whitespace or one of ``@ . + -`` to a space, trim.
Empty: zero vector. Up to 3 UTF-16 units: one feature from the whole string.
Otherwise pad with a space each side and hash every 3-gram of UTF-16 code units
(a gram may split a surrogate pair; a lone surrogate is UTF-8 encoded as U+FFFD,
as Node does). Index: uint32 LE of sha256[0:4] mod dim; sign: +1 if sha256[4]
is even. Then L2 normalise; float32.
"""

from __future__ import annotations

import hashlib

import numpy as np
import numpy.typing as npt
import regex

DIM = 384

# JavaScript's \s (ECMAScript WhiteSpace + LineTerminator), not Python's.
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_WS_RUN = regex.compile(f"[{_JS_SPACE}]+")
_NOT_KEPT = regex.compile(rf"[^\p{{L}}\p{{N}}{_JS_SPACE}@.+\-]", regex.V1)


def normalize(text: str) -> str:
    """The text the hash embedding sees (JavaScript semantics)."""
    lowered = text.lower()
    if lowered.isascii() and lowered.isprintable() and "  " not in lowered:
        spaced = lowered  # no whitespace but single spaces: nothing to replace
    else:
        spaced = _WS_RUN.sub(" ", lowered)
    # After both passes the only whitespace left is " ", so trim() is strip(" ").
    return _NOT_KEPT.sub(" ", spaced).strip(" ")


_CACHE_MAX = 1 << 18
_CACHE: dict[int, dict[str, tuple[int, float]]] = {}
"""(index, sign) of each gram hashed, per dim: a dict is cheaper to ask than lru_cache."""


def _feature(gram: str, dim: int) -> tuple[int, float]:
    digest = hashlib.sha256(gram.encode("utf-8", "surrogatepass")).digest()
    index = int.from_bytes(digest[0:4], "little") % dim
    return index, (1.0 if (digest[4] & 1) == 0 else -1.0)


def _grams_utf16(padded: str) -> list[str]:
    units = padded.encode("utf-16-le", "surrogatepass")
    grams = []
    for i in range(0, len(units) - 4, 2):
        # Decoding 3 units with "replace" maps each lone surrogate to U+FFFD,
        # which is what Node's UTF-8 encoder does to a split pair.
        grams.append(units[i : i + 6].decode("utf-16-le", "replace"))
    return grams


def features(text: str) -> list[str]:
    """The strings that are hashed for *text*, in order."""
    norm = normalize(text)
    if not norm:
        return []
    if norm.isascii() or all(ord(c) <= 0xFFFF for c in norm):
        if len(norm) <= 3:
            return [norm]
        padded = f" {norm} "
        return [padded[i : i + 3] for i in range(len(padded) - 2)]
    units = len(norm.encode("utf-16-le", "surrogatepass")) // 2
    if units <= 3:
        return [norm]
    return _grams_utf16(f" {norm} ")


def embed(text: str, dim: int = DIM) -> npt.NDArray[np.float32]:
    """Embed *text* as the agent's hash embedding (unit length, float32)."""
    known = _CACHE.get(dim)
    if known is None or len(known) >= _CACHE_MAX:
        known = _CACHE[dim] = {}
    index: list[int] = []
    sign: list[float] = []
    for gram in features(text):
        found = known.get(gram)
        if found is None:
            found = known[gram] = _feature(gram, dim)
        index.append(found[0])
        sign.append(found[1])
    # bincount adds each index's signs in order: whole numbers, the sums of a loop
    vec = np.bincount(index, weights=sign, minlength=dim) if index else np.zeros(dim, np.float64)
    norm = float(np.sqrt(np.dot(vec, vec)))
    if norm > 0:
        vec /= norm
    return vec.astype(np.float32)


def embed_many(texts: list[str], dim: int = DIM) -> npt.NDArray[np.float32]:
    """Embed several texts into a ``(len(texts), dim)`` float32 matrix."""
    out = np.zeros((len(texts), dim), dtype=np.float32)
    for row, text in enumerate(texts):
        out[row] = embed(text, dim)
    return out
