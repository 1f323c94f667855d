"""Benchmark: the session timeline of a 5,000-message session.

A seeded pi-shaped v3 transcript: user prompts, assistant steps (some with
thinking) with tool calls and results, bash executions, custom messages,
assistant ``usage`` that follows the context, a compaction each time the context
passes 180,000 tokens and one abandoned branch. Measures building the core arrays
(:func:`core.timeline.arrays.build_timeline`), ``set_timeline`` (every ``setData``) and
offscreen paints of the whole view at 1600 x 800: zoomed out (peak-downsampled)
and zoomed in to 200 messages (clipped to the view). Prints one JSON object.

    python -m bench.bench_timeline [--messages 5000] [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from typing import Any

import orjson

from bench.corpus import FILES, FUNCS, NOUNS, VERBS, WORDS
from core.timeline.arrays import Category, build_timeline
from core.transcript import Session, parse_transcript
from core.transcript.normalize import normalize_message
from core.transcript.tokens import estimate_message

TRIGGER = 180_000
KEEP = 20_000
SYSTEM = 9_000


def _text(rng: random.Random, chars: int) -> str:
    out: list[str] = []
    used = 0
    while used < chars:
        word = rng.choice(WORDS) if rng.random() < 0.7 else rng.choice(FUNCS)
        out.append(word)
        used += len(word) + 1
    return " ".join(out)


class _Writer:
    """Appends entries, tracks pi's estimate of the context and compacts like pi."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.lines: list[dict[str, Any]] = []
        self.leaf: str | None = None
        self.ctx: list[tuple[str, int]] = []  # (entry id, estimate) in context
        self.messages = 0
        self.ts = 1_765_000_000_000
        self.calls = 0

    def entry(self, kind: str, **fields: Any) -> str:
        eid = f"{len(self.lines) + 1:08x}"
        self.ts += self.rng.randint(200, 20_000)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(self.ts / 1000)) + ".000Z"
        line = {"type": kind, "id": eid, "parentId": self.leaf, "timestamp": stamp, **fields}
        self.lines.append(line)
        self.leaf = eid
        return eid

    def context(self) -> int:
        return SYSTEM + sum(t for _, t in self.ctx)

    def message(self, msg: dict[str, Any]) -> str:
        msg["timestamp"] = self.ts
        if msg["role"] == "assistant":
            total = self.context() + self.rng.randint(20, 400)
            msg["usage"] = {"input": 12, "output": 300, "cacheRead": total - 312,
                            "cacheWrite": 0, "totalTokens": total}  # fmt: skip
            msg.setdefault("stopReason", "toolUse")
        eid = self.entry("message", message=msg)
        self.ctx.append((eid, estimate_message(normalize_message(msg))))
        self.messages += 1
        if self.context() > TRIGGER:
            self.compact()
        return eid

    def compact(self) -> None:
        before = self.context()
        acc, cut = 0, len(self.ctx) - 1
        for i in range(len(self.ctx) - 1, 0, -1):
            acc += self.ctx[i][1]
            if acc >= KEEP:
                cut = i
                break
        summary = "## Decisions\n" + _text(self.rng, 6000)
        kept = self.ctx[cut:]
        s_tok = len(summary) // 4
        eid = self.entry(
            "compaction",
            summary=summary,
            firstKeptEntryId=kept[0][0],
            tokensBefore=before,
            tokensAfter=SYSTEM + s_tok + sum(t for _, t in kept),
        )
        self.ctx = [(eid, s_tok), *kept]

    def turn(self) -> None:
        rng = self.rng
        prompt = f"{rng.choice(VERBS)} the {rng.choice(NOUNS)} in {rng.choice(FILES)}. "
        self.message({"role": "user", "content": [{"type": "text", "text": prompt}]})
        for _ in range(rng.randint(1, 4)):
            blocks: list[dict[str, Any]] = []
            if rng.random() < 0.35:
                blocks.append({"type": "thinking", "thinking": _text(rng, rng.randint(200, 3000))})
            if rng.random() < 0.5:
                blocks.append({"type": "text", "text": _text(rng, rng.randint(60, 600))})
            ids = []
            for _ in range(rng.choice((1, 1, 2, 3))):
                self.calls += 1
                ids.append(f"call_{self.calls}")
                args = {"path": rng.choice(FILES)}
                blocks.append(
                    {"type": "toolCall", "id": ids[-1], "name": "read", "arguments": args}
                )
            self.message({"role": "assistant", "content": blocks})
            for cid in ids:
                body = _text(rng, int(rng.paretovariate(1.3) * 900))
                content = [{"type": "text", "text": body}]
                self.message(
                    {
                        "role": "toolResult",
                        "toolCallId": cid,
                        "toolName": "read",
                        "content": content,
                    }
                )
        if rng.random() < 0.08:
            self.message({"role": "bashExecution", "command": "pytest -q", "exitCode": 0,
                          "output": _text(rng, rng.randint(100, 4000))})  # fmt: skip
        if rng.random() < 0.03:
            note = _text(rng, 300)
            eid = self.entry("custom_message", customType="reminder", display=True,
                             content=[{"type": "text", "text": note}])  # fmt: skip
            self.ctx.append((eid, len(note) // 4))
            self.messages += 1
        answer = [{"type": "text", "text": _text(rng, rng.randint(100, 1500))}]
        self.message({"role": "assistant", "content": answer, "stopReason": "stop"})

    def branch(self) -> None:
        """Go back a few entries, as a user retrying from an earlier point."""
        back = self.lines[-8]
        self.leaf = back["id"]
        self.ctx = [c for c in self.ctx if c[0] <= back["id"]]
        summary = "The user went back: " + _text(self.rng, 300)
        self.ctx.append((self.entry("branch_summary", fromId=self.lines[-1]["id"],
                                    summary=summary), len(summary) // 4))  # fmt: skip
        self.messages += 1


def synthetic_session(messages: int = 5000, seed: int = 11) -> Session:
    """A seeded v3 session of about *messages* messages (compactions, one branch)."""
    w = _Writer(seed)
    branched = False
    while w.messages < messages:
        w.turn()
        if not branched and w.messages > messages * 0.6:
            w.branch()
            branched = True
    header = {"type": "session", "version": 3, "id": f"bench-{seed}", "timestamp":
              "2025-12-06T05:46:40.000Z", "cwd": "/work"}  # fmt: skip
    data = b"\n".join(orjson.dumps(x) for x in [header, *w.lines]) + b"\n"
    return parse_transcript(data, f"<synthetic {messages}>")


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def run(messages: int, runs: int) -> dict[str, object]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from widgets.timeline.view import TimelineView

    app = QApplication.instance() or QApplication([])
    session = synthetic_session(messages)
    builds = []
    for _ in range(runs):
        t = time.perf_counter()
        timeline = build_timeline(session)
        builds.append(time.perf_counter() - t)
    view = TimelineView()
    view.resize(1600, 800)
    view.show()
    app.processEvents()
    sets, full, zoomed = [], [], []
    for _ in range(runs):
        t = time.perf_counter()
        view.set_timeline(timeline)
        sets.append(time.perf_counter() - t)
        t = time.perf_counter()
        view.grab()
        full.append(time.perf_counter() - t)
    bars = view._bars[Category.TOOL_RESULT]  # drawn vs original points
    shown_full = len(bars._getDisplayDataset().x)
    mid = len(timeline) // 2
    for i in range(runs):
        start = mid + 40 * i
        view._ctx_plot.setXRange(start, start + 200, padding=0)
        t = time.perf_counter()
        view.grab()
        zoomed.append(time.perf_counter() - t)
    shown_zoomed = len(bars._getDisplayDataset().x)
    view.close()
    return {
        "benchmark": "timeline",
        "messages": len(timeline),
        "entries": len(session.entries),
        "compactions": len(timeline.compactions),
        "branches": len(timeline.branches),
        "build_ms_p50": _ms(statistics.median(builds)),
        "set_timeline_ms_p50": _ms(statistics.median(sets)),
        "paint_full_ms_p50": _ms(statistics.median(full)),
        "paint_zoomed_200_ms_p50": _ms(statistics.median(zoomed)),
        "tool_result_points": {
            "original": len(bars.getOriginalDataset()[0]),
            "drawn_full": shown_full,
            "drawn_zoomed": shown_zoomed,
        },
        "size_px": [1600, 800],
        "paint_means": "QWidget.grab() of the whole view, offscreen platform",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    result = run(max(args.messages, 1), max(args.runs, 1))
    sys.stdout.buffer.write(orjson.dumps(result) + b"\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
