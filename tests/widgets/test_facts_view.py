"""The facts view: table, filters, detail, and edits that only append (with undo and redo)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog

from core.demo.build import write_demo
from core.knowledge.review_log import catch_up
from core.knowledge.sources import SourceHit
from core.store.knowledge import FACT_TYPES, load_knowledge
from widgets.common.record_model import SortRole
from widgets.facts.model import CONTENT_COL, STATUS_COL, TIME_COL, FactFilterProxy, FactTableModel
from widgets.facts.view import FactsView

NOW = 1_760_000_000_000
KEY = "sk-ant-" + "api03-Qw7Er8Ty9Ui0Op1As2Df3Gh4"


def _set_filters(view, fact_type=None, status=None, text=""):
    """Set the type, status and text filters the way a user does (None: all)."""
    view.type_combo.setCurrentIndex(max(0, view.type_combo.findData(fact_type)))
    view.status_combo.setCurrentIndex(max(0, view.status_combo.findData(status)))
    view.filter_edit.setText(text)


def _shown_ids(view):
    """Ids of the facts the table shows, in table order."""
    proxy = view.proxy
    return [
        view.model.fact(proxy.mapToSource(proxy.index(r, 0)).row()).id
        for r in range(proxy.rowCount())
    ]


@pytest.fixture(scope="module")
def demo_knowledge(tmp_path_factory) -> bytes:
    home = tmp_path_factory.mktemp("facts") / "home"
    summary = write_demo(home, now_ms=NOW, segments=300)
    return summary.knowledge_file.read_bytes()


@pytest.fixture
def log(demo_knowledge, tmp_path):
    path = tmp_path / "knowledge.jsonl"
    path.write_bytes(demo_knowledge)
    return load_knowledge(path)


class Confirm:
    """The app's confirm, recorded: answer True or False."""

    def __init__(self) -> None:
        self.answer = True
        self.calls: list[list] = []

    def __call__(self, writes) -> bool:
        self.calls.append(list(writes))
        return self.answer


class Appends:
    """Every step appends: the file's previous bytes are a prefix of the new ones."""

    def __init__(self, path: str) -> None:
        self.path = Path(path)
        self.data = self.path.read_bytes()

    def step(self) -> list[dict]:
        new = self.path.read_bytes()
        assert new.startswith(self.data), "the file was rewritten, not appended to"
        assert len(new) > len(self.data), "nothing was appended"
        added, self.data = new[len(self.data) :], new
        return [orjson.loads(x) for x in added.splitlines()]

    def unchanged(self) -> None:
        assert self.path.read_bytes() == self.data


@pytest.fixture
def confirm():
    return Confirm()


@pytest.fixture
def view(qtbot, log, confirm):
    v = FactsView()
    qtbot.addWidget(v)
    v.resize(1200, 800)
    v.attach(log, confirm)
    v.clear_filters()
    yield v
    v.wait_for_sources()


def activate(qtbot, view: FactsView) -> None:
    """Shortcuts need an active window."""
    with qtbot.waitActive(view):
        view.show()
        view.activateWindow()
    view.table.setFocus()


def shown_column(view: FactsView, col: int) -> list[str]:
    return [view.proxy.index(r, col).data() for r in range(view.proxy.rowCount())]


def row_of(view: FactsView, fact_id: str) -> int:
    return view.proxy.mapFromSource(view.model.index(view.model.row_of(fact_id), 0)).row()


def live_ids(log, n: int = 1) -> list[str]:
    return [f.id for f in log.facts.values() if f.status == "active"][:n]


# -- the table ------------------------------------------------------------------------------------
def test_models_pass_qtmodeltester(qtmodeltester, log):
    model = FactTableModel()
    model.set_log(log)
    qtmodeltester.check(model)
    proxy = FactFilterProxy()
    proxy.setSourceModel(model)
    proxy.set_status("active")
    qtmodeltester.check(proxy)
    # Updates in place and appended facts keep the model consistent.
    fid = live_ids(log)[0]
    log.update(fid, content="edited for the model tester")
    log.add("config", "a new fact for the model tester")
    changed = model.refresh()
    assert fid in changed and len(changed) == 2
    assert model.rowCount() == len(log.facts)
    qtmodeltester.check(model)


def test_rows_show_every_fact_with_its_status(view, log):
    assert view.proxy.rowCount() == len(log.facts) == 64
    statuses = shown_column(view, STATUS_COL)
    assert statuses.count("active") == log.counts()["active"]
    assert statuses.count("superseded") == 4 and statuses.count("deleted") == 2
    assert "58 active · 4 superseded · 2 deleted · showing 64" == view.counts_label.text()
    deleted = next(f for f in log.facts.values() if f.status == "deleted")
    idx = view.proxy.index(row_of(view, deleted.id), CONTENT_COL)
    assert idx.data(Qt.ItemDataRole.FontRole).strikeOut()
    assert deleted.id in idx.data(Qt.ItemDataRole.ToolTipRole)


def test_filters_by_type_status_and_text(view, log):
    _set_filters(view, fact_type="decision")
    assert view.proxy.rowCount() == sum(f.type == "decision" for f in log.facts.values())
    _set_filters(view, fact_type="decision", status="superseded")
    expected = {
        f.id for f in log.facts.values() if (f.type, f.status) == ("decision", "superseded")
    }
    assert set(_shown_ids(view)) == expected and expected
    _set_filters(view, text="INVOICE-API rounding")
    expected = {
        f.id
        for f in log.facts.values()
        if all(
            w in f"{f.content}\n{f.context}\n{f.id}".lower() for w in ("invoice-api", "rounding")
        )
    }
    assert set(_shown_ids(view)) == expected and len(expected) >= 3
    assert view.counts_label.text().endswith(f"showing {len(expected)}")
    _set_filters(view, text=next(iter(log.facts))[:8])
    assert _shown_ids(view) == [next(iter(log.facts))]
    view.clear_filters()
    assert view.proxy.rowCount() == len(log.facts)
    assert [view.type_combo.itemData(i) for i in range(1, 7)] == list(FACT_TYPES)


def test_sorting_by_time_and_status(view):
    view.table.sortByColumn(TIME_COL, Qt.SortOrder.AscendingOrder)
    times = [view.proxy.index(r, TIME_COL).data(SortRole) for r in range(view.proxy.rowCount())]
    assert times == sorted(times)
    view.table.sortByColumn(STATUS_COL, Qt.SortOrder.DescendingOrder)
    assert shown_column(view, STATUS_COL)[0] == "deleted"


# -- the detail -----------------------------------------------------------------------------------
def test_history_and_chain_of_a_superseded_fact(view, log):
    fid = next(f.id for f in log.facts.values() if f.status == "superseded")
    assert view.select_fact(fid) and view.current_id() == fid
    hist = [
        view.detail.history_model.record(r) for r in range(view.detail.history_model.rowCount())
    ]
    assert [h.line for h in hist] == [ln.line for ln in log.history[fid]]
    assert hist[0].change == "added" and hist[-1].change.startswith("superseded by")
    chain = [view.detail.chain_model.record(r) for r in range(view.detail.chain_model.rowCount())]
    ids = [c.fact_id for c in chain]
    assert ids == log.chain(fid) and len(ids) >= 2
    me = ids.index(fid)
    assert [c.distance for c in chain] == [i - me for i in range(len(ids))]
    assert "superseded" in view.detail.header.text()
    # Activating a link of the chain selects that fact, even through filters.
    _set_filters(view, status="superseded")
    view.detail.fact_activated.emit(ids[-1])
    assert view.current_id() == ids[-1]


def test_sources_are_searched_off_the_gui_thread(qtbot, log, confirm):
    calls: list[str] = []

    def sources(content: str) -> list[SourceHit]:
        calls.append(content)
        return [
            SourceHit("segment", "s1", "sess", "assistant", f"said: {content}", 0.9, NOW, "seg", 3),
            SourceHit("message", "e1", "sess", "user", "asked about it", 0.4, NOW, "t.jsonl", 7),
        ]

    v = FactsView()
    qtbot.addWidget(v)
    v.show()  # a hidden view does not search
    with qtbot.waitSignal(v.sources_ready, timeout=5000) as got:
        v.attach(log, confirm, sources)
    fact = v.current_fact()
    assert calls == [fact.content]
    assert [h.id for h in got.args[0]] == ["s1", "e1"]
    assert [h.score for h in v.detail.sources()] == [0.9, 0.4]
    assert v.detail.tabs.tabText(2) == "&Sources (2)"
    v.wait_for_sources()


# -- edits ----------------------------------------------------------------------------------------
def test_edit_through_the_dialog_appends_the_confirmed_line(qtbot, view, log, confirm):
    files = Appends(log.path)
    fid = live_ids(log)[0]
    before = log.last_record(fid)
    view.select_fact(fid)
    activate(qtbot, view)
    qtbot.keyClick(view.table, Qt.Key.Key_F2)
    dialog = view.editing.edit_dialog
    assert dialog is not None and dialog.mode == "edit"
    assert dialog.content_edit.toPlainText() == before["content"]
    dialog.set_values("config", "Tiles above zoom 19 are cached", "tilecache")
    with qtbot.waitSignal(view.written) as got:
        dialog.accept()
    assert dialog.result() == QDialog.DialogCode.Accepted
    lines = files.step()
    planned = confirm.calls[-1][0]
    assert planned.action == "append" and planned.path == log.path
    assert [orjson.loads(x) for x in planned.lines] == lines  # exactly what was confirmed
    assert lines[0]["id"] == fid and lines[0]["type"] == "config"
    assert lines[0]["content"] == "Tiles above zoom 19 are cached"
    applied = got.args[0][0]
    assert applied.lines[0].line == log.lines and applied.plan.id == fid
    # the view refreshed from the log and kept the fact current
    assert view.current_id() == fid
    row = row_of(view, fid)
    assert view.proxy.index(row, CONTENT_COL).data() == "Tiles above zoom 19 are cached"
    assert view.detail.history_model.rowCount() == len(log.history[fid])
    assert view.undo_stack.count() == 1 and view.undo_stack.undoText() == f"Edit fact {fid[:8]}…"


def test_supersede_delete_restore_undo_redo(qtbot, view, log, confirm):
    files = Appends(log.path)
    old = live_ids(log)[0]
    view.select_fact(old)
    view.editing.supersede_action.trigger()
    dialog = view.editing.edit_dialog
    dialog.set_values("decision", "Tiles above zoom 18 are rendered and cached for 1 h")
    dialog.accept()
    lines = files.step()
    new = lines[0]["id"]
    assert lines[1]["id"] == old and lines[1]["supersededBy"] == new
    assert view.current_id() == new  # the new fact is selected
    assert log.facts[old].status == "superseded"

    view.undo_stack.undo()  # old without supersededBy, new deleted
    lines = files.step()
    assert [x["id"] for x in lines] == [old, new]
    assert "supersededBy" not in lines[0] and lines[1]["_deleted"] is True
    assert log.facts[old].status == "active" and log.facts[new].status == "deleted"
    view.undo_stack.redo()
    lines = files.step()
    assert lines[0]["id"] == new and lines[1]["supersededBy"] == new
    assert view.proxy.index(row_of(view, old), STATUS_COL).data() == "superseded"

    view.select_fact(new)
    activate(qtbot, view)
    qtbot.keyClick(view.table, Qt.Key.Key_Delete)
    assert files.step()[0]["_deleted"] is True
    assert view.proxy.index(row_of(view, new), STATUS_COL).data() == "deleted"
    assert not view.editing.edit_action.isEnabled()
    qtbot.keyClick(view.table, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)
    assert "_deleted" not in files.step()[0]
    assert log.facts[new].status == "active"
    view.undo_stack.undo()  # undo the restore
    assert files.step()[0]["_deleted"] is True
    view.undo_stack.undo()  # undo the delete
    assert "_deleted" not in files.step()[0]
    assert view.undo_stack.index() == 1
    # every write asked first
    assert len(confirm.calls) == 7


def test_bulk_actions_are_one_write_and_one_undo(view, log, confirm):
    files = Appends(log.path)
    ids = live_ids(log, 5)
    types = {i: log.facts[i].type for i in ids}
    view.select_ids(ids)
    assert set(view.selected_ids()) == set(ids)
    view.editing.type_menu.actions()[FACT_TYPES.index("issue")].trigger()
    lines = files.step()
    assert {x["id"] for x in lines} == {i for i in ids if types[i] != "issue"}
    assert all(x["type"] == "issue" for x in lines) and len(confirm.calls) == 1
    assert set(view.selected_ids()) == set(ids)  # the selection is kept
    view.editing.delete_action.trigger()
    deleted = files.step()
    assert len(deleted) == 5 and all(x["_deleted"] for x in deleted)
    assert len(confirm.calls[-1]) == 1 and len(confirm.calls[-1][0].lines) == 5  # one append
    assert view.undo_stack.undoText() == "Delete 5 facts"
    assert set(view.selected_ids()) == set(ids)
    view.undo_stack.undo()
    assert len(files.step()) == 5
    assert all(log.facts[i].status == "active" for i in ids)
    view.undo_stack.undo()  # the type change: each fact's old type again
    assert len(files.step()) == len(lines)
    assert {i: log.facts[i].type for i in ids} == types
    assert view.undo_stack.index() == 0


def test_confirm_false_writes_nothing(qtbot, view, log, confirm):
    files = Appends(log.path)
    fid = live_ids(log)[0]
    view.select_fact(fid)
    confirm.answer = False
    view.editing.delete_action.trigger()
    files.unchanged()
    assert "Cancelled" in view.status_label.text()
    dialog = view.editing.edit_action.trigger() or view.editing.edit_dialog
    dialog.set_values("issue", "changed but not confirmed")
    dialog.accept()
    files.unchanged()
    assert dialog.isVisible() and "Cancelled" in dialog.error_label.text()  # text kept
    dialog.reject()
    assert view.undo_stack.count() == 0 and len(confirm.calls) == 2

    # An undo the user declines writes nothing and the stack moves back.
    confirm.answer = True
    view.select_fact(fid)
    view.editing.delete_action.trigger()
    files.step()
    confirm.answer = False
    view.undo_stack.undo()
    files.unchanged()
    qtbot.waitUntil(lambda: view.undo_stack.index() == 1)
    assert log.facts[fid].status == "deleted" and view.undo_stack.canUndo()
    confirm.answer = True
    view.undo_stack.undo()
    files.step()
    assert log.facts[fid].status == "active"


def test_redaction_of_an_api_key_typed_into_content(view, log, confirm):
    files = Appends(log.path)
    dialog = view.editing.add_fact()
    dialog.set_values("config", f"deploy with ANTHROPIC_API_KEY={KEY}", f"key {KEY}")
    assert not dialog.redacted_label.isHidden()
    assert "content and context" in dialog.redacted_label.text()
    dialog.accept()
    raw = files.path.read_bytes()
    assert KEY.encode() not in raw
    line = files.step()[0]
    assert line["content"] == "deploy with ANTHROPIC_API_KEY=[REDACTED]"
    assert KEY not in "".join(confirm.calls[-1][0].lines)  # the preview was redacted too
    assert view.current_id() == line["id"]


def test_errors_are_shown_not_raised(view, log):
    files = Appends(log.path)
    fid = live_ids(log)[0]
    view.select_fact(fid)
    dialog = view.editing.edit_current()
    dialog.accept()  # nothing changed
    assert "nothing to change" in dialog.error_label.text() and dialog.isVisible()
    dialog.set_values(log.facts[fid].type, "   ")
    dialog.accept()
    assert dialog.error_label.text() == "A fact needs content."
    dialog.reject()
    files.unchanged()


def test_refresh_after_live_appends_keeps_selection_and_scroll(qtbot, view, log):
    ids = [_shown_ids(view)[r] for r in (30, 31, 32)]
    view.select_ids(ids, ids[1])
    bar = view.table.verticalScrollBar()
    bar.setValue(bar.maximum() // 2)
    scroll = bar.value()
    with open(log.path, "ab") as fh:  # the agent writes meanwhile
        rec = log.last_record(ids[1])
        fh.write(orjson.dumps({**rec, "content": "the agent changed it"}) + b"\n")
        fh.write(orjson.dumps({"id": "agent-new", "type": "task_state",
                               "content": "open: the agent's new fact", "timestamp": 1}) + b"\n")  # fmt: skip
    catch_up(log)
    changed = view.refresh()
    assert set(changed) == {ids[1], "agent-new"}
    assert view.selected_ids() == [i for i in _shown_ids(view) if i in ids]
    assert view.current_id() == ids[1] and bar.value() == scroll
    assert view.detail.text.toPlainText() == "the agent changed it"
    assert view.model.rowCount() == 65


def test_undo_refused_when_the_agent_changed_the_fact(qtbot, view, log):
    files = Appends(log.path)
    fid = live_ids(log)[0]
    view.select_fact(fid)
    view.editing.set_type_selected("issue")
    files.step()
    with open(log.path, "ab") as fh:
        fh.write(orjson.dumps({**log.last_record(fid), "content": "agent edit"}) + b"\n")
    files.data = files.path.read_bytes()
    with qtbot.waitSignal(view.failed) as got:
        view.undo_stack.undo()
    assert "was changed after this edit" in got.args[0]
    files.unchanged()
    qtbot.waitUntil(lambda: view.undo_stack.index() == 1)
    assert log.facts[fid].content == "agent edit"  # the view read the agent's line


def test_context_menu_and_keys(qtbot, view, log):
    texts = [a.text() for a in view.table.actions() if not a.isSeparator()]
    for name in ("&Edit…", "&Supersede…", "&Delete…", "&Restore…", "Set &Type"):
        assert name in texts
    keys = {
        view.editing.edit_action.shortcut().toString(),
        view.editing.supersede_action.shortcut().toString(),
        view.editing.restore_action.shortcut().toString(),
        view.editing.delete_action.shortcut().toString(),
    }
    assert keys == {"F2", "Ctrl+Shift+S", "Ctrl+R", "Del"}
    view.select_fact(live_ids(log)[0])
    activate(qtbot, view)
    qtbot.keyClick(view.table, Qt.Key.Key_Return)
    assert view.editing.edit_dialog is not None and view.editing.edit_dialog.mode == "edit"
    view.editing.edit_dialog.reject()


def test_screenshot(qtbot, view, log, tmp_path):
    fid = next(f.id for f in log.facts.values() if f.status == "superseded")
    view.select_fact(fid)
    view.show()
    qtbot.waitExposed(view)
    view.detail.tabs.setCurrentIndex(1)
    assert not view.grab().isNull()
    view.grab().save(str(tmp_path / "facts.png"))


def test_live_follow_of_memlens_and_agent_lines_keeps_rows(qtbot, view, log):
    """The live tail re-reads lines memlens wrote: no duplicate row, no reset, selection kept."""
    from core.live.store import apply_knowledge

    start = log.size
    first_line = log.lines + 1
    with open(log.path, "ab") as fh:  # the agent's line lands first...
        fh.write(orjson.dumps({"id": "agent-1", "type": "issue", "content": "agent fact",
                               "timestamp": 5}) + b"\n")  # fmt: skip
    dialog = view.editing.add_fact()  # ...then memlens adds a fact (it reads the agent's line)
    dialog.set_values("decision", "memlens fact")
    dialog.accept()
    new_id = view.current_id()
    assert {"agent-1", new_id} <= set(_shown_ids(view))
    resets: list[int] = []
    view.model.modelReset.connect(lambda: resets.append(1))
    data = Path(log.path).read_bytes()[start:]
    apply_knowledge(log, data, first_line=first_line, offset=start)  # the tail's batch
    view.refresh()
    assert resets == []
    assert view.model.rowCount() == len(log.facts) == 66
    assert view.current_id() == new_id and view.selected_ids() == [new_id]
    assert [ln.line for ln in log.history[new_id]] == [first_line + 1]
