"""Golden queries: "this should be found for this query", kept beside the store.

A developer marks, in the Recall view, a segment the agent should recall for a
query. The mark is one line of ``labels.jsonl`` in the store's folder, the labels
format of ``memlens eval`` and the recall lab (``{query, relevant, session}``), so
that the same file measures every ranking. memlens appends the line (one whole line
in one write, the query redacted); it never rewrites the file.

:func:`check_golden` says which golden queries the current settings still find:
the segment among the hits recall would use (after minScore and the limit). A
query found under the previous settings and lost under the new ones is a
regression (:func:`lost`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from core.io import jsonio
from core.io.fsutil import append_lines
from core.recall.evaluate import Label, load_labels
from core.recall.rankings import get_ranking, ranked_search
from core.safety.redact import redact

if TYPE_CHECKING:
    from core.io.fsutil import AppendResult
    from core.io.problems import Problem
    from core.recall.engine import RecallSettings
    from core.recall.warm_store import WarmStore

GOLDEN_FILE = "labels.jsonl"


def golden_path(store: WarmStore) -> Path:
    """The labels file of *store*'s folder."""
    return Path(store.folder) / GOLDEN_FILE


def read_golden(path: Path) -> tuple[list[Label], list[Problem]]:
    """The golden queries of *path* (none when the file does not exist yet).

    Raises
    ------
    FormatError
        When the file exists but cannot be read or holds no usable label.
    """
    if not path.exists():
        return [], []
    return load_labels(path)


def add_golden(path: Path, query: str, segment_id: str, session: str | None) -> AppendResult:
    """Append "*segment_id* should be found for *query*" (in *session*; None: any).

    The query is redacted first. Raises ``ValueError`` for an empty query or id and
    ``OSError`` when the file cannot be written (nothing is appended then).
    """
    text = redact(query.strip())
    if not text or not segment_id.strip():
        raise ValueError("a golden query needs a query and a segment id")
    record: dict[str, object] = {"query": text, "relevant": [segment_id.strip()]}
    if session is not None:
        record["session"] = session
    return append_lines(path, jsonio.dumps_line(record))


@dataclass(frozen=True, slots=True)
class GoldenCheck:
    """One golden query under some settings."""

    label: Label
    found: bool
    rank: int | None
    """1-based place of its first relevant segment among the hits (None: not a hit)."""


def check_golden(
    store: WarmStore, labels: list[Label], settings: RecallSettings, *, now_ms: int | None = None
) -> list[GoldenCheck]:
    """Which of *labels* recall with *settings* finds (its segment among the hits)."""
    base = settings.search_config()
    ranking = get_ranking(settings.ranking)
    out = []
    for label in labels:
        cfg = replace(base, cross_session=base.cross_session or label.session is None)
        result = ranked_search(
            store, label.query, cfg, ranking, session_id=label.session, now_ms=now_ms
        )
        ids = [h.segment.id for h in result.hits]
        rank = next((i for i, sid in enumerate(ids, 1) if sid in label.relevant), None)
        out.append(GoldenCheck(label, rank is not None, rank))
    return out


def lost(before: list[GoldenCheck], after: list[GoldenCheck]) -> list[Label]:
    """Golden queries *before* found and *after* does not (the same labels file)."""
    was = {(c.label.line, c.label.query) for c in before if c.found}
    return [c.label for c in after if not c.found and (c.label.line, c.label.query) in was]
