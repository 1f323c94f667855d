"""Benchmark: :func:`core.safety.redact.redact` on ~1 MB of transcript text.

A seeded pi-shaped session serialised as JSONL (user prompts, assistant text,
tool calls, tool results with code and command output), with a fake secret of
some common shape every ~50 lines, as memlens redacts it before archiving or
sending. ``--file`` times a real transcript instead. Also times adversarial
inputs of the same size (long runs built from the patterns' own prefixes), which
must stay linear. Prints one JSON object; ``*_ms`` are medians over ``--runs``.

    python -m bench.bench_redact [--bytes 1000000] [--runs 5] [--file session.jsonl]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

import orjson

from bench.corpus import ERRORS, FILES, FUNCS, NOUNS, VERBS, WORDS
from core.safety.redact import redact

# Visibly fake secrets, one of each common shape.
SECRETS = [
    "export OPENAI_API_KEY=sk-proj-FAKEfake0123456789FAKEfake0123456789",
    "Authorization: Bearer FAKEfakeFAKEfake0123456789",
    "ghp_FAKEfakeFAKEfake0123456789FAKEfake0123",
    "postgres://app:FAKEpassword@db:5432/app",
    "AKIAFAKEFAKEFAKEFAKE wJalrXUtnFEMI/K7MDENG/bPxRfiCYFAKEFAKEKEY",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJGQUtFIn0.FAKE_fake-FAKE_fake-FAKE",
    'DATABASE_PASSWORD="fake horse battery"',
    "-----BEGIN PRIVATE KEY-----\nMIIEFAKEFAKEFAKE\nFAKEFAKE==\n-----END PRIVATE KEY-----",
]


def _text(rng: random.Random, words: int) -> str:
    pool = WORDS + NOUNS + FUNCS + FILES
    return " ".join(rng.choice(pool) for _ in range(words))


def _code(rng: random.Random, lines: int) -> str:
    out = []
    for _ in range(lines):
        f, a = rng.choice(FUNCS), rng.choice(FUNCS)
        out.append(f"    const {a} = await {f}(ctx, '{rng.choice(FILES)}'); // {_text(rng, 4)}")
    if rng.random() < 0.2:
        out.append(rng.choice(ERRORS))
    return "\n".join(out)


def build_transcript(size: int, seed: int = 11) -> str:
    """A seeded pi-shaped JSONL transcript of about *size* characters."""
    rng = random.Random(seed)
    lines: list[bytes] = []
    used = 0
    n = 0
    while used < size:
        n += 1
        if n % 4 == 1:
            text = f"{rng.choice(VERBS)} the {rng.choice(NOUNS)} in {rng.choice(FILES)}. "
            message = {"role": "user", "content": [{"type": "text", "text": text}]}
        elif n % 4 == 2:
            call = {
                "type": "toolCall",
                "id": f"call_{n}",
                "name": "bash",
                "arguments": {"command": f"rg -n {rng.choice(FUNCS)} {rng.choice(FILES)}"},
            }
            message = {
                "role": "assistant",
                "content": [{"type": "text", "text": _text(rng, 40)}, call],
            }
        else:
            body = _code(rng, rng.randint(5, 40))
            if n % 50 == 3:
                body += "\n" + rng.choice(SECRETS)
            message = {"role": "toolResult", "content": [{"type": "text", "text": body}]}
        line = orjson.dumps({"type": "message", "id": f"{n:08x}", "message": message})
        lines.append(line)
        used += len(line) + 1
    return b"\n".join(lines).decode()


def adversarial(size: int) -> dict[str, str]:
    """Inputs built from the patterns' own prefixes, repeated to *size* chars."""
    units = {
        "dashes": "a-",
        "eyj_dots": "eyJa.",
        "sk_runs": "sk-",
        "begin_without_end": "-----BEGIN PRIVATE KEY-----\nAAAA\n",
        "url_userinfo": "://a:",
        "key_labels": "TOKEN=",
        "akia_without_secret": "AKIAAAAAAAAAAAAAAAAA ",
        "long_word": "A",
        "markers": "[REDACTED_B64]-",
    }
    return {name: unit * (size // len(unit)) for name, unit in units.items()}


def _median_ms(text: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        redact(text)
        times.append(time.perf_counter() - t)
    return round(statistics.median(times) * 1000, 3)


def run(size: int, runs: int, file: Path | None) -> dict[str, object]:
    text = file.read_text(encoding="utf-8") if file else build_transcript(size)
    once = redact(text)
    return {
        "benchmark": "redact",
        "source": str(file) if file else "synthetic",
        "chars": len(text),
        "masks": sum(once.count(m) for m in ("[REDACTED]", "[REDACTED_HEX]", "[REDACTED_B64]")),
        "p50_ms": _median_ms(text, runs),
        "mb_per_s": round(len(text) / 1e6 / max(_median_ms(text, 1) / 1000, 1e-9), 2),
        "adversarial_ms": {k: _median_ms(v, 1) for k, v in adversarial(size).items()},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bytes", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--file", type=Path, default=None)
    args = parser.parse_args(argv)
    result = run(max(args.bytes, 1000), max(args.runs, 1), args.file)
    sys.stdout.buffer.write(orjson.dumps(result) + b"\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
