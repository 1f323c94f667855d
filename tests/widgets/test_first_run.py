"""The first-run screen: buttons, detected homes with their figures, recent places, keyboard."""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

import pytest
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from core.dataset.home_scan import HomeSummary, scan_homes
from core.demo.build import write_demo
from widgets.start.first_run import FirstRunView
from widgets.start.places import (
    DetailRole,
    PathRole,
    PlaceListModel,
    TitleRole,
    newest_text,
    tilde,
)

if TYPE_CHECKING:
    from pathlib import Path

    from pytestqt.qtbot import QtBot

NOW_MS = 1_760_000_000_000


@pytest.fixture(scope="module")
def fake_home(tmp_path_factory: pytest.TempPathFactory, fixtures_dir: Path) -> Path:
    home = tmp_path_factory.mktemp("home")
    write_demo(home / ".openclaw", now_ms=NOW_MS, segments=300)
    project = home / ".pi" / "agent" / "sessions" / "--home-dev-shop--"
    project.mkdir(parents=True)
    for f in sorted(fixtures_dir.glob("*.jsonl")):
        shutil.copy(f, project / f.name)
    return home


@pytest.fixture
def homes(fake_home: Path) -> list[HomeSummary]:
    found = scan_homes(fake_home)
    assert [h.label for h in found] == ["OpenClaw", "pi"]
    return found


@pytest.fixture
def view(qtbot: QtBot) -> FirstRunView:
    v = FirstRunView()
    qtbot.addWidget(v)
    v.resize(1000, 720)
    return v


def _shown(qtbot: QtBot, view: FirstRunView) -> None:
    view.show()
    qtbot.waitExposed(view)
    view.activateWindow()
    qtbot.waitUntil(view.isActiveWindow)


def test_buttons_have_mnemonics_and_emit(qtbot: QtBot, view: FirstRunView) -> None:
    assert view.folder_button.text().strip() == "&Open Folder…"
    assert view.file_button.text().strip() == "Open &Transcript…"
    assert view.demo_button.text().strip() == "Open the &Demo"
    assert view.demo_button.accessibleName() == "Open the Demo"
    with qtbot.waitSignal(view.open_folder_requested):
        qtbot.mouseClick(view.folder_button, Qt.MouseButton.LeftButton)
    with qtbot.waitSignal(view.open_file_requested):
        qtbot.mouseClick(view.file_button, Qt.MouseButton.LeftButton)
    with qtbot.waitSignal(view.demo_requested):
        qtbot.mouseClick(view.demo_button, Qt.MouseButton.LeftButton)


@pytest.mark.parametrize(
    ("key", "signal"),
    [
        (Qt.Key.Key_O, "open_folder_requested"),
        (Qt.Key.Key_T, "open_file_requested"),
        (Qt.Key.Key_D, "demo_requested"),
    ],
)
def test_alt_mnemonics_press_the_buttons(
    qtbot: QtBot, view: FirstRunView, key: Qt.Key, signal: str
) -> None:
    _shown(qtbot, view)
    with qtbot.waitSignal(getattr(view, signal), timeout=1000):
        qtbot.keyClick(QApplication.focusWidget() or view, key, Qt.KeyboardModifier.AltModifier)


def test_homes_show_what_each_holds(
    qtbot: QtBot, view: FirstRunView, homes: list[HomeSummary], fake_home: Path
) -> None:
    view.set_homes(homes)
    model = view.homes_model
    assert model.rowCount() == 2
    claw, pi = (model.index(r, 0) for r in range(2))
    assert claw.data(TitleRole) == "OpenClaw"
    assert claw.data(PathRole) == str(fake_home / ".openclaw")
    assert claw.data(DetailRole) == (f"{homes[0].describe()} · {newest_text(homes[0].newest)}")
    assert claw.data(DetailRole).startswith("2 agents · 12 sessions · 303 segments · ")
    assert pi.data(DetailRole).startswith("1 project · 2 sessions · ")
    assert "latest session " in pi.data(DetailRole)
    assert claw.data(Qt.ItemDataRole.DisplayRole) == f"OpenClaw  {tilde(fake_home / '.openclaw')}"
    assert str(fake_home / ".openclaw") in claw.data(Qt.ItemDataRole.ToolTipRole)
    assert claw.data(Qt.ItemDataRole.AccessibleTextRole).endswith(claw.data(DetailRole))
    assert view.homes_view.isVisibleTo(view) and not view.homes_empty.isVisibleTo(view)
    assert view.homes == homes
    assert view.homes_hint.text() == "Enter or double-click opens"


def test_enter_opens_the_selected_home(
    qtbot: QtBot, view: FirstRunView, homes: list[HomeSummary]
) -> None:
    view.set_homes(homes)
    _shown(qtbot, view)
    view.setFocus()
    assert QApplication.focusWidget() is view.homes_view  # the first openable home
    assert view.homes_view.currentIndex().row() == 0
    with qtbot.waitSignal(view.open_requested) as blocker:
        qtbot.keyClick(view.homes_view, Qt.Key.Key_Return)
    assert blocker.args == [str(homes[0].path)]
    qtbot.keyClick(view.homes_view, Qt.Key.Key_Down)
    with qtbot.waitSignal(view.open_requested) as blocker:
        qtbot.keyClick(view.homes_view, Qt.Key.Key_Enter)
    assert blocker.args == [str(homes[1].path)]


def test_double_click_opens_a_home(
    qtbot: QtBot, view: FirstRunView, homes: list[HomeSummary]
) -> None:
    view.set_homes(homes)
    _shown(qtbot, view)
    rect = view.homes_view.visualRect(view.homes_model.index(1, 0))
    viewport = view.homes_view.viewport()
    # A real double-click is a press then a double-click event on the same item.
    qtbot.mouseClick(viewport, Qt.MouseButton.LeftButton, pos=rect.center())
    with qtbot.waitSignal(view.open_requested) as blocker:
        qtbot.mouseDClick(view.homes_view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert blocker.args == [str(homes[1].path)]


def test_a_home_with_a_problem_is_listed_but_not_openable(
    qtbot: QtBot, view: FirstRunView, tmp_path: Path
) -> None:
    broken = HomeSummary("pi", tmp_path / "pi", problem="nothing to open yet: no sessions")
    good = HomeSummary("OpenClaw", tmp_path / "oc", "openclaw-home", 1, 3, 10, 2, 2048)
    view.set_homes([broken, good])
    model = view.homes_model
    bad = model.index(0, 0)
    assert bad.data(DetailRole) == "nothing to open yet: no sessions"
    assert not model.flags(bad) & Qt.ItemFlag.ItemIsEnabled
    assert not model.flags(bad) & Qt.ItemFlag.ItemIsSelectable
    assert model.openable_rows() == [1]
    assert view.homes_view.currentIndex().row() == 1  # the openable one is current
    _shown(qtbot, view)
    with qtbot.assertNotEmitted(view.open_requested):
        view.homes_view.activated.emit(bad)
    with qtbot.waitSignal(view.open_requested) as blocker:
        qtbot.keyClick(view.homes_view, Qt.Key.Key_Return)
    assert blocker.args == [str(tmp_path / "oc")]


def test_nothing_found_and_scanning_messages(qtbot: QtBot, view: FirstRunView) -> None:
    view.set_scanning(True)
    assert not view.homes_view.isVisibleTo(view)
    assert view.homes_empty.isVisibleTo(view)
    assert view.homes_empty.text() == "Looking in ~/.openclaw or ~/.pi/agent/sessions…"
    view.set_homes([])
    assert view.homes_empty.text().startswith(
        "No agent home found in ~/.openclaw or ~/.pi/agent/sessions."
    )
    assert view.homes_hint.text() == ""
    assert view.focusProxy() is view.folder_button  # nothing listed: the first button


def test_recent_places(qtbot: QtBot, view: FirstRunView, tmp_path: Path) -> None:
    assert not view.recent_view.isVisibleTo(view) and not view.recent_label.isVisibleTo(view)
    places = [str(tmp_path / "work" / ".openclaw"), str(tmp_path / "s" / "one.jsonl")]
    view.set_recent(places)
    model = view.recent_model
    assert view.recent_view.isVisibleTo(view)
    assert [model.index(r, 0).data(PathRole) for r in range(2)] == places
    assert model.index(0, 0).data(Qt.ItemDataRole.DisplayRole) == ".openclaw"
    assert model.index(1, 0).data(DetailRole) == tilde(tmp_path / "s")
    assert view.focusProxy() is view.recent_view  # no homes: recent places come first
    _shown(qtbot, view)
    view.recent_view.setFocus()
    qtbot.keyClick(view.recent_view, Qt.Key.Key_Down)
    with qtbot.waitSignal(view.open_requested) as blocker:
        qtbot.keyClick(view.recent_view, Qt.Key.Key_Return)
    assert blocker.args == [places[1]]
    view.set_recent([])
    assert not view.recent_view.isVisibleTo(view)


def test_headings_are_buddies(qtbot: QtBot, view: FirstRunView, homes: list[HomeSummary]) -> None:
    view.set_homes(homes)
    view.set_recent(["/x/y"])
    assert view.homes_label.text() == "&Agent homes on this computer"
    assert view.homes_label.buddy() is view.homes_view
    assert view.recent_label.text() == "Recent &places"
    assert view.recent_label.buddy() is view.recent_view
    _shown(qtbot, view)
    view.folder_button.setFocus()
    qtbot.keyClick(view.folder_button, Qt.Key.Key_P, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is view.recent_view)
    qtbot.keyClick(view.recent_view, Qt.Key.Key_A, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is view.homes_view)


def test_tab_order(qtbot: QtBot, view: FirstRunView, homes: list[HomeSummary]) -> None:
    view.set_homes(homes)
    view.set_recent(["/x/y"])
    order = [view.folder_button]
    w = view.folder_button.nextInFocusChain()
    while w is not view.folder_button and len(order) < 50:
        if w.focusPolicy() & Qt.FocusPolicy.TabFocus and w.isVisibleTo(view):
            order.append(w)
        w = w.nextInFocusChain()
    wanted = [
        view.folder_button,
        view.file_button,
        view.demo_button,
        view.homes_view,
        view.recent_view,
    ]
    assert [x for x in order if x in wanted] == wanted


def test_lists_fit_their_rows(qtbot: QtBot, view: FirstRunView, tmp_path: Path) -> None:
    view.set_recent(["/a"])
    one = view.recent_view.height()
    view.set_recent([f"/p{i}" for i in range(3)])
    three = view.recent_view.height()
    view.set_recent([f"/p{i}" for i in range(30)])
    many = view.recent_view.height()
    row = view.recent_view.sizeHintForRow(0)
    assert three - one == 2 * row
    assert many == one + 5 * row  # at most six rows, then it scrolls
    fm = view.recent_view.fontMetrics()
    assert row >= 2 * fm.height()  # two lines per place


def test_renders_without_a_needless_scroll_bar(
    qtbot: QtBot, view: FirstRunView, homes: list[HomeSummary], tmp_path: Path
) -> None:
    view.set_homes(homes)
    view.set_recent([str(tmp_path / "a"), str(tmp_path / "b")])
    view.resize(1100, 780)
    _shown(qtbot, view)
    from PySide6.QtWidgets import QScrollArea

    scroll = view.findChild(QScrollArea)
    assert scroll is not None
    qtbot.waitUntil(lambda: not scroll.verticalScrollBar().isVisible())
    image = view.grab().toImage()
    assert not image.isNull() and image.width() == 1100
    # the selected home is painted in the highlight colour
    rect = view.homes_view.visualRect(view.homes_model.index(0, 0))
    origin = view.homes_view.viewport().mapTo(view, rect.topLeft())
    pixel = QColor(image.pixel(origin.x() + rect.width() - 4, origin.y() + rect.height() // 2))
    assert pixel == view.homes_view.palette().color(QPalette.ColorRole.Highlight)
    view.resize(640, 420)
    qtbot.waitUntil(lambda: scroll.verticalScrollBar().isVisible())  # small: it scrolls


def test_demo_icon_follows_the_palette(qtbot: QtBot, view: FirstRunView) -> None:
    before = view.demo_button.icon().pixmap(44, 44).toImage()
    palette = view.palette()
    palette.setColor(QPalette.ColorRole.Highlight, QColor("#cc3300"))
    view.setPalette(palette)
    after = view.demo_button.icon().pixmap(44, 44).toImage()
    assert QColor(after.pixel(6, 22)) == QColor("#cc3300")
    assert before != after


def test_place_model_passes_the_model_tester(
    qtmodeltester: object, homes: list[HomeSummary]
) -> None:
    model = PlaceListModel()
    model.set_homes(homes)
    qtmodeltester.check(model)  # type: ignore[attr-defined]
    model.set_places(["/a/b", "/c"])
    qtmodeltester.check(model)  # type: ignore[attr-defined]
    assert model.data(QModelIndex()) is None


def test_tilde_and_dates(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert tilde(tmp_path / ".openclaw") == "~/.openclaw"
    assert tilde(tmp_path) == "~"
    assert tilde(str(tmp_path) + "-other/x") == str(tmp_path) + "-other/x"
    assert newest_text(None) == ""
    assert newest_text(1e20) == ""
    assert newest_text(NOW_MS / 1000).startswith("latest session ")
