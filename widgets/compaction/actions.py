"""The compaction view's actions: how each is made, and when each is available."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from PySide6.QtWidgets import QWidget

    from core.compaction.plan import CompactionPlan
    from core.compaction.run import CompactionRun


@dataclass(frozen=True, slots=True)
class PanelFacts:
    """What the enabled state of every action depends on."""

    plan: CompactionPlan | None
    result: CompactionRun | None
    busy: bool
    """A run, a write or an OpenClaw compaction is under way."""
    planning: bool
    cancellable: bool
    """The job under way is a run (or a write being prepared) not asked to stop yet."""
    provider_ok: bool
    in_db: bool
    """The session lives in OpenClaw's database: memlens never writes it."""
    grown: bool
    """The session grew (live mode) since the summary shown was made."""


@dataclass(frozen=True, slots=True)
class Enabled:
    """The enabled state of each action (and of the controls beside them)."""

    run: bool
    cancel: bool
    write: bool
    fallback: bool
    openclaw: bool
    discard: bool
    picker: bool
    force: bool
    show_cut: bool


def enabled(f: PanelFacts) -> Enabled:
    """The enabled state of each action given *f*."""
    plan_ok = f.plan is not None and f.plan.ok
    result = f.result
    pending = result is not None and result.entry is not None and not result.written
    failed = result is not None and result.failure is not None
    written = result is not None and result.written  # the session changed: reload first
    writable = pending and not f.busy and not f.in_db and not f.grown
    return Enabled(
        run=plan_ok and not f.busy and not f.planning and f.provider_ok and not written,
        cancel=f.busy and f.cancellable,
        write=writable and not failed,
        fallback=writable and failed,
        openclaw=f.in_db and not f.busy,
        discard=result is not None and not result.written and not f.busy,
        picker=not f.busy,
        force=pending and not f.busy,
        show_cut=plan_ok,
    )


def add_action(
    widget: QWidget, text: str, keys: Sequence[QKeySequence | str], slot: Callable[[], None]
) -> QAction:
    """An action of *widget* (its shortcuts work within it and its children) calling *slot*."""
    act = QAction(text, widget)
    act.setShortcuts([QKeySequence(k) for k in keys])
    act.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
    act.triggered.connect(slot)
    widget.addAction(act)
    return act
