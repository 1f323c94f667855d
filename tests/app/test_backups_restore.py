"""The Activity dock's Backups tab: listed, restored after a confirm (undoably), pruned."""

from __future__ import annotations

from pathlib import Path

from app.app_config import SAFETY_BACKUPS_DAYS, SAFETY_BACKUPS_KEEP
from app.main_window import MainWindow
from core.io import fsutil
from core.safety.backups import list_backups
from tests.core.build import chain, lines, write_file
from tests.qt_read import shown_records


def _home(tmp_path: Path) -> Path:
    sessions = tmp_path / "home" / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    write_file(sessions / "s.jsonl", lines(chain(12)))
    return sessions / "s.jsonl"


def _open(qtbot, path: Path, confirm):
    window = MainWindow(confirm=confirm)
    qtbot.addWidget(window)
    window.open_path(str(path))
    qtbot.waitUntil(
        lambda: window.data is not None and window.inspector.session is not None, timeout=30000
    )
    return window


def _listed(qtbot, window) -> list[str]:
    with qtbot.waitSignal(window.backups.listed, timeout=10000) as got:
        window.backups.show_backups()
    return [b.path for b in got.args[0]]


def test_backups_are_listed_and_restored_after_a_confirm(qtbot, tmp_path):
    s = _home(tmp_path)
    asked = []

    def confirm(writes):
        asked.append(list(writes))
        return True

    window = _open(qtbot, s.parent.parent.parent.parent, confirm)
    glue = window.backups
    assert glue.tabs.tabText(0) == "Writes" and glue.tabs.tabText(1) == "Backups"
    assert window.activity_dock.widget() is glue.tabs
    good = s.read_bytes()
    made = fsutil.make_backup(s)
    s.write_bytes(good + b'{"broken"\n')
    # the backup is in the activity log (Writes tab) and in the Backups tab
    qtbot.waitUntil(
        lambda: any(r.action == "backup" for r in shown_records(window.activity_view.table.model()))
    )
    assert _listed(qtbot, window) == [str(made)]
    view = glue.view
    assert view.select(str(made))
    with qtbot.waitSignal(glue.restored, timeout=20000) as got:
        view.restore_button.click()
    backup, rewrite = asked[-1]  # what the confirm showed
    assert (backup.action, rewrite.action) == ("backup", "rewrite") and rewrite.path == str(s)
    assert made.name in rewrite.summary
    assert f"{len(good) + 10:,} bytes now" in rewrite.summary
    assert f"{len(good):,} bytes, made" in rewrite.summary
    assert s.read_bytes() == good
    done = got.args[0]
    assert Path(done.saved).read_bytes() == good + b'{"broken"\n'  # the restore can be undone
    qtbot.waitUntil(
        lambda: any(
            r.action == "rewrite" and r.path == str(s) and r.backup == done.saved
            for r in shown_records(window.activity_view.table.model())
        )
    )
    qtbot.waitUntil(lambda: len(shown_records(view.table.model())) == 2, timeout=10000)
    assert "Restored" in view.status_label.text()
    assert window.data.sessions[0].size == len(good)  # the session was reloaded


def test_a_refused_confirm_or_a_changed_file_restores_nothing(qtbot, tmp_path):
    s = _home(tmp_path)
    answer = [False]
    agent_line = b'{"type":"custom","customType":"agent"}\n'

    def confirm(_writes):
        if answer[0]:  # the agent writes while the dialog is open
            with open(s, "ab") as fh:
                fh.write(agent_line)
        return answer[0]

    window = _open(qtbot, s.parent.parent.parent.parent, confirm)
    good = s.read_bytes()
    made = fsutil.make_backup(s)
    s.write_bytes(good + b"{}\n")
    _listed(qtbot, window)
    view = window.backups.view
    view.select(str(made))
    view.restore_button.click()
    assert s.read_bytes() == good + b"{}\n" and len(list_backups(s)) == 1
    answer[0] = True
    view.restore_action.trigger()
    qtbot.waitUntil(lambda: "Not restored" in view.status_label.text(), timeout=20000)
    assert "changed since" in view.status_label.text()
    assert s.read_bytes() == good + b"{}\n" + agent_line and len(list_backups(s)) == 1
    assert view.restore_button.isEnabled()


def test_retention_prunes_after_each_backup_but_never_the_new_one(qtbot, tmp_path):
    s = _home(tmp_path)
    window = _open(qtbot, s.parent.parent.parent.parent, lambda _w: True)
    window.settings.set_values([(SAFETY_BACKUPS_KEEP, 2), (SAFETY_BACKUPS_DAYS, 0)])
    made = []
    for n in range(4):
        made.append(fsutil.make_backup(s))
        fsutil.append_lines(s, b'{"type":"custom","n":%d}\n' % n)  # the write it was for
        qtbot.waitUntil(lambda: len(list_backups(s)) <= 2, timeout=10000)
        assert made[-1].exists()
    assert [b.path for b in list_backups(s)] == [str(p) for p in made[-2:]]
    assert not any(p.exists() for p in made[:2])
    other = s.with_name("keep.me.memlens-backup-notes")  # not a memlens backup name
    other.write_bytes(b"mine")
    fsutil.make_backup(s)
    fsutil.append_lines(s, b'{"type":"custom","n":9}\n')
    qtbot.waitUntil(lambda: not made[2].exists(), timeout=10000)
    assert other.exists()


def test_no_pruning_for_a_backup_whose_write_never_came(qtbot, tmp_path):
    """A write refused after its backup removes that backup: pruning first could leave none."""
    s = _home(tmp_path)
    window = _open(qtbot, s.parent.parent.parent.parent, lambda _w: True)
    window.settings.set_values([(SAFETY_BACKUPS_KEEP, 1), (SAFETY_BACKUPS_DAYS, 0)])
    first = fsutil.make_backup(s)
    fsutil.append_lines(s, b'{"type":"custom","n":1}\n')
    qtbot.wait(300)
    second = fsutil.make_backup(s)  # then the write is refused: its backup goes
    qtbot.wait(500)
    assert first.exists()  # not pruned for a write that did not happen
    second.unlink()
    assert [b.path for b in list_backups(s)] == [str(first)]


def test_the_restore_keeps_the_replaced_file_under_the_name_the_confirm_showed(
    qtbot, tmp_path, monkeypatch
):
    """Issue 17, defect 7 (the restore preview): one backup name, shown and written."""
    from tests.widgets.test_issue17_compaction import SteppingClock

    s = _home(tmp_path)
    asked = []

    def confirm(writes):
        asked.append(list(writes))
        return True

    window = _open(qtbot, s.parent.parent.parent.parent, confirm)
    made = fsutil.make_backup(s)
    s.write_bytes(s.read_bytes() + b'{"broken"\n')
    monkeypatch.setattr(fsutil, "time", SteppingClock())  # every name read a second later
    assert str(made) in _listed(qtbot, window)
    assert window.backups.view.select(str(made))
    with qtbot.waitSignal(window.backups.restored, timeout=20000) as got:
        window.backups.view.restore_button.click()
    backup, rewrite = asked[-1]
    assert backup.path == rewrite.backup
    assert got.args[0].saved == backup.path
    assert Path(backup.path).read_bytes().endswith(b'{"broken"\n')
