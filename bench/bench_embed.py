"""Benchmark: all-MiniLM-L6-v2 throughput, our numpy forward pass vs PyTorch.

Embeds ~200 short chat turns (10-40 words) in batches of 32 on 2 cores with
:class:`core.embed.transformer.TransformerEmbedder` and, when torch is importable,
with the PyTorch reference implementation from
``tests/fixtures/make_transformer_reference.py`` (same weights, sentence-transformers'
batching). Prints one JSON object; ``torch`` is null without torch, and both are null
without the model package. Target: numpy texts/s >= torch texts/s.

    python -m bench.bench_embed [--texts 200] [--batch-size 32] [--repeat 3]
"""

from __future__ import annotations

import os

# Pin the process to 2 cores before numpy/OpenBLAS and torch start their threads.
if hasattr(os, "sched_setaffinity"):
    os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:2])
os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")
os.environ.setdefault("OMP_NUM_THREADS", "2")

import argparse
import random
import sys
import time

import numpy as np
import orjson

WORDS = (
    "can you fix the failing test in parser module please run pytest again and show me "
    "the error I think config loader breaks when path has spaces let's add a fixture for "
    "that sure done build is green now what about cache eviction we agreed on LRU with "
    "a cap of 512 MB rename function load_embedder to make_embedder update docs commit "
    "push review diff src core embed transformer py session memory summary token budget"
).split()


def chat_turns(count: int, seed: int = 7) -> list[str]:
    """*count* chat-like turns of 10-40 words."""
    rng = random.Random(seed)
    turns = []
    for _ in range(count):
        words = [rng.choice(WORDS) for _ in range(rng.randint(10, 40))]
        words[0] = words[0].capitalize()
        turns.append(" ".join(words) + rng.choice([".", "?", "!", ""]))
    return turns


def _best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def run(count: int, batch_size: int, repeat: int) -> dict[str, object]:
    texts = chat_turns(count)
    result: dict[str, object] = {
        "benchmark": "embed",
        "model": "all-MiniLM-L6-v2",
        "texts": count,
        "batch_size": batch_size,
        "cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "numpy": None,
        "torch": None,
        "ratio_numpy_over_torch": None,
        "min_cosine_numpy_vs_torch": None,
    }
    try:
        from core.embed.transformer import TransformerEmbedder, model_dir

        ours = TransformerEmbedder.load()
    except (ImportError, FileNotFoundError) as exc:
        result["skipped"] = f"model unavailable: {exc}"
        return result
    ours.embed(texts[:batch_size], batch_size=batch_size)  # warm up
    seconds = _best(lambda: ours.embed(texts, batch_size=batch_size), repeat)
    vectors = ours.embed(texts, batch_size=batch_size)
    tokens = [len(e.ids) for e in ours._tokenizer.encode_batch(texts)]
    result["tokens_per_text"] = {"min": min(tokens), "mean": round(sum(tokens) / count, 1),
                                 "max": max(tokens)}  # fmt: skip
    result["numpy"] = {"seconds": round(seconds, 4), "texts_per_s": round(count / seconds, 1)}
    try:
        import torch

        from tests.fixtures.make_transformer_reference import TorchMiniLM
    except ImportError:
        return result
    torch.set_num_threads(2)
    reference = TorchMiniLM(model_dir())
    reference.embed(texts[:batch_size], batch_size=batch_size)
    t_seconds = _best(lambda: reference.embed(texts, batch_size=batch_size), repeat)
    t_vectors = reference.embed(texts, batch_size=batch_size)
    result["torch"] = {
        "version": torch.__version__,
        "threads": torch.get_num_threads(),
        "seconds": round(t_seconds, 4),
        "texts_per_s": round(count / t_seconds, 1),
    }
    result["ratio_numpy_over_torch"] = round(t_seconds / seconds, 3)
    result["min_cosine_numpy_vs_torch"] = float(np.min(np.sum(vectors * t_vectors, axis=1)))
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--texts", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    out = run(args.texts, args.batch_size, args.repeat)
    sys.stdout.buffer.write(orjson.dumps(out) + b"\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
