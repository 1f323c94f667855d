"""The hash embedding, checked against vectors derived by hand from the rules.

Each expected vector is built here from a hand-written list of grams: sha256 of
the gram's UTF-8, index = uint32 LE of bytes 0-3 mod 384, sign + if byte 4 is
even, then L2 normalised and cast to float32.
"""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pytest

from core.embed.hashembed import DIM, embed, features, normalize


def expected(grams: list[bytes]) -> np.ndarray:
    counts = [0] * DIM
    for g in grams:
        d = hashlib.sha256(g).digest()
        counts[int.from_bytes(d[:4], "little") % DIM] += 1 if d[4] % 2 == 0 else -1
    norm = math.sqrt(sum(c * c for c in counts))
    return np.array([c / norm if norm else 0.0 for c in counts], dtype=np.float32)


CASES = [
    # (text, the grams the rules give, written out by hand as UTF-8 bytes)
    ("ab", [b"ab"]),
    ("ABC", [b"abc"]),
    ("abcd", [b" ab", b"abc", b"bcd", b"cd "]),
    ("Hi, Bob!", [b" hi", b"hi ", b"i  ", b"  b", b" bo", b"bob", b"ob "]),
    ("x@y.z+1-2", [b" x@", b"x@y", b"@y.", b"y.z", b".z+", b"z+1", b"+1-", b"1-2", b"-2 "]),
    ("日本語", ["日本語".encode()]),
    (
        "日本語テキスト",
        [g.encode() for g in (" 日本", "日本語", "本語テ", "語テキ", "テキス", "キスト", "スト ")],
    ),
    ("Café", [g.encode() for g in (" ca", "caf", "afé", "fé ")]),
    (
        "CAFE\u0301",
        [g.encode() for g in (" ca", "caf", "afe", "fe ")],
    ),  # combining mark -> space, trimmed
    ("ÉCOLE", [g.encode() for g in (" éc", "éco", "col", "ole", "le ")]),
    (
        "hi 😀 there",
        [
            g.encode()
            for g in (" hi", "hi ", "i  ", "   ", "  t", " th", "the", "her", "ere", "re ")
        ],
    ),
    # An astral letter is two UTF-16 units: grams split it and each lone half is U+FFFD.
    ("𝐀𝐁", [" 𝐀".encode(), "𝐀\ufffd".encode(), "\ufffd𝐁".encode(), "𝐁 ".encode()]),
    ("𝐀", ["𝐀".encode()]),  # 2 units <= 3: one feature
]


@pytest.mark.parametrize(("text", "grams"), CASES, ids=[c[0] for c in CASES])
def test_embedding_matches_hand_derived_vector(text, grams):
    vec = embed(text)
    assert vec.dtype == np.float32 and vec.shape == (DIM,)
    assert vec.tobytes() == expected(grams).tobytes()  # bit for bit


def test_whitespace_three_chars_is_one_feature():
    # "a\t\n b" normalises to "a b" (3 units): the rules say one feature, not grams.
    assert features("a\t\n b") == ["a b"]
    assert embed("a\t\n b").tobytes() == expected([b"a b"]).tobytes()


@pytest.mark.parametrize("text", ["", "   ", "!!!", "😀😀", "\u0301"])
def test_empty_after_normalising_is_zero_vector(text):
    vec = embed(text)
    assert not vec.any()
    assert features(text) == []


def test_normalize_follows_javascript_rules():
    assert normalize("  Hello,\u00a0World  ") == "hello  world"
    assert normalize("a\ufeffb") == "a b"  # U+FEFF is whitespace in JS, not in Python
    assert normalize("a\x1cb") == "a b"  # \x1c is not JS whitespace but not kept either
    assert normalize("e-mail: x+y@z.io") == "e-mail  x+y@z.io"
    assert normalize("ΣΑΣ") == "σας"  # final sigma, as String.prototype.toLowerCase


def test_unit_length():
    v = embed("the quick brown fox jumps over the lazy dog")
    assert abs(float(np.linalg.norm(v)) - 1.0) < 1e-6
