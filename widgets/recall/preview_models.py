"""Table models and plain-words text of the recall preview.

The rows wrap the core records (:class:`core.recall.hybrid.Hit`,
:class:`core.recall.knowledge_search.KnowledgeHit`) with what happened to them
in the block, so one table shows every score component next to the outcome.
"""

from __future__ import annotations

import html
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from PySide6.QtCore import QSortFilterProxyModel, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGroupBox,
    QHeaderView,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from core.io.text import one_line
from core.recall.engine import recall
from core.recall.hybrid import HEADLINES, explain_text
from widgets.common.record_model import Column, SortRole

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from core.recall.block import RecalledBlock
    from core.recall.engine import RecallOutcome, RecallSettings
    from core.recall.hybrid import Hit, SearchResult, SegmentExplanation
    from core.recall.knowledge_search import KnowledgeHit, KnowledgeIndex
    from core.recall.warm_store import WarmStore
    from core.store.segments import Segment
    from widgets.common.tip_model import TipTableModel

T = TypeVar("T")

IN_BLOCK = "in block"
CUT_BY_CAP = "cut by cap"
MISSING_RANK = 1 << 30  # sorts "not in that list" after every real rank
DASH = "\u2013"
TIMES = "\u00d7"
DIVIDE = "\u00f7"
FIT_SAMPLE_ROWS = 50
"""Rows measured to fit a column to its contents (Qt's default is 1,000)."""


# -- records -----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class DetailRow:
    """A detail candidate and its fate: ``in block``, cut by the cap, or rejected."""

    hit: Hit
    status: str
    why: str = ""
    session: str = ""
    """The session's short form (:func:`core.recall.short_ids.short_ids`)."""

    @property
    def rejected(self) -> bool:
        """True when the search itself did not return it (minScore or limit)."""
        return self.status not in (IN_BLOCK, CUT_BY_CAP)


@dataclass(frozen=True, slots=True)
class KnowledgeRow:
    """A knowledge hit and whether the block kept it."""

    hit: KnowledgeHit
    status: str
    why: str = ""

    @property
    def matched_idf(self) -> float:
        """Sum of the idf of the query tokens the fact contains."""
        idf = self.hit.idf
        return sum(idf[t] for t in self.hit.matched)

    @property
    def total_idf(self) -> float:
        """Sum of the idf of every known query token (the score's denominator)."""
        return sum(w.idf for w in self.hit.weights)


@dataclass(frozen=True, slots=True)
class CutRow:
    """An item the hard cap kept out of the block."""

    kind: str
    item: str
    why: str
    ident: str = ""


# -- views ----------------------------------------------------------------------------------
def make_table(model: TipTableModel[Any]) -> QTableView:
    """A sortable, read-only table view over *model* through a proxy."""
    proxy = QSortFilterProxyModel(model)
    proxy.setSourceModel(model)
    proxy.setSortRole(SortRole)
    view = QTableView()
    view.setModel(proxy)
    view.setSortingEnabled(True)
    view.sortByColumn(0, Qt.SortOrder.AscendingOrder)
    view.setAlternatingRowColors(True)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.setWordWrap(False)
    view.verticalHeader().setVisible(False)
    view.verticalHeader().setDefaultSectionSize(view.fontMetrics().height() + 8)
    header = view.horizontalHeader()
    header.setStretchLastSection(True)
    header.setHighlightSections(False)
    header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    header.setResizeContentsPrecision(FIT_SAMPLE_ROWS)
    return view


def fit_columns(view: QTableView) -> None:
    """Size columns to their contents, at most 200 px (the last one stretches).

    Measures the first :data:`FIT_SAMPLE_ROWS` rows (the view's resize precision).
    """
    header = view.horizontalHeader()
    for col in range(header.count() - 1):  # the last one stretches
        view.resizeColumnToContents(col)
        header.resizeSection(col, min(header.sectionSize(col), 200))


def group_box(title: str, *widgets: QWidget, header: QWidget | None = None) -> QGroupBox:
    """A group box holding *widgets* under an optional *header* row."""
    box = QGroupBox(title)
    lay = QVBoxLayout(box)
    lay.setContentsMargins(6, 6, 6, 6)
    lay.setSpacing(4)
    if header is not None:
        lay.addWidget(header)
    for w in widgets:
        lay.addWidget(w)
    return box


# -- columns -------------------------------------------------------------------------------
def f4(value: float) -> str:
    """A score with four decimals."""
    return f"{value:.4f}"


def block_time(ms: int) -> str:
    """A segment's time as the block prints it (UTC)."""
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M")


def _rank(value: int | None) -> str:
    return DASH if value is None else str(value)


DETAIL_COLUMNS: list[tuple[Column[DetailRow], str]] = [
    (
        Column("Rank", lambda r: r.hit.rank, align_right=True, thousands=False),
        "Rank among all candidates by final score (1 = best).",
    ),
    (
        Column("Segment", lambda r: r.hit.segment.id[:8], lambda r: r.hit.segment.id),
        "Segment id (first 8 characters; the tooltip has the whole id).",
    ),
    (
        Column(
            "Session",
            lambda r: r.session or r.hit.segment.session_id[:8],
            lambda r: r.hit.segment.session_id,
        ),
        "Session the segment was archived from: the shortest prefix (8 characters or more)\n"
        "that no other session of the store shares; the tooltip has the whole id.",
    ),
    (
        Column("Vector", lambda r: f4(r.hit.vector_score), lambda r: r.hit.vector_score, True),
        "Cosine similarity of the query and segment embeddings\n"
        "(0 when the segment is not among the top 2 * limit by cosine).",
    ),
    (
        Column("BM25", lambda r: f4(r.hit.bm25_raw), lambda r: r.hit.bm25_raw, True),
        "BM25 (raw): BM25 score of the segment's text for the query tokens\n"
        "(0 when not among the top 2 * limit by BM25).",
    ),
    (
        Column("BM25 n", lambda r: f4(r.hit.bm25_norm), lambda r: r.hit.bm25_norm, True),
        "BM25 normalised: BM25 divided by the largest BM25 score\n"
        "among the BM25 candidates (0 to 1).",
    ),
    (
        Column("Decay", lambda r: f4(r.hit.decay), lambda r: r.hit.decay, True),
        "Time decay: decay ** days since the segment was archived.",
    ),
    (
        Column("Final", lambda r: f4(r.hit.score), lambda r: r.hit.score, True),
        "Final (ranking) score:\n(vector weight * vector + text weight * BM25 norm) * decay.",
    ),
    (
        Column("Eff.", lambda r: f4(r.hit.effective), lambda r: r.hit.effective, True),
        "Effective score: the final score ÷ the weights of the components that are > 0.\n"
        "This is what minScore is compared with.",
    ),
    (
        Column(
            "Vec #",
            lambda r: _rank(r.hit.vector_rank),
            lambda r: r.hit.vector_rank or MISSING_RANK,
            True,
        ),
        "Rank in the vector (cosine) candidate list; a dash when not in it.",
    ),
    (
        Column(
            "BM25 #",
            lambda r: _rank(r.hit.bm25_rank),
            lambda r: r.hit.bm25_rank or MISSING_RANK,
            True,
        ),
        "Rank in the BM25 candidate list; a dash when not in it.",
    ),
    (
        Column("Status", lambda r: r.status),
        "in block: injected; cut by cap: a hit the hard cap left out;\n"
        "below minScore / over limit: candidates the search rejected.",
    ),
    (
        Column("Text", lambda r: one_line(r.hit.segment.content)),
        "The segment's text (role and time in the tooltip).",
    ),
]

KNOWLEDGE_COLUMNS: list[tuple[Column[KnowledgeRow], str]] = [
    (
        Column("Rank", lambda r: r.hit.rank, align_right=True, thousands=False),
        "Rank among the facts that passed the knowledge threshold.",
    ),
    (Column("Type", lambda r: r.hit.fact.type), "The fact's type (decision, preference, …)."),
    (
        Column("Score", lambda r: f4(r.hit.score), lambda r: r.hit.score, True),
        "Matched idf ÷ total idf: the share of the query's weight found in the fact.",
    ),
    (
        Column("Matched idf", lambda r: f4(r.matched_idf), lambda r: r.matched_idf, True),
        "Sum of idf = ln((N+1)/(df+1)) of the query tokens found in the fact.",
    ),
    (
        Column("Total idf", lambda r: f4(r.total_idf), lambda r: r.total_idf, True),
        "Sum of idf of every query token known to the knowledge index.",
    ),
    (
        Column("Matched", lambda r: ", ".join(r.hit.matched) or DASH),
        "Query tokens found in the fact's content or context (as substrings).",
    ),
    (
        Column("Missing", lambda r: ", ".join(r.hit.missing) or DASH),
        "Known query tokens the fact lacks.",
    ),
    (
        Column("Status", lambda r: r.status),
        "in block: injected; cut by cap: left out by the knowledge budget (30% of the cap).",
    ),
    (Column("Content", lambda r: one_line(r.hit.fact.content)), "The fact's content."),
]

CUT_COLUMNS: list[tuple[Column[CutRow], str]] = [
    (Column("Kind", lambda r: r.kind), "knowledge fact or detail segment."),
    (Column("Item", lambda r: r.item), "The item the cap left out."),
    (Column("Why", lambda r: r.why), "Which rule of the hard cap cut it."),
]


def detail_tip(row: DetailRow) -> str:
    """Tooltip of a detail row: id, session, role, time and the text."""
    seg = row.hit.segment
    why = f"\n{row.why}" if row.why else ""
    return (
        f"{seg.id}\nsession {seg.session_id}\n{seg.role} · {block_time(seg.timestamp)} UTC"
        f"{why}\n\n{seg.content[:1200]}"
    )


def knowledge_tip(row: KnowledgeRow) -> str:
    """Tooltip of a knowledge row: id, the idf of each token, the content."""
    idf = ", ".join(f"{w.token} {w.idf:.3f}" for w in row.hit.weights)
    ctx = f"\ncontext: {row.hit.fact.context}" if row.hit.fact.context else ""
    return f"{row.hit.fact.id}\nidf: {idf}\n\n{row.hit.fact.content}{ctx}"


def cut_tip(row: CutRow) -> str:
    """Tooltip of a cut row."""
    return f"{row.ident}\n{row.why}".strip()


# -- rows of one recall --------------------------------------------------------------------
def build_rows(
    out: RecallOutcome, *, show_rejected: bool = False, short: Mapping[str, str] | None = None
) -> tuple[list[KnowledgeRow], list[DetailRow], list[CutRow]]:
    """The knowledge, detail and cut rows of one recall.

    With *show_rejected*, the detail rows hold every candidate, the ones the
    search rejected marked ``below minScore`` or ``over limit``. *short* gives each
    session id its short form (:func:`core.recall.short_ids.short_ids`).
    """
    names = short or {}
    block = out.block
    # The block holds the facts it was given (core Fact records, which have an id).
    in_block_k = {getattr(f, "id", "") for f in block.knowledge} if block else set()
    cut_k = {getattr(f, "id", ""): why for f, why in block.cut_knowledge} if block else {}
    k_rows = [
        KnowledgeRow(
            h, IN_BLOCK if h.fact.id in in_block_k else CUT_BY_CAP, cut_k.get(h.fact.id, "")
        )
        for h in out.knowledge
    ]
    in_block_d = {d.segment.id for d in block.details} if block else set()
    cut_d = {d.segment.id: why for d, why in block.cut_details} if block else {}
    d_rows: list[DetailRow] = []
    search = out.search
    if search is not None:
        hit_slots = {h.slot for h in search.hits}
        for h in search.candidates if show_rejected else search.hits:
            sid = h.segment.id
            if h.slot in hit_slots:
                status = IN_BLOCK if sid in in_block_d else CUT_BY_CAP
                label = names.get(h.segment.session_id, "")
                d_rows.append(DetailRow(h, status, cut_d.get(sid, ""), label))
            else:
                why = "below minScore" if not h.passed_min_score else "over limit"
                d_rows.append(DetailRow(h, why, "", names.get(h.segment.session_id, "")))
    cuts = [
        CutRow("knowledge", one_line(f.content, 90), why, getattr(f, "id", ""))
        for f, why in (block.cut_knowledge if block else [])
    ] + [
        CutRow("detail", f"{d.segment.id[:8]} {one_line(d.segment.content, 80)}", why, d.segment.id)
        for d, why in (block.cut_details if block else [])
    ]
    return k_rows, d_rows, cuts


# -- explanation ---------------------------------------------------------------------------
def block_note(expl: SegmentExplanation, block: RecalledBlock | None) -> str:
    """What the block did with an explained segment (empty when it is not a hit)."""
    if expl.reason == "cut_by_hard_cap" and block is not None:
        cut = block.cut_reason(expl.segment_id)
        return f"A hit, but the hard cap left it out of the block: {cut}."
    if expl.reason == "hit" and block is not None:
        return "It is in the injected block."
    return ""


def explanation_html(
    expl: SegmentExplanation,
    result: SearchResult,
    segment: Segment | None,
    block_note: str = "",
    session_label: str = "",
) -> str:
    """*expl* in words, with the arithmetic of the score when there is one.

    The words are :func:`core.recall.hybrid.explain_text`'s: ``memlens eval`` prints the same.
    """
    cfg = result.config
    e = html.escape
    # explain_text starts with the headline: in bold here, the rest as it says it.
    words = explain_text(expl)
    title = HEADLINES.get(expl.reason, expl.reason)
    rest = words[len(title) :] if words.startswith(title) else f" {words}"
    out = [f"<p><code>{e(expl.segment_id)}</code>: <b>{e(title)}</b>{e(rest)}</p>"]
    hit = expl.hit
    if hit is not None:
        weights = (cfg.vector_weight if hit.vector_score > 0 else 0.0) + (
            cfg.bm25_weight if hit.bm25_norm > 0 else 0.0
        )
        x = TIMES
        out.append(
            f"<p>As a candidate: score = ({cfg.vector_weight:.2f} {x} vector "
            f"{hit.vector_score:.4f} + {cfg.bm25_weight:.2f} {x} BM25 norm {hit.bm25_norm:.4f}) "
            f"{x} decay {hit.decay:.4f} = <b>{hit.score:.4f}</b><br>effective = "
            f"{hit.score:.4f} {DIVIDE} {weights:.2f} = <b>{hit.effective:.4f}</b> "
            f"(minScore {cfg.min_score:.2f})</p>"
        )
    if block_note:
        out.append(f"<p>{e(block_note)}</p>")
    if segment is not None:
        label = session_label or segment.session_id[:8]
        out.append(
            f"<p style='color:gray'>{e(segment.role)} · session "
            f"<span title='{e(segment.session_id)}'>{e(label)}</span> · "
            f"{block_time(segment.timestamp)} UTC<br>{e(one_line(segment.content, 300))}</p>"
        )
    return "".join(out)


def recall_job(
    query: str,
    store: WarmStore | None,
    knowledge: KnowledgeIndex | None,
    settings: RecallSettings,
    session_id: str | None,
    now_ms: int | None,
) -> Callable[..., tuple[str, RecallOutcome, float]]:
    """A runner job recalling *query*: it returns the query, the outcome and its seconds."""

    def job(**_job: object) -> tuple[str, RecallOutcome, float]:
        started = time.perf_counter()
        out = recall(
            query,
            store=store,
            knowledge=knowledge,
            settings=settings,
            session_id=session_id,
            now_ms=now_ms,
        )
        return query, out, time.perf_counter() - started

    return job
