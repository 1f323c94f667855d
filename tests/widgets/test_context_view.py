from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from core.dataset.load import load_dataset
from core.demo.build import write_demo
from core.transcript import context_at, load_transcript
from core.transcript.parts import context_rows
from core.transcript.recalled_block import MARKER
from tests.core.test_message_parts import synthetic_session
from widgets.common.record_model import RecordRole
from widgets.session.context_view import ContextTableModel, ContextView

BLOCK = f"{MARKER}\n\n<knowledge>\n- [decision] keep the old code for reference\n</knowledge>\n\n</recalled-context>"


@pytest.fixture(scope="module")
def before(fixtures_dir):
    return load_transcript(fixtures_dir / "before-compaction.jsonl")


@pytest.fixture
def view(qtbot):
    v = ContextView()
    qtbot.addWidget(v)
    v.resize(900, 500)
    return v


def _shown(view, column):
    proxy = view.proxy
    return [proxy.index(r, column).data() for r in range(proxy.rowCount())]


def _records(view):
    return [view.proxy.index(r, 0).data(RecordRole) for r in range(view.proxy.rowCount())]


def test_model_passes_qtmodeltester(qtmodeltester, before):
    model = ContextTableModel()
    model.set_records(context_rows(context_at(before, "#700"), BLOCK))
    qtmodeltester.check(model)


def test_context_after_second_compaction(view, before):
    target = before.entry("#700")
    comp = before.compaction_entries()[1]
    view.show_context(before, "#700")
    items = context_at(before, target.id)
    # pi adds a result for #627's call (its result was never written)
    assert view.proxy.rowCount() == len(items) + 1 == 151
    assert _shown(view, 0)[:3] == ["1", "2", "3"]
    assert _shown(view, 1)[0] == "compactionSummary"
    origins = _shown(view, 2)
    assert origins[0] == "summary"
    records = _records(view)
    assert records[0].entry_id == comp.id
    assert records[1].entry_id == comp.raw["firstKeptEntryId"] == before.entry("#551").id
    n_kept = origins.count("kept")
    assert origins[1 : 1 + n_kept] == ["kept"] * n_kept
    assert origins[1 + n_kept] == "synthetic"
    assert set(origins[2 + n_kept :]) == {"after compaction", "not sent"}
    made = view.proxy.index(1 + n_kept, 4)
    assert made.data(Qt.ItemDataRole.FontRole).italic()
    assert "never written" in made.data(Qt.ItemDataRole.ToolTipRole)
    skipped = view.proxy.index(origins.index("not sent"), 4)
    assert skipped.data(Qt.ItemDataRole.FontRole).strikeOut()
    assert [r.entry_id for r in records if r.origin != "synthetic"] == [i.entry.id for i in items]
    assert _shown(view, 3)[0] == f"{items[0].tokens:,}"
    total = sum(i.tokens for i in items)
    assert view.total_tokens == total
    assert f"150 messages · ≈ {total:,} tokens" in view.footer.text()
    assert "1 synthetic result added as pi sends" in view.footer.text()
    assert f"kept: {n_kept} msg" in view.footer.text()
    assert "#700" in view.title.text()
    # the selected entry is the last row, in bold
    last = view.proxy.index(view.proxy.rowCount() - 1, 4)
    assert records[-1].entry_id == target.id
    assert last.data(Qt.ItemDataRole.FontRole).bold()
    assert not view.proxy.index(0, 4).data(Qt.ItemDataRole.FontRole)


def test_recalled_block_is_injected(view, before):
    view.show_context(before, "#700")
    plain_total = view.total_tokens
    view.show_context(before, "#700", recalled_block=BLOCK)
    assert view.proxy.rowCount() == 152
    assert _shown(view, 2)[:3] == ["summary", "recalled", "kept"]
    rec = _records(view)[1]
    assert rec.entry_id == "" and rec.role == "user"
    assert _shown(view, 4)[1].startswith('<recalled-context source="memory-context">')
    assert view.total_tokens == plain_total + rec.tokens
    assert "recalled: 1 msg" in view.footer.text()
    view.show_context(before, "#700", recalled_block=BLOCK, injection_index=0)
    assert _shown(view, 2)[:2] == ["recalled", "summary"]


def test_selecting_a_row_emits_its_entry(view, qtbot, before):
    view.show_context(before, "#700", recalled_block=BLOCK)
    records = _records(view)
    with qtbot.waitSignal(view.entry_activated) as blocker:
        view.table.selectRow(5)
    assert blocker.args == [records[5].entry_id]
    with qtbot.assertNotEmitted(view.entry_activated):
        view.table.selectRow(1)  # the injected block has no entry
    view.show()
    qtbot.waitExposed(view)
    index = view.proxy.index(7, 4)
    view.table.scrollTo(index)
    rect = view.table.visualRect(index)
    with qtbot.waitSignal(view.entry_activated) as blocker:  # a click selects
        qtbot.mouseClick(view.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert blocker.args == [records[7].entry_id]
    # the row is already selected: only the double click can emit now
    with qtbot.waitSignal(view.entry_activated) as blocker:
        qtbot.mouseDClick(view.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert blocker.args == [records[7].entry_id]


def test_filter_and_sort(view, qtbot, before):
    view.show_context(before, "#700")
    qtbot.keyClicks(view.filter_edit, "toolResult")
    roles = _shown(view, 1)
    assert roles and set(roles) == {"toolResult"}
    assert f"showing {len(roles)}" in view.footer.text()
    assert "150 messages" in view.footer.text()  # totals stay those of the whole context
    view.filter_edit.clear()
    view.table.sortByColumn(3, Qt.SortOrder.DescendingOrder)
    tokens = [r.tokens for r in _records(view)]
    assert tokens == sorted(tokens, reverse=True)
    view.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
    assert _shown(view, 0)[:12] == [str(n) for n in range(1, 13)]  # numeric, not "1", "10", ...


def test_large_sessions_replay_in_a_worker(view, qtbot, before):
    view.show_context(before, "#700", BLOCK)
    expected = view.rows()
    view.clear()
    view.sync_limit = 0  # every session counts as large
    with qtbot.waitSignal(view.context_shown, timeout=10_000):
        view.show_context(before, "#100")
        view.show_context(before, "#700", BLOCK)  # supersedes the first request
        assert view.is_busy() and view.proxy.rowCount() == 0
    assert view.rows() == expected and view.proxy.rowCount() == len(expected)
    assert "#700" in view.title.text() and not view.is_busy()
    qtbot.wait(50)  # the superseded result, if it comes late, changes nothing
    assert view.rows() == expected
    with qtbot.waitSignal(view.context_shown, timeout=10_000):
        view.show_context(before, "nope")
    assert view.proxy.rowCount() == 0 and "no entry with id 'nope'" in view.footer.text()


def test_stored_recalled_blocks_and_errors(view):
    s = synthetic_session()
    view.show_context(s, "e9")
    assert _shown(view, 2) == [
        "summary",
        "kept",
        "kept",
        "synthetic",
        "recalled",
        "after compaction",
        "after compaction",
    ]
    view.show_context(s, "e9", recalled_block=BLOCK)
    assert _shown(view, 2) == [
        "summary",
        "recalled",
        "kept",
        "kept",
        "synthetic",
        "after compaction",
        "after compaction",
    ]
    assert _records(view)[1].entry_id == ""  # the stored block made way for the new one
    view.show_context(s, "missing")
    assert view.proxy.rowCount() == 0 and "no entry with id 'missing'" in view.footer.text()
    view.show_context(s, "e9")
    view.clear()
    assert view.proxy.rowCount() == 0 and view.rows() == [] and view.total_tokens == 0


def test_demo_context_at_leaf_after_compactions(view, tmp_path):
    write_demo(tmp_path / "home", now_ms=1_760_000_000_000, segments=300)
    session = max(
        load_dataset(tmp_path / "home").sessions, key=lambda s: len(s.compaction_entries())
    )
    last = session.compaction_entries()[-1]
    leaf = session.leaf
    view.show_context(session, leaf.id)
    records = _records(view)
    assert records[0].entry_id == last.id and records[0].origin == "summary"
    assert records[1].entry_id == last.raw["firstKeptEntryId"]
    assert {r.role for r in records} >= {"user", "assistant", "toolResult"}
    assert len(records) == len(context_at(session, leaf.id))
