"""A small slice of LoCoMo's dev half as a memlens data directory (read, never written).

``../shared/datasets/locomo-dev`` is the labelled recall set the brief gives us; tests
copy one conversation's first turns and the questions whose evidence lies among them
into a folder of their own.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

LOCOMO = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "locomo-dev"


@dataclass(frozen=True, slots=True)
class Slice:
    """The data directory, its store folder, the labels written there, their session."""

    home: Path
    store: Path
    labels_path: Path
    labels: list[dict[str, Any]]
    session: str


def need_locomo() -> None:
    """Skip without the dataset (CI fails instead: it has shared/ beside the repo)."""
    if not (LOCOMO / "segments.jsonl").exists():
        if os.environ.get("CI"):
            pytest.fail(f"{LOCOMO} is missing: CI has shared/ beside the repo")
        pytest.skip(f"{LOCOMO} is not here")


def make_slice(home: Path, turns: int = 150) -> Slice:
    """Write the slice under *home*: ``memory/context/segments.jsonl`` and ``labels.jsonl``."""
    need_locomo()
    rows = [orjson.loads(x) for x in (LOCOMO / "segments.jsonl").read_bytes().splitlines() if x]
    session = rows[0]["sessionId"]
    kept = [r for r in rows if r["sessionId"] == session][:turns]
    ids = {r["id"] for r in kept}
    lines = (LOCOMO / "labels.jsonl").read_bytes().splitlines()
    labels = [
        lab
        for lab in (orjson.loads(x) for x in lines if x)
        if lab["session"] == session and set(lab["relevant"]) <= ids
    ]
    store = home / "memory" / "context"
    store.mkdir(parents=True)
    (store / "segments.jsonl").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in kept))
    (home / "openclaw.json").write_text("{agents: {defaults: {memoryContext: {}}}}")
    path = store / "labels.jsonl"
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in labels))
    return Slice(home, store, path, labels, session)
