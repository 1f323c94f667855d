"""Benchmark: all-MiniLM-L6-v2 throughput, our numpy forward pass vs PyTorch.

Embeds ~200 short chat turns (10-40 words) in batches of 32 on 2 cores with
:class:`core.embed.transformer.TransformerEmbedder` and, when torch is importable,
with the PyTorch implementation in ``tests/fixtures/make_transformer_reference.py``
(same weights, sentence-transformers' batching, ``torch.set_num_threads(2)``).
The two take turns, with a pause between so neither runs while the other's idle
threads still spin, and the best of ``--repeat`` runs counts. Prints one JSON
object; ``torch`` is null without torch, ``numpy`` too without the model package.
Target: numpy texts/s >= torch texts/s.

    python -m bench.bench_embed [--texts 200] [--batch-size 32] [--repeat 5]
"""

from __future__ import annotations

import os

# Two cores for everyone, before numpy's OpenBLAS and torch start their threads.
if hasattr(os, "sched_setaffinity"):
    os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:2])
os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")
os.environ.setdefault("OMP_NUM_THREADS", "2")

import argparse
import random
import statistics
import sys
import time

import numpy as np
import orjson

WORDS = (
    "can you fix the failing test in parser module please run pytest again and show me "
    "the error I think config loader breaks when path has spaces let's add a fixture for "
    "that sure done build is green now what about cache eviction we agreed on LRU with "
    "a cap of 512 MB rename function load_embedder to make_embedder update docs commit "
    "push review diff src/core/embed/transformer.py session memory summary token budget"
).split()


def chat_turns(count: int, seed: int = 7) -> list[str]:
    """*count* chat-like turns of 10-40 words."""
    rng = random.Random(seed)
    turns = []
    for _ in range(count):
        words = [rng.choice(WORDS) for _ in range(rng.randint(10, 40))]
        turns.append(" ".join(words).capitalize() + rng.choice([".", "?", "!", ""]))
    return turns


def _stats(times: list[float], count: int) -> dict[str, float]:
    best = min(times)
    return {
        "seconds_best": round(best, 4),
        "seconds_median": round(statistics.median(times), 4),
        "texts_per_s": round(count / best, 1),
    }


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
        "numpy_over_torch": None,
        "min_cosine_numpy_vs_torch": None,
    }
    try:
        from tokenizers import Tokenizer

        from core.embed.transformer import TransformerEmbedder, model_dir

        ours = TransformerEmbedder.load()
    except (ImportError, FileNotFoundError) as exc:
        result["skipped"] = f"model unavailable: {exc}"
        return result
    tokenizer = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(256)
    tokens = [len(e.ids) for e in tokenizer.encode_batch(texts)]
    result["tokens_per_text"] = {"min": min(tokens), "mean": round(sum(tokens) / count, 1),
                                 "max": max(tokens)}  # fmt: skip
    runners = {"numpy": lambda: ours.embed(texts, batch_size=batch_size)}
    try:
        import torch

        from tests.fixtures.make_transformer_reference import TorchMiniLM
    except ImportError:
        torch = None
    else:
        torch.set_num_threads(2)
        reference = TorchMiniLM(model_dir())
        runners["torch"] = lambda: reference.embed(texts, batch_size=batch_size)
    vectors = {name: fn() for name, fn in runners.items()}  # warm-up, and the results
    times: dict[str, list[float]] = {name: [] for name in runners}
    for _ in range(repeat):
        for name, fn in runners.items():
            time.sleep(0.3)
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    result["numpy"] = _stats(times["numpy"], count)
    if torch is not None:
        result["torch"] = {"version": torch.__version__, "threads": torch.get_num_threads(),
                           **_stats(times["torch"], count)}  # fmt: skip
        result["numpy_over_torch"] = round(min(times["torch"]) / min(times["numpy"]), 3)
        cosine = np.sum(vectors["numpy"] * vectors["torch"], axis=1)
        result["min_cosine_numpy_vs_torch"] = round(float(cosine.min()), 7)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--texts", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    sys.stdout.buffer.write(orjson.dumps(run(args.texts, args.batch_size, args.repeat)) + b"\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
