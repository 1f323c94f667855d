"""Models of the loss audit's probes: which model asks, the probe job, the tables.

:func:`run_probe` runs in the job runner (the audit tab submits it): questions made
from the audit's items, answered by the model from the summary alone, graded
(:func:`core.compaction.probe.run_probes`). :func:`probe_choice` picks the model
among the compaction panel's providers. :class:`ProbeModel` has a row per
question, its grade coloured; :class:`ProbeScoreModel` a row per category.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor
from typing_extensions import override

from core.compaction.probe import probe_score, run_probes
from core.compaction.provider import Timeouts, check_spec, open_provider
from core.io.text import one_line
from widgets.common.record_model import Column, RecordTableModel

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from core.compaction.audit import LossAudit
    from core.compaction.probe import ProbeResult, ProbeRun, ProbeScore
    from core.compaction.provider import ProviderChoice
    from core.transcript.model import Session

NO_MODEL_TIP = (
    "Probing needs a model: add an endpoint in Settings (Providers), as for compaction "
    "with a model; the offline summariser cannot answer questions"
)
PROBE_TIP = (
    "Ask the compaction panel's model questions made from the summarised messages "
    "(identifiers, files, decisions, what was last and next), answered from the summary "
    "alone and graded against the messages; nothing is written (Ctrl+Shift+P)"
)
GRADE_COLORS = {
    "exact": ("#2e7d32", "#81c784"),
    "normalised": ("#1565c0", "#64b5f6"),
    "unknown": ("#b26a00", "#ffb74d"),
    "wrong": ("#c62828", "#ef7070"),
}
GRADE_TIPS = {
    "exact": "The answer holds the expected text as it is",
    "normalised": "The answer holds it written differently (case, quotes, a path's tail, "
    "or most of a sentence's words)",
    "unknown": "The model said the summary does not tell",
    "wrong": "The answer is not what the messages say",
}
GRADE_ORDER = {"wrong": 0, "unknown": 1, "normalised": 2, "exact": 3}


@dataclass(frozen=True, slots=True)
class ScoreLine:
    """One row of the probe score table: a category, or ``total``."""

    name: str
    score: ProbeScore


def probe_choice(
    choices: Sequence[ProviderChoice], current: ProviderChoice | None
) -> ProviderChoice | None:
    """The model to probe with: the current choice if it is one, else the first offered."""
    models = [c for c in choices if not c.offline and check_spec(c) is None]
    if current is not None and not current.offline and current in models:
        return current
    return models[0] if models else None


def run_probe(
    session: Session,
    audit: LossAudit,
    choice: ProviderChoice,
    *,
    progress: Callable[[int, int, str], None],
    cancelled: Callable[[], bool],
    timeouts: Timeouts | None = None,
) -> ProbeRun:
    """The probe job: ask *choice*'s model about *audit*'s summary (a session snapshot).

    Raises
    ------
    core.compaction.probe.ProbeError
        When the call fails or its answer cannot be read (the tab shows why).
    """
    opened = open_provider(choice, timeouts or Timeouts())
    client = opened.client
    if client is None:
        raise ValueError(f"{choice.label} is not a model")
    try:
        messages = [(e.id, e.message) for e in session.entries if e.message is not None]
        return run_probes(audit, messages, client, cancelled=cancelled, progress=progress)
    finally:
        opened.close()


def score_lines(run: ProbeRun | None) -> list[ScoreLine]:
    """A row per category, then the total of the rule-made questions."""
    if run is None:
        return []
    rows = [ScoreLine(name, s) for name, s in run.scores().items()]
    rows.append(ScoreLine("total", run.total()))
    return rows


def _pct(s: ProbeScore) -> str:
    return f"{100 * s.score:.0f}%" if s.questions else ""


SCORE_COLUMNS: list[Column[ScoreLine]] = [
    Column("Category", lambda r: r.name),
    Column("asked", lambda r: r.score.questions, align_right=True),
    Column("exact", lambda r: r.score.exact, align_right=True),
    Column("norm.", lambda r: r.score.normalised, align_right=True),
    Column("unknown", lambda r: r.score.unknown, align_right=True),
    Column("wrong", lambda r: r.score.wrong, align_right=True),
    Column("score", lambda r: _pct(r.score), sort=lambda r: r.score.score, align_right=True),
]
QUESTION_COLUMNS: list[Column[ProbeResult]] = [
    Column("Grade", lambda r: r.grade, sort=lambda r: GRADE_ORDER.get(r.grade, 9)),
    Column("Category", lambda r: r.probe.category),
    Column("Question", lambda r: one_line(r.probe.question, 200)),
    Column("Expected", lambda r: one_line(r.probe.expected, 160)),
    Column("Answer", lambda r: one_line(r.answer, 160)),
    Column("Source", lambda r: r.probe.source[0] if r.probe.source else "", thousands=False),
]
_FULL_TEXT = {2: "question", 3: "expected", 4: "answer"}


class ProbeModel(RecordTableModel["ProbeResult"]):
    """Probe questions, their grade coloured; the full texts on hover."""

    dark = False

    @override
    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = 0) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            return super().data(index, role)
        if not index.isValid() or not 0 <= index.row() < self.rowCount():
            return None
        row = self.record(index.row())
        if role == Qt.ItemDataRole.ForegroundRole and index.column() == 0:
            colors = GRADE_COLORS.get(row.grade)
            return QColor(colors[1 if self.dark else 0]) if colors else None
        if role == Qt.ItemDataRole.ToolTipRole:
            if index.column() == 0:
                return GRADE_TIPS.get(row.grade)
            field = _FULL_TEXT.get(index.column())
            if field == "question":
                return row.probe.question
            if field == "expected":
                return row.probe.expected
            if field == "answer":
                return row.answer or "(no answer)"
            if index.column() == 5:
                return "From entries: " + ", ".join(row.probe.source[:12])
        return super().data(index, role)


def probe_headline(run: ProbeRun) -> str:
    """One line: the model, how many it answered right, and the notes."""
    total = run.total()
    text = (
        f"{run.model} answered {total.exact + total.normalised:,} of {total.questions:,} "
        f"question(s) right from the summary alone ({100 * total.score:.0f}%); "
        f"{total.unknown:,} unknown, {total.wrong:,} wrong"
    )
    own = [r for r in run.results if r.probe.category == "model"]
    if own:
        s = probe_score(own)
        text += f". Its own {s.questions} question(s): {s.exact + s.normalised} right"
    return text + "."
