"""Benchmark: smart trim of a ~200,000-token context of ~2,000 messages.

A seeded pi-shaped session: user prompts, assistant turns with text and (often
parallel) tool calls, tool results carrying code and command output. The window
is the context's own size, so the total sits just over the safe limit
(``window - 4,000 - 4,000``): protection, BM25 over every unprotected message and
the pairing repair all run. Prints one JSON object. Target: p50 <= 50 ms, p50 being
what the agent pays before each model call: the context of the call before plus a
turn (token ids of the messages seen before are memoised). ``repeat_p50_ms`` trims
the same context again; ``cold_p50_ms`` empties trim's caches first.

    python -m bench.bench_trim [--messages 2000] [--tokens 200000] [--runs 20]
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
from typing import TYPE_CHECKING, Any

import orjson

from bench.corpus import ERRORS, FILES, FUNCS, NOUNS, VERBS, WORDS
from core.context.trim import TrimResult, clear_caches, message_text, smart_trim
from core.transcript.normalize import normalize_message
from core.transcript.tokens import estimate_text

if TYPE_CHECKING:
    from core.transcript.message import Message


def _vocabulary(rng: random.Random, size: int = 3000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = ["".join(rng.choice(letters) for _ in range(rng.randint(3, 10))) for _ in range(size)]
    idents = [f"{rng.choice(FUNCS)}{w.capitalize()}" for w in words[:300]]
    return words + idents + FILES + FUNCS + [n for noun in NOUNS for n in noun.split()]


def _filler(rng: random.Random, vocab: list[str], chars: int, code: bool) -> str:
    out: list[str] = []
    used = 0
    while used < chars:
        if code and rng.random() < 0.15:
            piece = f"\n    {rng.choice(FUNCS)}({rng.choice(vocab)}, {rng.choice(vocab)})"
        elif rng.random() < 0.4:
            piece = rng.choice(WORDS)
        elif rng.random() < 0.02:
            piece = rng.choice(ERRORS)
        else:  # a Zipf-ish pick: low ranks far more often
            piece = vocab[min(int(rng.paretovariate(1.1)) - 1, len(vocab) - 1)]
        out.append(piece)
        used += len(piece) + 1
    return " ".join(out)


def build_context(messages: int = 2000, tokens: int = 200_000, seed: int = 7) -> list[Message]:
    """A seeded context of about *messages* messages and *tokens* memory-context tokens."""
    rng = random.Random(seed)
    vocab = _vocabulary(rng)
    rng.shuffle(vocab)
    per = tokens * 3 / max(messages, 1)  # chars a message, on average
    raws: list[dict[str, Any]] = []
    call = 0
    ts = 1_765_000_000_000
    while len(raws) < messages:
        ts += 60_000
        prompt = f"{rng.choice(VERBS)} the {rng.choice(NOUNS)} in {rng.choice(FILES)}. "
        raws.append(
            {
                "role": "user",
                "content": prompt + _filler(rng, vocab, int(per * 0.4), False),
                "timestamp": ts,
            }
        )
        for _ in range(rng.randint(1, 4)):
            calls = []
            for _ in range(rng.choice((1, 1, 1, 2, 3))):
                call += 1
                args = {"path": rng.choice(FILES), "pattern": rng.choice(FUNCS)}
                calls.append(
                    {"type": "toolCall", "id": f"call_{call}", "name": "read", "arguments": args}
                )
            text = _filler(rng, vocab, int(per * 0.5), False)
            raws.append(
                {
                    "role": "assistant",
                    "content": [{"type": "text", "text": text}, *calls],
                    "timestamp": ts,
                }
            )
            for c in calls:
                body = _filler(rng, vocab, int(per * rng.uniform(0.6, 2.4)), True)
                raws.append(
                    {
                        "role": "toolResult",
                        "toolCallId": c["id"],
                        "toolName": "read",
                        "content": [{"type": "text", "text": body}],
                        "isError": False,
                        "timestamp": ts,
                    }
                )
        answer = _filler(rng, vocab, int(per * 0.8), False)
        raws.append(
            {"role": "assistant", "content": [{"type": "text", "text": answer}], "timestamp": ts}
        )
    return [normalize_message(r) for r in raws[:messages]]


def _timed(context: list[Message]) -> tuple[float, TrimResult]:
    window = sum(estimate_text(message_text(m)) for m in context)  # just over the limit
    t = time.perf_counter()
    result = smart_trim(context, window=window)
    return time.perf_counter() - t, result


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


def run(messages: int, tokens: int, runs: int) -> dict[str, object]:
    context = build_context(messages, tokens)
    total = sum(estimate_text(message_text(m)) for m in context)
    # The agent trims before every model call: each call's context is the last
    # one plus a turn. Timed runs walk the last `runs` turns up to the full context.
    step = max(1, min(4, messages // (2 * (runs + 1))))
    sizes = [messages - (runs - r) * step for r in range(runs + 1)]
    clear_caches()
    _timed(context[: sizes[0]])  # the call before the first timed one
    turns = sorted(_timed(context[:size])[0] for size in sizes[1:])
    repeats = sorted(_timed(context)[0] for _ in range(runs))
    colds = []
    for _ in range(min(runs, 5)):
        clear_caches()
        seconds, result = _timed(context)
        colds.append(seconds)
    return {
        "benchmark": "trim",
        "messages": len(context),
        "tokens": total,
        "window": total,
        "tokens_after": result.tokens_after,
        "decisions": result.counts(),
        "p50_ms": _ms(statistics.median(turns)),
        "p95_ms": _ms(turns[math.ceil(0.95 * len(turns)) - 1]),  # nearest rank
        "p50_means": f"a trim before each model call: the context grows by {step} messages "
        "a call, the messages seen by the call before are not tokenized again",
        "target_p50_ms": 50,
        "repeat_p50_ms": _ms(statistics.median(repeats)),
        "repeat_means": "the same context again (another window, as when the user moves it)",
        "cold_p50_ms": _ms(statistics.median(colds)),
        "cold_means": "trim's caches emptied: every message text tokenized again",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--tokens", type=int, default=None, help="default: 100 per message")
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args(argv)
    tokens = args.tokens if args.tokens is not None else 100 * args.messages
    sys.stdout.buffer.write(orjson.dumps(run(args.messages, tokens, max(args.runs, 1))) + b"\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
