"""Records, jobs and Qt models of the memory index view (:mod:`.memory_index_view`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QFont
from typing_extensions import override

from core.openclaw.memindex import open_memory_index
from widgets.common.record_model import Column, RecordTableModel

if TYPE_CHECKING:
    from pathlib import Path

    from core.io.problems import Problem
    from core.openclaw.memindex_records import CacheEntry, FileState, IndexChunk
    from core.openclaw.memsearch_records import MemoryCandidate

Index = QModelIndex
GREY = QColor("#8a8a8a")
STATE_COLORS = {"stale": "#b26a00", "missing": "#c62828", "new-unindexed": "#1565c0"}
WARN_STYLE = "color:#b26a00;"


def agent_of(path: Path) -> str:
    """The agent an index belongs to: ``agents/<id>/agent/…`` or ``memory/<id>.sqlite``."""
    if path.name == "openclaw-agent.sqlite" and path.parent.name == "agent":
        return path.parent.parent.name
    return path.stem


def utc_text(ms: float | None) -> str:
    """Epoch milliseconds as ``YYYY-MM-DD HH:MM:SS`` (UTC); empty for None."""
    if ms is None:
        return ""
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S")


def _num(value: float | None, digits: int = 4) -> str:
    return "" if value is None else f"{value:.{digits}f}"


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What the tabs show of one index (read once, in a worker)."""

    path: Path
    files: list[FileState]
    chunks: list[IndexChunk]
    cache: list[CacheEntry]
    meta: list[tuple[str, str]]
    problems: list[Problem]


def load_snapshot(path: Path, workspace: Path | None, cache_limit: int = 5000) -> Snapshot:
    """Read an index for the view (never writes; FormatError when it cannot be read)."""
    with open_memory_index(path) as idx:
        meta = idx.meta_dict()
        vector = idx.vector_state()
        rows = [
            ("Provider", str(meta.get("provider", ""))),
            ("Model", str(meta.get("model", ""))),
            ("Vector dims", str(meta.get("vectorDims", "") or "(none: FTS-only)")),
            ("Chunk tokens", str(meta.get("chunkTokens", ""))),
            ("Chunk overlap", str(meta.get("chunkOverlap", ""))),
            ("FTS tokenizer", idx.fts_tokenizer()),
            ("Indexed sources", ", ".join(map(str, meta.get("sources") or [])) or "memory"),
            ("Vector index", str(vector.get("state"))),
            ("Embedding cache entries", f"{idx.cache_count():,}"),
            ("Layout", idx.layout.name),
            ("Schema version", str(idx.schema_version)),
            ("Database", str(path)),
        ]
        known = {"provider", "model", "vectorDims", "chunkTokens", "chunkOverlap", "ftsTokenizer"}
        rows += [(f"meta: {k}", str(v)) for k, v in meta.items() if k not in known | {"sources"}]
        return Snapshot(
            path,
            idx.file_states(workspace),
            idx.chunks(),
            idx.cache_entries(limit=cache_limit),
            rows,
            [*idx.problems, *idx.embedding_problems()],
        )


# -- models -------------------------------------------------------------------------


class CandidateModel(RecordTableModel["MemoryCandidate"]):
    """Search candidates in rank order: every score component; below minScore greyed."""

    def __init__(self, parent: Any = None) -> None:
        def lines(c: MemoryCandidate) -> str:
            return f"{c.hit.start_line}-{c.hit.end_line}"

        super().__init__(
            [
                Column("#", lambda c: c.order, align_right=True, thousands=False),
                Column("Path", lambda c: c.hit.path),
                Column("Lines", lines, lambda c: (c.hit.path, c.hit.start_line)),
                Column("Score", lambda c: _num(c.score), lambda c: c.score, True),
                Column("Vector", lambda c: _num(c.vector_score), lambda c: c.vector_score, True),
                Column(
                    "Text (bm25)", lambda c: f"{c.text_score:.4g}", lambda c: c.text_score, True
                ),
                Column("Keyword", lambda c: _num(c.keyword_score), lambda c: c.keyword_score, True),
                Column("Path score", lambda c: _num(c.path_score), lambda c: c.path_score, True),
                Column("Exact path", lambda c: c.exact or "", lambda c: c.exact, True, False),
                Column("Decay", lambda c: _num(c.decay), lambda c: c.decay, True),
                Column(
                    "Age (days)", lambda c: _num(c.age_days, 1), lambda c: c.age_days or -1, True
                ),
                Column(
                    "Importance x",
                    lambda c: _num(c.importance_multiplier, 2),
                    lambda c: c.importance_multiplier,
                    True,
                ),
                Column("Result", self._verdict),
            ],
            parent,
        )

    @staticmethod
    def _verdict(c: MemoryCandidate) -> str:
        if c.selected:
            return "returned" + (" (keyword fill)" if c.below_min_score else "")
        return "below minScore" if c.below_min_score else "past maxResults"

    @override
    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # type: ignore[override]
        if index.isValid() and role == Qt.ItemDataRole.ForegroundRole:
            c = self.record(index.row())
            return QBrush(GREY) if c.below_min_score and not c.selected else None
        if (
            index.isValid()
            and role == Qt.ItemDataRole.FontRole
            and self.record(index.row()).selected
        ):
            font = QFont()
            font.setBold(True)
            return font
        if index.isValid() and role == Qt.ItemDataRole.ToolTipRole:
            c = self.record(index.row())
            return (
                f"score {c.score!r}\nvectorScore {c.vector_score!r}\ntextScore {c.text_score!r}\n"
                f"keyword score {c.keyword_score!r}\ncontent {c.content_score!r}\n"
                f"decay {c.decay!r} ({c.time_from})\nranking score {c.ranking_score!r}"
            )
        return super().data(index, role)


def _file_size(s: FileState) -> int | None:
    return s.indexed.size if s.indexed else s.disk_size


def _indexed_mtime(s: FileState) -> str:
    return utc_text(s.indexed.mtime_ms if s.indexed else None)


class FileModel(RecordTableModel["FileState"]):
    """Indexed files and their state against the workspace (coloured)."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(
            [
                Column("Path", lambda s: s.path),
                Column("Source", lambda s: s.source),
                Column("Size", _file_size, lambda s: _file_size(s) or 0, True),
                Column("Indexed mtime (UTC)", _indexed_mtime),
                Column("Workspace", lambda s: s.state),
            ],
            parent,
        )  # fmt: skip

    @override
    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # type: ignore[override]
        if index.isValid() and role == Qt.ItemDataRole.ForegroundRole and index.column() == 4:
            color = STATE_COLORS.get(self.record(index.row()).state)
            return QBrush(QColor(color)) if color else None
        return super().data(index, role)


def chunk_model(parent: Any = None) -> RecordTableModel[IndexChunk]:
    """Chunks: path, line range, model, a one-line preview of the text."""
    return RecordTableModel(
        [
            Column("Path", lambda c: c.path),
            Column(
                "Lines", lambda c: f"{c.start_line}-{c.end_line}", lambda c: (c.path, c.start_line)
            ),
            Column("Source", lambda c: c.source),
            Column("Model", lambda c: c.model or ""),
            Column("Text", lambda c: " ".join(c.text.split())[:160]),
        ],
        parent,
    )


def cache_model(parent: Any = None) -> RecordTableModel[CacheEntry]:
    """Embedding cache rows (the vectors themselves are not shown)."""
    return RecordTableModel(
        [
            Column("Provider", lambda e: e.provider),
            Column("Model", lambda e: e.model),
            Column("Chunk hash", lambda e: e.hash[:16]),
            Column("Dims", lambda e: e.dims, align_right=True),
            Column("Bytes", lambda e: e.bytes, align_right=True),
            Column("Stored", lambda e: e.state),
            Column("Updated (UTC)", lambda e: utc_text(e.updated_at)),
        ],
        parent,
    )


def meta_model(parent: Any = None) -> RecordTableModel[tuple[str, str]]:
    """Key/value rows of the index's meta."""
    return RecordTableModel(
        [Column("Key", lambda r: r[0]), Column("Value", lambda r: r[1])], parent
    )
