"""A seeded corpus of coding-agent chat turns, for the recall benchmarks."""

from __future__ import annotations

import random
import uuid
from typing import TYPE_CHECKING

from core.embed import hashembed
from core.store.segments import append_segments, make_segment
from core.store.vectors import write_vectors

if TYPE_CHECKING:
    from pathlib import Path

FILES = [
    "src/core/agent-session.ts",
    "app/services/pricing.py",
    "core/recall/bm25.py",
    "packages/tui/src/editor.ts",
    "internal/cache/lru.go",
    "src/render.rs",
    "tests/test_invoices.py",
    "docs/theme.md",
    "web/src/chart.tsx",
    "cmd/worker/main.go",
]
FUNCS = [
    "apply_discount",
    "createInvoice",
    "parseSegments",
    "evictIfNeeded",
    "renderPdf",
    "hybridSearch",
    "compactSession",
    "loadVectors",
    "retryWithBackoff",
    "getUserName",
]
ERRORS = [
    "TypeError: cannot read properties of undefined",
    "AssertionError: 12.99 != 13.00",
    "ENOENT: no such file or directory",
    "panic: index out of range",
    "error[E0502]: cannot borrow as mutable",
    "TimeoutError after 30s",
]
VERBS = ["fix", "refactor", "test", "document", "profile", "rename", "split", "review", "port"]
NOUNS = [
    "parser",
    "cache",
    "retry loop",
    "invoice total",
    "chart",
    "session store",
    "theme",
    "editor",
    "queue consumer",
    "token budget",
    "compaction",
    "vector index",
    "schema",
]
WORDS = (
    "the a to of and in is it that for on with this we should now please also then "
    "because after before when which can not but so just"
).split()


def turn(rng: random.Random) -> str:
    """One plausible chat turn."""
    parts = [
        f"{rng.choice(VERBS)} the {rng.choice(NOUNS)} in {rng.choice(FILES)}",
        f"{rng.choice(FUNCS)}() {rng.choice(['fails', 'returns None', 'is slow', 'works'])}",
        rng.choice(ERRORS) if rng.random() < 0.3 else "",
        " ".join(rng.choice(WORDS + NOUNS) for _ in range(rng.randint(5, 30))),
    ]
    rng.shuffle(parts)
    return ". ".join(p for p in parts if p)


def write_store(
    folder: Path, count: int, seed: int = 3, now_ms: int = 1_790_000_000_000, sessions: int = 12
) -> list[str]:
    """Write segments.jsonl and vectors.bin (hash) with *count* segments; returns ids."""
    rng = random.Random(seed)
    ids = (str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(count * 2))
    segs = []
    for i in range(count):
        segs.append(
            make_segment(
                f"session-{i % sessions}",
                "user" if i % 2 else "assistant",
                f"{turn(rng)} #{i}",
                timestamp=now_ms - (count - i) * 60_000,
                new_id=lambda: next(ids),
            )
        )
    folder.mkdir(parents=True, exist_ok=True)
    append_segments(folder / "segments.jsonl", segs)
    write_vectors(
        folder / "vectors.bin",
        [s.id for s in segs],
        hashembed.embed_many([s.content for s in segs]),
        hashembed.DIM,
    )
    return [s.id for s in segs]


def queries(n: int, seed: int = 4) -> list[str]:
    """*n* search queries in the style of the corpus."""
    rng = random.Random(seed)
    return [f"{rng.choice(VERBS)} {rng.choice(NOUNS)} {rng.choice(FUNCS)}" for _ in range(n)]
