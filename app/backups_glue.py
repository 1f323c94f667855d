"""The Activity dock's glue: whose files the writes touched, and the Backups tab.

The activity log is told which files are memlens's own (its data, cache and
settings folders; the demo home inside the cache is an agent's data), so the
Writes tab lists the writes to the agent's data apart from memlens's own
(:func:`own_files`).

The Backups tab lists, restores and prunes the open place's backups.

:class:`BackupsGlue` puts a :class:`widgets.activity.backups_view.BackupsView` beside the
activity log in the Activity dock and feeds it the backups of the open data
directory (listed in a job, again whenever the sessions are reloaded or the
tab is shown). A restore is confirmed with the window's write preview (which
file is replaced by which backup, and the sizes), then done in a job: the
file is backed up first, so the restore can itself be undone, and both writes
reach the activity log. After every backup memlens makes, the retention
settings (Settings > Safety: backups kept per file, days) prune the older
backups of that file, never the one just made.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QTimer, Signal, Slot

from app.app_config import safety_defaults
from app.context import AppContext, AppHelper
from app.demo_data import demo_path
from app.layout import BACKUPS_TAB
from app.paths import cache_dir, data_dir
from app.settings import default_settings
from core.io.fsutil import next_backup_path
from core.io.writes import PlannedWrite, planned_backup
from core.safety.activity import load_activity
from core.safety.activity_owner import OwnFiles
from core.safety.backups import list_backups, plan_restore, prune, recorded_hashes, restore
from widgets.activity.view import local_time

if TYPE_CHECKING:
    from app.manager import Manager
    from core.io.fsutil import WriteRecord
    from core.safety.backups import Backup, Pruned, Restored, RestorePlan

LIST_DELAY_MS = 150


def restore_writes(plan: RestorePlan) -> list[PlannedWrite]:
    """What restoring *plan* writes, as the confirm dialog shows it."""
    b, target = plan.backup, Path(plan.target)
    made = f"{b.size:,} bytes, made {local_time(b.time)}"
    if plan.target_size is None:
        return [
            PlannedWrite(str(target), "create", f"recreate {target.name} from {b.name} ({made})")
        ]
    backup = next_backup_path(target)  # named once: the name shown is the file made
    return [
        PlannedWrite(
            str(backup),
            "backup",
            f"copy {target.name} as it is now ({plan.target_size:,} bytes) so the restore "
            "can be undone",
        ),
        PlannedWrite(
            str(target),
            "rewrite",
            f"replace {target.name} ({plan.target_size:,} bytes now) with the backup "
            f"{b.name} ({made})",
            backup=str(backup),
        ),
    ]


def own_files() -> OwnFiles:
    """The folders of memlens's own files; the demo home in its cache is an agent's data."""
    settings = Path(default_settings().fileName()).parent
    return OwnFiles.of([data_dir(), cache_dir(), settings], places=[demo_path()])


def _restore_task(plan: RestorePlan, activity: Path, backup_to: Path | None) -> Restored:
    """Restore *plan*, checking the backup against the hash logged when it was made.

    *backup_to* is the name the confirm dialog gave the copy of the file replaced.
    """
    expected = recorded_hashes(load_activity(activity).records).get(
        os.path.abspath(plan.backup.path)
    )
    return restore(plan, expected_sha256=expected, backup_to=backup_to)


class BackupsGlue(AppHelper):
    """Wires the Backups tab to the window's data, settings, confirm and activity log.

    Signals
    -------
    restored(Restored)
        A restore was written.
    listed(list)
        The backups of the open place were listed (the view shows them).
    """

    restored = Signal(object)
    listed = Signal(list)
    _backup_made = Signal(object)

    def __init__(
        self, context: AppContext, manager: Manager, parent: QObject | None = None
    ) -> None:
        super().__init__(context, parent)
        self.manager = manager
        views = context.views
        self.view = views.backups_view
        self.tabs = views.activity_tabs
        self.root: str | None = None
        self._dirty = True
        self._restoring = False
        self._tag = f"@{id(self):x}"
        self.list_key, self.restore_key = f"backups.list{self._tag}", f"backups.restore{self._tag}"
        self._keys = {self.list_key, self.restore_key}
        self._timer = QTimer(self, singleShot=True, interval=LIST_DELAY_MS)
        self._timer.timeout.connect(self._list)
        self.view.refresh_requested.connect(self.refresh)
        self.view.restore_requested.connect(self.request_restore)
        self.tabs.currentChanged.connect(self._on_tabs_current_changed)
        views.navigator.model.modelReset.connect(self._on_sessions_reset)
        self._backup_made.connect(self._on_backup_made, Qt.ConnectionType.QueuedConnection)
        self._pending: dict[str, str] = {}
        """Backups made for a write that has not happened yet, by the file backed up."""
        manager.activity.subscribe(self._on_write)
        manager.activity.own_files = own_files()
        views.activity_view.set_owner_rule(manager.activity.owner)

    def drop_jobs(self) -> None:
        """The window is closing: whatever listing, pruning or restoring delivers is dropped."""
        for key in self._keys:
            self.runner.cancel(key)

    # --- listing -------------------------------------------------------------------

    def refresh(self) -> None:
        """List the open place's backups again (in a job, shortly)."""
        data = self.app_state.data
        self.root = str(data.discovery.path) if data is not None else None
        self._dirty = False
        self._timer.start()

    @Slot()
    def _list(self) -> None:
        root = self.root
        if root is None:
            self.view.set_backups([])
            self.listed.emit([])
            return
        self.runner.submit(
            "listing backups",
            lambda **_: (root, list_backups(root)),
            key=self.list_key,  # a newer listing drops this one's result
            done=self._on_listed,
            failed=self.view.set_message,
        )

    def _on_listed(self, result: tuple[str, list[Backup]]) -> None:
        root, backups = result
        if root != self.root:
            return  # another place was opened meanwhile
        self.view.set_backups(backups)
        self.listed.emit(backups)

    def _visible(self) -> bool:
        return self.tabs.currentWidget() is self.view and self.view.isVisible()

    @Slot()
    def _on_sessions_reset(self) -> None:
        # A place opened or sessions reloaded after a write: list again when seen.
        if self._visible():
            self.refresh()
        else:
            self._dirty = True

    @Slot(int)
    def _on_tabs_current_changed(self, index: int) -> None:
        if index == BACKUPS_TAB and self._dirty:
            self.refresh()

    def show_backups(self) -> None:
        """Bring the Backups tab forward (the dock too) and list the backups."""
        self.views.activity_dock.show()
        self.views.activity_dock.raise_()
        self.tabs.setCurrentIndex(BACKUPS_TAB)
        self.view.table.setFocus()
        self.refresh()

    # --- retention -------------------------------------------------------------------

    def _on_write(self, record: WriteRecord) -> None:
        """Activity subscriber (any thread): a backup, or the write it was made for."""
        if (record.action == "backup" and record.backup) or record.action in ("append", "rewrite"):
            self._backup_made.emit(record)

    @Slot(object)
    def _on_backup_made(self, record: WriteRecord) -> None:
        """Prune once the write a backup was made for has happened.

        Not when the backup is made: the write may still be refused or fail, and
        then its backup is removed again; pruning before that could leave the file
        with no backup at all.
        """
        if record.action == "backup":
            self._pending[record.path] = record.backup or ""
            return
        made = self._pending.pop(record.path, None) or record.backup
        if made is None:
            return  # a write without a backup (an append to a fact log)
        safety = safety_defaults(self.settings)
        keep, days = safety.backups_keep, safety.backups_days
        if not keep and not days:
            self._after_change()
            return

        def task(**_: object) -> Pruned:
            return prune(record.path, keep=keep, days=days, protect=[made or ""])

        key = f"backups.prune:{record.path}{self._tag}"  # a newer prune of the file reports instead
        self._keys.add(key)
        self.runner.submit(
            "pruning backups", task, key=key, done=self._on_pruned, failed=self.view.set_message
        )

    def _on_pruned(self, done: Pruned) -> None:
        if done.removed or done.failed:
            text = f"Removed {len(done.removed)} old backup(s) (retention in Settings > Safety)"
            if done.failed:
                text += f"; could not remove {len(done.failed)}: {done.failed[0][1]}"
            self.view.set_message(text)
        self._after_change()

    def _after_change(self) -> None:
        if self._visible():
            self.refresh()
        else:
            self._dirty = True

    # --- restoring -------------------------------------------------------------------

    @Slot(object)
    def request_restore(self, backup: Backup) -> bool:
        """Confirm, then restore *backup* in a job; False if not started."""
        if self._restoring:
            return False
        plan = plan_restore(backup)
        writes = restore_writes(plan)
        if not self.manager.confirm(writes):
            return False
        activity = self.manager.activity.path
        shown = planned_backup(writes, str(Path(plan.target)))
        backup_to = Path(shown) if shown else None
        self._restoring = True
        self.runner.submit(
            "restoring",
            lambda **_: _restore_task(plan, activity, backup_to),
            key=self.restore_key,
            done=self._on_restored,
            failed=self._on_restore_failed,
        )
        self.view.set_busy(True, f"Restoring {Path(plan.target).name} from {backup.name}…")
        return True

    def _on_restored(self, done: Restored) -> None:
        self._restoring = False
        kept = f"; the replaced file was kept as {Path(done.saved).name}" if done.saved else ""
        text = f"Restored {done.target} ({done.size:,} bytes){kept}"
        self.view.set_busy(False, text)
        self.status.say(text)
        data = self.app_state.data
        if data is not None and any(Path(s.path) == Path(done.target) for s in data.sessions):
            self.manager.reload_session(
                next(s.path for s in data.sessions if Path(s.path) == Path(done.target))
            )
        self.refresh()
        self.restored.emit(done)

    def _on_restore_failed(self, message: str) -> None:
        self._restoring = False
        self.view.set_busy(False, f"Not restored: {message}")
