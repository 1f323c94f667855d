"""The loss audit tab (issue 20 #1, in the app): picker, scores, items, filters, navigation.

Real pi sessions from ``shared/fixtures`` (read only): ``before-compaction.jsonl``
has two compactions, ``large-session.jsonl`` none. What the view shows is compared
with :mod:`core.compaction.audit` run on the same session.
"""

from __future__ import annotations

import orjson
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from core.compaction.audit import audit_compaction, audit_dry_run
from core.compaction.settings import CompactionSettings
from core.transcript import load_transcript
from tests.qt_read import shown_records
from widgets.common.jobs import default_runner
from widgets.common.view_jobs import wait_idle
from widgets.compaction.audit_view import AuditView
from widgets.compaction.layout import CompactionLayout

NEWEST, OLDEST = "dc2335c4", "2b9a9701"


@pytest.fixture(scope="module")
def session(fixtures_dir):
    return load_transcript(fixtures_dir / "before-compaction.jsonl")


@pytest.fixture(scope="module")
def plain(fixtures_dir):
    return load_transcript(fixtures_dir / "large-session.jsonl")


@pytest.fixture
def view(qtbot):
    view = AuditView()
    qtbot.addWidget(view)
    view.resize(1000, 600)
    view.show()
    return view


def _settle(view):
    assert wait_idle(default_runner(), view._key, 30_000)


def _key(item):
    return (item.text, item.category, item.status, item.source)


def _shown(view):
    return [row.item for row in shown_records(view.proxy)]


def _combo_texts(combo):
    return [combo.itemText(i) for i in range(combo.count())]


def test_the_table_shows_exactly_the_audit_of_the_newest_compaction(qtbot, view, session):
    view.set_session(session)
    _settle(view)
    texts = _combo_texts(view.compaction_combo)
    assert texts[0].startswith(f"#2 · {NEWEST} · 185,014 tokens")
    assert texts[1].startswith(f"#1 · {OLDEST} · ")
    assert "next cut" in texts[2]
    expected = audit_compaction(session, NEWEST)
    assert sorted(map(_key, _shown(view))) == sorted(map(_key, expected.items))
    # lost items first, status coloured and bold, the row tinted
    first = view.proxy.index(0, 0)
    assert first.data() == "lost"
    assert first.data(Qt.ItemDataRole.FontRole).bold()
    assert first.data(Qt.ItemDataRole.BackgroundRole) is not None
    assert f"{len(expected.lost())} lost for good" in view.headline.text()
    scores = {
        view.score_model.index(r, 0).data(): [
            view.score_model.index(r, c).data() for c in range(1, 7)
        ]
        for r in range(view.score_model.rowCount())
    }
    for cat, s in expected.scores().items():
        assert scores[cat] == [
            f"{v:,}" for v in (s.items, s.kept, s.normalised, s.missing, s.lost)
        ] + [f"{100 * s.loss:.0f}%"]
    assert view.score_table.isColumnHidden(7)  # no memlens columns without the comparison
    assert view.items_table.isColumnHidden(1)
    assert not view.message_label.isVisible()


def test_the_status_and_text_filters(qtbot, view, session):
    view.set_session(session)
    _settle(view)
    audit = audit_compaction(session, NEWEST)
    view.status_combo.setCurrentText("Lost for good only")
    assert sorted(map(_key, _shown(view))) == sorted(map(_key, audit.lost()))
    view.status_combo.setCurrentText("Missing or lost")
    gone = [i for i in audit.items if i.status in ("missing", "lost")]
    assert sorted(map(_key, _shown(view))) == sorted(map(_key, gone))
    assert view.count_label.text() == f"{len(gone):,} of {len(audit.items):,}"
    view.status_combo.setCurrentText("All items")
    qtbot.keyClicks(view.text_edit, "WP1")
    want = [i for i in audit.items if "wp1" in " ".join((i.text, i.category, *i.source)).lower()]
    assert want and sorted(map(_key, _shown(view))) == sorted(map(_key, want))


def test_memlens_on_the_same_cut_side_by_side(qtbot, view, session):
    view.set_session(session)
    _settle(view)
    view.compaction_combo.setCurrentIndex(1)  # the older compaction
    view.compare_check.setChecked(True)
    _settle(view)
    agent = audit_compaction(session, OLDEST)
    ours = audit_dry_run(session, at=OLDEST, same_cut=True)
    assert view.outcome.request.at == OLDEST
    assert sorted(map(_key, _shown(view))) == sorted(map(_key, agent.items))
    model = view.score_model
    assert model.headerData(1, Qt.Orientation.Horizontal) == "agent\nitems"
    assert model.headerData(8, Qt.Orientation.Horizontal) == "memlens\nkept"
    assert not view.score_table.isColumnHidden(8)
    rows = {model.index(r, 0).data(): r for r in range(model.rowCount())}
    for cat, s in ours.scores().items():
        r = rows[cat]
        assert [model.index(r, c).data() for c in range(7, 13)] == [
            f"{v:,}" for v in (s.items, s.kept, s.normalised, s.missing, s.lost)
        ] + [f"{100 * s.loss:.0f}%"]
    theirs = {(i.category, i.text): i.status for i in ours.items}
    for row in shown_records(view.proxy):
        assert row.other == theirs.get((row.item.category, row.item.text), "—")
    assert not view.items_table.isColumnHidden(1)
    assert "memlens on the same cut" in view.headline.text()
    view.compare_check.setChecked(False)
    _settle(view)
    assert view.score_table.isColumnHidden(8)


def test_a_newer_request_replaces_an_older_one(qtbot, view, session):
    view.set_session(session)  # the newest compaction starts auditing
    view.compaction_combo.setCurrentIndex(1)  # at once: the older one
    assert view.busy() and view.progress.isVisible()
    _settle(view)
    assert not view.progress.isVisible()
    assert view.outcome.request.at == OLDEST
    expected = audit_compaction(session, OLDEST)
    assert sorted(map(_key, _shown(view))) == sorted(map(_key, expected.items))


def test_activating_an_item_emits_its_first_source_entry(qtbot, view, session):
    view.set_session(session)
    _settle(view)
    index = view.proxy.index(3, 4)
    row = view.proxy.index(3, 0).data(Qt.ItemDataRole.UserRole + 1)
    view.items_table.setFocus()
    view.items_table.setCurrentIndex(index)
    with qtbot.waitSignal(view.entry_activated, timeout=2000) as sig:
        qtbot.keyClick(view.items_table, Qt.Key.Key_Return)
    assert sig.args == [row.item.source[0]]
    qtbot.waitExposed(view)
    rect = view.items_table.visualRect(view.proxy.index(0, 3))
    first = view.proxy.index(0, 0).data(Qt.ItemDataRole.UserRole + 1)
    with qtbot.assertNotEmitted(view.entry_activated):  # a click only selects
        qtbot.mouseClick(view.items_table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    with qtbot.waitSignal(view.entry_activated, timeout=2000) as sig:
        qtbot.mouseDClick(view.items_table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert sig.args == [first.item.source[0]]


def test_a_session_without_compaction_audits_the_next_cut(qtbot, view, plain):
    settings = CompactionSettings(window=128_000, keep_recent_tokens=8_000)
    view.set_session(plain, settings)  # the agent's settings plan memlens's cut
    _settle(view)
    assert view.compaction_combo.count() == 1
    assert "no compaction" in view.message_label.text()
    assert view.message_label.isVisible()
    assert not view.compare_check.isEnabled()
    expected = audit_dry_run(plain, **settings.kwargs())
    assert expected.items
    assert expected.first_kept_entry_id != audit_dry_run(plain).first_kept_entry_id
    assert view.outcome.primary.first_kept_entry_id == expected.first_kept_entry_id
    assert sorted(map(_key, _shown(view))) == sorted(map(_key, expected.items))
    assert "next cut" in view.headline.text()
    assert view.score_model.headerData(1, Qt.Orientation.Horizontal) == "memlens\nitems"


def test_nothing_to_audit_is_a_message_not_a_crash(qtbot, view, tmp_path):
    path = tmp_path / "short.jsonl"
    lines = [
        {"type": "session", "version": 3, "id": "s-short", "timestamp": "2026-01-01T00:00:00Z",
         "cwd": "/w"},
        {"type": "message", "id": "m1", "parentId": None, "timestamp": "2026-01-01T00:00:01Z",
         "message": {"role": "user", "content": "hello", "timestamp": 1}},
    ]  # fmt: skip
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    view.set_session(load_transcript(path))
    _settle(view)
    assert view.message_label.text().startswith("Cannot audit: ")
    assert view.message_label.isVisible()
    assert view.items_model.rowCount() == 0 and view.score_model.rowCount() == 0
    view.set_session(None)
    assert view.message_label.text() == "No session selected."
    assert not view.compaction_combo.isEnabled()


def test_a_hidden_view_audits_when_it_shows(qtbot, session):
    layout = CompactionLayout()
    qtbot.addWidget(layout)
    layout.show()
    view = layout.audit_view
    view.set_session(session)
    assert not view.isVisible() and not view.busy()  # the Summary tab is current
    assert view.items_model.rowCount() == 0
    titles = [layout.tabs.tabText(i) for i in range(layout.tabs.count())]
    assert "&Loss audit" in titles
    layout.tabs.setCurrentWidget(view)
    _settle(view)
    assert view.outcome.request.at == NEWEST
    assert view.items_model.rowCount() == len(audit_compaction(session, NEWEST).items)


def test_keyboard_mnemonics_and_tab_order(view):
    labels = {b.buddy(): b.text() for b in view.findChildren(QLabel) if b.buddy()}
    assert labels[view.compaction_combo] == "&Compaction:"
    assert labels[view.status_combo] == "S&tatus:"
    assert labels[view.text_edit] == "Te&xt:"
    assert "&memlens" in view.compare_check.text()
    order, w = [], view.compaction_combo
    for _ in range(5):
        order.append(w)
        w = w.nextInFocusChain()
        while w.focusPolicy() == Qt.FocusPolicy.NoFocus or w.parent() is None:
            w = w.nextInFocusChain()
    assert order[:5] == [
        view.compaction_combo,
        view.compare_check,
        view.status_combo,
        view.text_edit,
        view.items_table,
    ]
