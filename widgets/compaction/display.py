"""What the compaction view shows: the plan, the summary and its comparison, the lists."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from PySide6.QtGui import QPalette

from core.compaction.breakdown import plan_groups
from core.compaction.run import failure_headline
from core.compaction.sections import missing_headings, summary_sections
from widgets.compaction.layout import CompactionLayout
from widgets.compaction.markup import blend, summary_html

if TYPE_CHECKING:
    from core.compaction.plan import CompactionPlan
    from core.compaction.run import CompactionRun
    from core.transcript.model import Session

ERROR_COLOR = "#e5484d"
OK_COLOR = "#30a46c"


class CompactionDisplay(CompactionLayout):
    """The compaction panel's widgets, filled from core objects (no state, no jobs)."""

    # -- showing ------------------------------------------------------------------------------

    def show_session(self, session: Session) -> None:
        """The header: the session's id and entry count (its path on hover)."""
        self.session_label.setText(f"<b>{session.id}</b> — {len(session.entries):,} entries")
        self.session_label.setToolTip(session.path)

    def show_progress(self, done: int, total: int, label: str) -> None:
        """A run's progress (*total* 0: busy, no count)."""
        if total > 0:
            self.progress.setRange(0, total)
            self.progress.setValue(min(done, total))
            self.progress.setFormat(f"{label} — {min(done, total)}/{total}")
        else:
            self.progress.setRange(0, 0)
            self.progress.setFormat(label)

    def show_plan(self, plan: CompactionPlan | None) -> None:
        """Fill the plan section (None: no plan)."""
        self.plan_model.set_records(plan_groups(plan) if plan is not None and plan.ok else [])
        if plan is None:
            self.plan_title.setText("No plan")
            self.cut_label.clear()
            self.set_figures(None)
            return
        self.plan_title.setText(plan.reason[:1].upper() + plan.reason[1:])
        if not plan.ok:
            self.cut_label.setText("Nothing to compact.")
            self.set_figures(None)
            return
        cut = f"Cut point: entry #{plan.first_kept_index} <code>{plan.first_kept_entry_id}</code>"
        if plan.is_split_turn:
            cut += f" — splits a turn that starts at <code>{plan.turn_start_entry_id}</code>"
        self.cut_label.setText(cut)
        self.set_figures(plan)

    def show_run(self, result: CompactionRun | None, previous: str | None) -> None:
        """Fill the summary, comparison, segments and facts (None: empty them)."""
        if result is None or result.summary is None:
            self.sections_model.set_records([])
            self.summary_view.clear()
            self.summary_header.setText("Run the compaction to see its summary.")
            self.diff_view.set_texts(previous, None)
            self.segments_model.set_records([])
            self.facts_model.set_records([])
            self.notes_label.clear()
            self.notes_label.hide()
            self.set_tab_counts(None, None)
            return
        s = result.summary
        text = s.summary
        sections = summary_sections(text)
        self.sections_model.set_records(sections)
        pal = self.palette()
        muted = blend(
            pal.color(QPalette.ColorRole.Base).name(),
            pal.color(QPalette.ColorRole.Text).name(),
            0.5,
        )
        self.summary_view.setHtml(summary_html(sections, muted))
        missing = missing_headings(text)
        who = (
            "Offline summary (extractive, no model)"
            if s.provider == "offline"
            else f"Summary by {s.provider}"
        )
        after = (result.entry or {}).get("tokensAfter")
        bits = [
            f"<b>{who}</b>",
            f"{s.calls} call(s)",
            f"{len(text):,} / 16,000 chars",
            f"tokens after ≈ {after:,}" if isinstance(after, int) else "",
            "all required headings present"
            if not missing
            else f'<span style="color:{ERROR_COLOR}">missing: {", ".join(missing)}</span>',
        ]
        if s.degraded:
            failed = "<b>fallback: the summariser failed</b>"
            bits.append(f'<span style="color:{ERROR_COLOR}">{failed}</span>')
        if s.fallback:
            bits.append(f'<span style="color:{ERROR_COLOR}">fallback level {s.fallback}</span>')
        if s.truncated:
            bits.append("truncated to the cap")
        self.summary_header.setText(" · ".join(b for b in bits if b))
        self.diff_view.set_texts(previous, text)
        self.segments_model.set_records(result.segments)
        self.facts_model.set_records(result.facts)
        notes = [*s.notes, *result.fact_notes]
        self.notes_label.setText("\n".join(f"• {n}" for n in notes))
        self.notes_label.setVisible(bool(notes))
        self.set_tab_counts(len(result.segments), len(result.facts))

    def show_failure(self, result: CompactionRun | None) -> None:
        """Show which call failed, where and why, with the attempt log (None: hide it)."""
        failure = result.failure if result is not None else None
        if result is None or failure is None:
            self.calls_model.set_records([])
            self.failure_label.clear()
            self.failure_box.hide()
            return
        self.calls_model.set_records(result.call_log)
        step, told = failure.step, failure.describe()
        if result.summary_failed:
            button = "Write the fallback summary an&yway…"
            anyway = "write the fallback summary anyway (its first line says it is a fallback)."
        else:  # the summary is real; the facts were not (all) read
            button = "Write without the missing facts an&yway…"
            anyway = (
                "write the compaction anyway with only the facts read (none if the call failed)."
            )
        title = failure_headline(failure).capitalize()  # as the panel's state line says it
        self.failure_box.setTitle(f"{title}: nothing will be written as it is")
        self.fallback_button.setText(button)
        self.failure_label.setText(
            f"<b>{html.escape(step[:1].upper() + step[1:])} failed: "
            f"{html.escape(failure.message)}</b><br>{html.escape(told[:1].upper() + told[1:])}.<br>"
            f"Nothing was written. Retry, use another summariser, or {anyway}"
        )
        self.failure_box.show()

    def set_message(self, text: str, *, error: bool = False, ok: bool = False) -> None:
        """The line above the Write button: an error, a success or plain text."""
        color = ERROR_COLOR if error else OK_COLOR if ok else ""
        self.message_label.setStyleSheet(f"color: {color};" if color else "")
        self.message_label.setText(text)
        self.message_label.setVisible(bool(text))
