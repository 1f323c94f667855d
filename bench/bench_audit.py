"""Benchmark: the loss audit of a compaction that summarised ~100,000 tokens.

A seeded pi transcript: user prompts naming files and functions, assistant turns
with text (decisions, TODOs, inline code, numbers with units) and read, edit and
bash tool calls, tool results carrying code, some of them failures; then a
compaction entry whose summary keeps part of it, 20 kept messages and a few
later turns. ``memlens audit`` on it: load excluded, the replay that finds what
the compaction replaced included. Also, when ``shared/fixtures`` sits beside the
repo, the audit of each compaction of the real pi fixture (115,166 and 122,818
summarised tokens). Prints one JSON object. Target: <= 1 s, offline.

    python -m bench.bench_audit [--tokens 100000] [--runs 5] [--no-fixtures]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from bench.corpus import ERRORS, FILES, FUNCS, NOUNS, VERBS, WORDS
from core.compaction.audit import audit_compaction
from core.transcript import load_transcript
from core.transcript.normalize import normalize_message
from core.transcript.tokens import estimate_message

TARGET_S = 1.0
STAMP = "2026-01-01T00:00:00.000Z"
FIXTURE = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "pi-v1"


def _prose(rng: random.Random, chars: int) -> str:
    out: list[str] = []
    used = 0
    while used < chars:
        r = rng.random()
        if r < 0.05:
            piece = f"`{rng.choice(FUNCS)}()`"
        elif r < 0.08:
            piece = rng.choice(FILES)
        elif r < 0.09:
            piece = f"{rng.randint(2, 900)} ms"
        elif r < 0.1:
            piece = f"{rng.choice(['We decided to', 'Let us use', 'TODO:'])} {rng.choice(NOUNS)}."
        else:
            piece = rng.choice(WORDS)
        out.append(piece)
        used += len(piece) + 1
    return " ".join(out)


def _code(rng: random.Random, chars: int) -> str:
    lines: list[str] = []
    used = 0
    while used < chars:
        call = f"{rng.choice(FUNCS)}({rng.choice(WORDS)}, {rng.randint(0, 99)})"
        line = f"    {call}  # {rng.choice(WORDS)}"
        lines.append(line)
        used += len(line) + 1
    return "\n".join(lines)


def build_session(path: Path, tokens: int = 100_000, seed: int = 7) -> dict[str, int]:
    """Write a transcript whose one compaction summarised about *tokens* tokens."""
    rng = random.Random(seed)
    objs: list[dict[str, Any]] = []
    parent: str | None = None
    n = 0
    summarised = 0

    def add(msg: dict[str, Any]) -> int:
        nonlocal parent, n
        n += 1
        entry_id = f"{n:08x}"
        objs.append({"type": "message", "id": entry_id, "parentId": parent, "timestamp": STAMP,
                     "message": msg})  # fmt: skip
        parent = entry_id
        return estimate_message(normalize_message(msg))

    def turn() -> int:
        spent = add({"role": "user", "content": f"{rng.choice(VERBS)} the {rng.choice(NOUNS)} in "
                     f"{rng.choice(FILES)}; {_prose(rng, 200)}"})  # fmt: skip
        for _ in range(rng.randint(1, 3)):
            tool = rng.choice(("read", "read", "edit", "bash"))
            args: dict[str, Any] = (
                {"command": f"pytest {rng.choice(FILES)} -k {rng.choice(FUNCS)}"}
                if tool == "bash"
                else {"path": rng.choice(FILES)}
            )
            call = {"type": "toolCall", "id": f"c{n}", "name": tool, "arguments": args}
            text = {"type": "text", "text": _prose(rng, 500)}
            spent += add({"role": "assistant", "content": [text, call], "stopReason": "toolUse"})
            failed = rng.random() < 0.1
            body = rng.choice(ERRORS) if failed else _code(rng, rng.randint(800, 4000))
            content = [{"type": "text", "text": body}]
            result = {"role": "toolResult", "toolCallId": f"c{n - 1}", "toolName": tool}
            spent += add({**result, "content": content, "isError": failed})
        spent += add({"role": "assistant", "content": [{"type": "text", "text": _prose(rng, 600)}],
                      "stopReason": "stop"})  # fmt: skip
        return spent

    while summarised < tokens:
        summarised += turn()
    first_kept = f"{n + 1:08x}"
    kept = 0
    while kept < 20:
        before = n
        turn()
        kept += n - before
    summary = "## Decisions\n" + "\n".join(f"- {f}" for f in FILES[:5]) + "\n## Exact identifiers\n"
    summary += ", ".join(f"{f}()" for f in FUNCS[:6]) + "\n" + ERRORS[0]
    objs.append({"type": "compaction", "id": "c0mpac7e", "parentId": parent, "timestamp": STAMP,
                 "summary": summary, "firstKeptEntryId": first_kept,
                 "tokensBefore": summarised + 20_000})  # fmt: skip
    parent = "c0mpac7e"
    for _ in range(3):
        turn()
    head = {"type": "session", "version": 3, "id": "bench-audit", "timestamp": STAMP, "cwd": "/w"}
    path.write_bytes(b"\n".join(orjson.dumps(o) for o in [head, *objs]) + b"\n")
    return {"entries": len(objs), "summarised_tokens": summarised}


def _time(session: Any, at: str | None, runs: int) -> tuple[list[float], Any]:
    times = []
    audit = None
    for _ in range(runs):
        t = time.perf_counter()
        audit = audit_compaction(session, at)
        times.append(time.perf_counter() - t)
    return times, audit


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its JSON."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tokens", type=int, default=100_000)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--no-fixtures", action="store_true", help="skip the real pi fixture")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="memlens-bench-audit-") as tmp:
        path = Path(tmp) / "session.jsonl"
        built = build_session(path, args.tokens, args.seed)
        session = load_transcript(path)
        times, audit = _time(session, None, args.runs)
    total = audit.to_json()["total"]
    result: dict[str, Any] = {
        "tokens": args.tokens,
        "summarised_tokens": audit.summarised_tokens,
        "summarised_messages": audit.summarised_messages,
        "entries": built["entries"],
        "items": total["items"],
        "loss": total["loss"],
        "runs": args.runs,
        "p50_s": round(statistics.median(times), 4),
        "max_s": round(max(times), 4),
        "target_s": TARGET_S,
        "fixtures": [],
    }
    if not args.no_fixtures and FIXTURE.is_dir():
        real = load_transcript(FIXTURE / "before-compaction.jsonl")
        for at in ("1", "2"):
            ftimes, faudit = _time(real, at, args.runs)
            result["fixtures"].append(
                {
                    "compaction": faudit.entry_id,
                    "summarised_tokens": faudit.summarised_tokens,
                    "items": len(faudit.items),
                    "p50_s": round(statistics.median(ftimes), 4),
                    "max_s": round(max(ftimes), 4),
                }
            )
    sys.stdout.buffer.write(orjson.dumps(result) + b"\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
