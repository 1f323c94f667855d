"""Apply to agent: the Recall view's settings written into the agent's openclaw.json.

The "Apply to agent…" button of the search knobs asks for it. Each setting the agent
reads (:func:`core.recall.apply.agent_changes`) is planned
(:func:`core.openclaw.config_edit.plan_setting`), shown in the write preview with its
diff and backup, and written only when the user chose *Write*: one key path at a
time. What the agent cannot be told (another ranking, weights, decay) is said in
the status bar. After a write, the Recall view starts from the written values.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from PySide6.QtCore import Slot

from app.context import AppContext, AppHelper
from core.io.problems import FormatError
from core.io.writes import PlannedWrite
from core.openclaw.config_edit import ConfigEditError, apply_setting, plan_setting
from core.recall.apply import agent_changes

if TYPE_CHECKING:
    from PySide6.QtCore import QObject

    from app.manager import Manager


class ApplyGlue(AppHelper):
    """Writes the Recall view's settings into the agent's config, one previewed key at a time."""

    def __init__(
        self, context: AppContext, manager: Manager, parent: QObject | None = None
    ) -> None:
        super().__init__(context, parent)
        self.manager = manager
        context.views.recall_view.knobs.apply_requested.connect(self.apply)

    @Slot()
    def apply(self) -> list[str]:
        """Plan, preview and write each setting; returns the key paths written."""
        data, recall = self.app_state.data, self.manager.recall
        view = self.views.recall_view
        config = data.discovery.config if data is not None else None
        if config is None or recall is None:
            self.status.say("Apply to agent: this data directory has no openclaw.json")
            return []
        current = view.settings()
        changes = agent_changes(current.search, current.ranking, recall.settings.search)
        cannot = (
            f" Not settings of the agent: {'; '.join(changes.cannot)}." if changes.cannot else ""
        )
        if not changes.writes:
            self.status.say(f"Apply to agent: minScore and cross-session already match.{cannot}")
            return []
        written = []
        for key, value in changes.writes:
            try:
                edit = plan_setting(config, key, value)
            except (ConfigEditError, FormatError, OSError) as exc:
                self.status.say(f"Apply to agent: {key} not written: {exc}")
                break
            diff = [line.rstrip("\n") for line in edit.diff().splitlines()]
            write = PlannedWrite(
                str(edit.path),
                "rewrite",
                f"set {edit.dotted}: {_shown(edit.old_value)} -> {_shown(edit.new_value)}",
                tuple(diff),
                str(edit.backup),
            )
            if not self.manager.confirm([write]):
                self.status.say(f"Apply to agent: {key} not written (cancelled)")
                break
            try:
                apply_setting(edit)
            except (OSError, ValueError) as exc:
                self.status.say(f"Apply to agent: {key} not written: {exc}")
                break
            written.append(edit.dotted)
        if written:
            settings = recall.settings
            search = settings.search.with_(
                min_score=current.search.min_score, cross_session=current.search.cross_session
            )
            recall.settings = replace(settings, search=search)
            view.attach(recall.store, recall.knowledge, recall.settings)
            self.status.say(f"Written into {config.name}: {', '.join(written)}.{cannot}")
        return written


def _shown(value: object) -> str:
    """A setting's value in a summary (absent: the agent's default applies)."""
    return "absent (the agent's default)" if value is None else repr(value)
