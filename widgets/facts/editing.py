"""The facts view's edits: actions, the edit dialog, confirm, append, undo and redo.

Every write follows the same path (:meth:`FactEditing.run`): read what the
agent appended meanwhile, plan the exact redacted lines
(:func:`core.knowledge.ops.plan_fact_ops`), ask *confirm* with the
:class:`~core.io.writes.PlannedWrite`, append (:func:`core.knowledge.ops.apply_fact_plan`, which
refuses if a fact changed since the plan), refresh the view from the log, emit
``written``, and push a :class:`~widgets.facts.undo.FactCommand` whose undo and
redo append lines the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence, QUndoStack
from PySide6.QtWidgets import QMenu

from core.knowledge.ops import (
    FactOp,
    FactOpError,
    Plan,
    StaleError,
    apply_fact_plan,
    inverse,
    plan_fact_ops,
    short,
)
from core.knowledge.review_log import KnowledgeFileChanged, catch_up
from core.store.knowledge import FACT_TYPES
from widgets.facts.edit import FactEditDialog, FactValues
from widgets.facts.undo import Direction, FactCommand

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from core.io.writes import Confirm
    from core.knowledge.ops import Applied
    from core.store.knowledge import Fact, KnowledgeLog
    from widgets.facts.edit import EditMode
    from widgets.facts.host import FactsHost


class FactEditing(QObject):
    """Actions and writes of a :class:`~widgets.facts.view.FactsView`.

    Attributes
    ----------
    undo_stack
        Every write; the app can put ``undo_stack.createUndoAction(...)`` in its
        Edit menu. Undo and redo append lines (and ask *confirm*).
    edit_dialog
        The open add/edit/supersede dialog, if any (tests fill it in).
    """

    def __init__(self, view: FactsHost) -> None:
        super().__init__(view)
        self.view = view
        self._log: KnowledgeLog | None = None
        self._confirm: Confirm | None = None
        self.undo_stack = QUndoStack(self)
        self.edit_dialog: FactEditDialog | None = None
        self._make_actions()

    def set_target(self, log: KnowledgeLog | None, confirm: Confirm | None) -> None:
        """The log written to and the callback asked first (None: nothing is written)."""
        self._log = log
        self._confirm = confirm
        self.update_actions()

    # -- actions ------------------------------------------------------------------------------
    def _make_actions(self) -> None:
        def action(
            text: str, keys: Sequence[QKeySequence | str], tip: str, slot: Callable[[], object]
        ) -> QAction:
            act = QAction(text, self.view)
            act.setShortcuts([QKeySequence(k) for k in keys])
            act.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            shown = ", ".join(
                QKeySequence(k).toString(QKeySequence.SequenceFormat.NativeText) for k in keys
            )
            act.setToolTip(f"{tip} ({shown})" if shown else tip)
            act.triggered.connect(slot)
            self.view.addAction(act)
            return act

        self.new_action = action(
            "&New Fact…", ["Ins", "Ctrl+N"], "Append a new fact", self.add_fact
        )
        self.edit_action = action(
            "&Edit…",
            ["F2"],
            "Edit the content, context or type of the current fact (Enter, double-click)",
            self.edit_current,
        )
        self.supersede_action = action(
            "&Supersede…",
            ["Ctrl+Shift+S"],
            "Replace the current fact with a new one; the old one gets supersededBy",
            self.supersede_current,
        )
        self.delete_action = action(
            "&Delete…",
            [QKeySequence(QKeySequence.StandardKey.Delete)],
            "Delete the selected facts (a _deleted line each, after you confirm)",
            self.delete_selected,
        )
        self.restore_action = action(
            "&Restore…",
            ["Ctrl+R"],
            "Make the selected deleted or superseded facts active again",
            self.restore_selected,
        )
        self.type_menu = QMenu("Set &Type", self.view)
        for t in FACT_TYPES:
            act = self.type_menu.addAction(t)
            act.triggered.connect(lambda _checked=False, t=t: self.set_type_selected(t))
        self.type_action = self.type_menu.menuAction()
        self.type_action.setToolTip("Change the type of the selected facts (one UPDATE each)")
        self.undo_action = self.undo_stack.createUndoAction(self.view, "&Undo")
        self.undo_action.setToolTip("Undo the last fact edit by appending lines")
        self.redo_action = self.undo_stack.createRedoAction(self.view, "Re&do")
        self.redo_action.setToolTip("Redo the fact edit undone, by appending lines")
        table = self.view.table
        for act in (self.new_action, self.edit_action, self.supersede_action):
            table.addAction(act)
        table.addAction(self.type_action)
        sep = QAction(self.view)
        sep.setSeparator(True)
        table.addAction(sep)
        for act in (self.delete_action, self.restore_action):
            table.addAction(act)
        sep = QAction(self.view)
        sep.setSeparator(True)
        table.addAction(sep)
        table.addAction(self.undo_action)
        table.addAction(self.redo_action)

    def update_actions(self) -> None:
        """Enable what the selection allows."""
        can = self._log is not None and self._confirm is not None
        current = self.view.current_fact() if can else None
        selected = self.view.selected_facts() if can else []
        live = current is not None and current.status != "deleted"
        self.new_action.setEnabled(can)
        self.edit_action.setEnabled(live)
        self.supersede_action.setEnabled(live)
        self.delete_action.setEnabled(any(f.status != "deleted" for f in selected))
        self.restore_action.setEnabled(any(f.status != "active" for f in selected))
        self.type_action.setEnabled(any(f.status != "deleted" for f in selected))

    # -- user actions -------------------------------------------------------------------------
    def add_fact(self) -> FactEditDialog | None:
        """Open the dialog for a new fact (returns it; not modal to the app)."""
        return self._open("add", None)

    def edit_current(self) -> FactEditDialog | None:
        """Open the editor of the current fact."""
        fact = self.view.current_fact()
        if fact is None:
            return None
        if fact.status == "deleted":
            self.view.show_message(f"Fact {short(fact.id)} is deleted: restore it (Ctrl+R) first.")
            return None
        return self._open("edit", fact)

    def supersede_current(self) -> FactEditDialog | None:
        """Open the dialog for a fact that replaces the current one."""
        fact = self.view.current_fact()
        if fact is None or fact.status == "deleted":
            return None
        return self._open("supersede", fact)

    def delete_selected(self) -> bool:
        """Delete the selected facts that are not deleted (one append, after confirm)."""
        facts = [f for f in self.view.selected_facts() if f.status != "deleted"]
        if not facts:
            return False
        text = _count_text("Delete", facts)
        return self.run([FactOp.delete(f.id) for f in facts], text) is not None

    def restore_selected(self) -> bool:
        """Make the selected deleted or superseded facts active (one append, after confirm)."""
        facts = [f for f in self.view.selected_facts() if f.status != "active"]
        if not facts:
            return False
        text = _count_text("Restore", facts)
        return self.run([FactOp.restore(f.id) for f in facts], text) is not None

    def set_type_selected(self, fact_type: str) -> bool:
        """Give the selected live facts *fact_type* (one UPDATE each, one append)."""
        facts = [
            f for f in self.view.selected_facts() if f.status != "deleted" and f.type != fact_type
        ]
        if not facts:
            self.view.show_message(f"The selected facts are already {fact_type} (or deleted).")
            return False
        text = _count_text("Set type", facts) + f" to {fact_type}"
        return self.run([FactOp.edit(f.id, type=fact_type) for f in facts], text) is not None

    def _open(self, mode: EditMode, fact: Fact | None) -> FactEditDialog | None:
        log = self._log
        if log is None or self._confirm is None:
            return None
        if self.edit_dialog is not None:
            self.edit_dialog.close()

        def submit(values: FactValues) -> str | None:
            return self._submit(mode, fact, values)

        dialog = FactEditDialog(mode, fact, submit, redaction=log.redaction, parent=self.view)
        dialog.finished.connect(self._on_dialog_finished)
        self.edit_dialog = dialog
        dialog.open()
        return dialog

    def _on_dialog_finished(self, _result: int) -> None:
        dialog, self.edit_dialog = self.edit_dialog, None
        if dialog is not None:
            dialog.deleteLater()

    def _submit(self, mode: EditMode, fact: Fact | None, v: FactValues) -> str | None:
        if mode == "add":
            op = FactOp.add(v.type, v.content, v.context)
            text = "Add fact"
        elif fact is None:
            return "The fact is gone."
        elif mode == "edit":
            # An emptied context field clears the context (None would keep it).
            context = v.context if v.context is not None else ("" if fact.context else None)
            op = FactOp.edit(fact.id, content=v.content, context=context, type=v.type)
            text = f"Edit fact {short(fact.id)}"
        else:
            op = FactOp.supersede(fact.id, v.content, type=v.type, context=v.context or "")
            text = f"Supersede fact {short(fact.id)}"
        planned = self.run([op], text, select_new=True)
        return None if planned is not None else self.view.status_label.text()

    # -- writing ------------------------------------------------------------------------------
    def run(self, ops: Sequence[FactOp], text: str, *, select_new: bool = True) -> Plan | None:
        """Plan *ops* as one append, confirm, write, and push it on the undo stack.

        Returns the plan written, or None (refused, cancelled or failed: the
        reason is shown in the view).
        """
        planned = self._plan(lambda log: plan_fact_ops(log, ops))
        if planned is None:
            return None
        done = self._write(planned)
        if done is None:
            return None
        if select_new and planned.new_ids:
            self.view.select_fact(planned.new_ids[0])
        self.undo_stack.push(FactCommand(self, planned, text))
        return planned

    def write_inverse(self, done: Plan) -> Plan | None:
        """Undo (or redo) *done* by appending its inverse; the plan written or None."""
        planned = self._plan(lambda log: inverse(log, done))
        if planned is None:
            return None
        return planned if self._write(planned) is not None else None

    def bounce(self, command: FactCommand, direction: Direction) -> None:
        """Put the stack index back after an undo or redo that wrote nothing."""

        def back() -> None:
            stack = self.undo_stack
            pos = next((i for i in range(stack.count()) if stack.command(i) is command), -1)
            if pos < 0:
                return
            if direction == "redo" and stack.index() == pos:
                stack.redo()  # the command knows it is still applied: nothing is written
            elif direction == "undo" and stack.index() == pos + 1:
                stack.undo()

        QTimer.singleShot(0, self, back)

    def _plan(self, make: Callable[[KnowledgeLog], Plan]) -> Plan | None:
        log = self._log
        if log is None or self._confirm is None:
            self._fail("Nothing can be written here: no knowledge log or no confirm.")
            return None
        try:
            catch_up(log)  # plan against what the agent wrote meanwhile
        except (KnowledgeFileChanged, OSError) as exc:
            self._fail(f"Not written: {exc}")
            return None
        self.view.refresh()
        try:
            return make(log)
        except FactOpError as exc:
            self._fail(f"Not written: {exc}")
            return None

    def _write(self, planned: Plan) -> Applied | None:
        log, confirm = self._log, self._confirm
        if log is None or confirm is None:
            return None
        if not confirm([planned.write]):
            self.view.show_message(f"Cancelled: nothing was written ({planned.label}).")
            return None
        try:
            done = apply_fact_plan(log, planned)
        except (StaleError, OSError) as exc:
            self.view.refresh()
            self._fail(f"Not written: {exc}")
            return None
        self.view.refresh()
        where = ", ".join(str(ln.line) for ln in done.lines)
        plural = "s" if len(done.lines) != 1 else ""
        self.view.show_message(
            f"{planned.label}: appended {len(done.lines)} line{plural} to {planned.path}"
            f" (line{plural} {where})."
        )
        self.view.written.emit([done])
        return done

    def _fail(self, message: str) -> None:
        self.view.show_message(message)
        self.view.failed.emit(message)


def _count_text(verb: str, facts: Sequence[Fact]) -> str:
    if len(facts) == 1:
        return f"{verb} fact {short(facts[0].id)}"
    return f"{verb} {len(facts)} facts"
