"""Live mode: follow the open data directory while the agent writes to it.

:class:`LiveController` wraps :class:`core.live.follow.LiveFollower` for the app.
File-system events (``QFileSystemWatcher``: inotify on Linux) and a polling timer (the
fallback where events do not come: network file systems, watch limits) only mark files
dirty, on the GUI thread; a short single-shot drain timer then starts one *read* job in
the app's :class:`widgets.common.jobs.JobRunner`: reading the new bytes, parsing them,
building the new entries with their checks, finding compactions and memory flushes,
computing session summaries, querying agent databases and indexing new segments in the
warm store (with its eviction) all run in a pool thread. The job returns the steps to
apply, holding ready-made objects; the GUI thread runs them
(:meth:`core.live.follow.LiveFollower.apply`: attaching only, no parsing or checking), so
the loaded objects the views read change only on the GUI thread, and emits the
controller's signals once per batch, never once per line. Embedding new segments is a
second job.

Ownership: at most one read job of a controller runs at a time (marks that arrive
meanwhile start another when it ends), and the follower's recall side is changed only
between two reads. The read job has a key: after :meth:`LiveController.detach` (or a
new :meth:`~LiveController.attach`) whatever an old job still delivers is dropped.
Pause keeps marking files dirty; resume reads them all, so nothing written meanwhile is
lost.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QFileSystemWatcher,
    QModelIndex,
    QObject,
    QSignalBlocker,
    QTimer,
    Signal,
    Slot,
)

from core.io.jobs import Cancelled
from core.io.problems import Problem
from core.live.follow import LiveChanges, LiveFollower, LiveRead
from widgets.common.jobs import default_runner

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from PySide6.QtCore import QAbstractItemModel
    from PySide6.QtWidgets import QAbstractItemView

    from core.dataset.load import DataSet
    from core.dataset.open_recall import RecallData
    from widgets.common.jobs import JobRunner
    from widgets.live.indicator import LiveIndicator

log = logging.getLogger("memlens.live")

POLL_MS = 500
"""Polling interval when file-system events are not used."""
SAFETY_POLL_MS = 2000
"""Polling interval beside a working watcher (events can be missed: rename races)."""
DRAIN_MS = 200
"""Delay between the first change noticed and the batch that applies it."""


class _ReadGate:
    """Closes a follower's databases only when no read of it runs (a read may be late)."""

    def __init__(self, follower: LiveFollower) -> None:
        self.follower = follower
        self._lock = threading.Lock()
        self._busy = False
        self._closed = threading.Event()

    def read(self, dirty: set[str], everything: bool) -> LiveRead:
        """The follower's read phase (in a pool thread)."""
        with self._lock:
            if self._closed.is_set():
                raise Cancelled("live mode was detached")
            self._busy = True
        try:
            return self.follower.read(dirty, everything=everything)
        finally:
            with self._lock:
                self._busy = False
                if self._closed.is_set():
                    self.follower.close()

    def close(self) -> None:
        """Close now, or when the running read ends."""
        with self._lock:
            self._closed.set()
            if not self._busy:
                self.follower.close()


class LiveController(QObject):
    """Follow a loaded data set's files and tell the views what changed.

    Parameters
    ----------
    use_watcher
        Use ``QFileSystemWatcher`` events; False polls only (every *poll_ms*).
    poll_ms, drain_ms
        See :data:`POLL_MS` and :data:`DRAIN_MS`.
    runner
        Where the reads and the embedding run (default: the app's runner).

    Signals are emitted once per batch (a read applied), in this order: ``file_reset``,
    ``session_added``, ``sessions_changed``, ``summaries_changed``, ``segments_added``,
    ``knowledge_changed``, ``compaction_announced``, ``memory_flush_announced``,
    ``problem``, ``recall_reopen_needed``, then ``batch_applied`` with the whole
    :class:`core.live.follow.LiveChanges`. ``read_failed`` says a read failed (the
    runner logged its traceback); ``polled`` ends every read, applied or not.
    """

    sessions_changed = Signal(list)
    """Ids of sessions with new entries (or reloaded)."""
    session_added = Signal(str)
    """Id of a session whose transcript appeared (already in ``data.sessions``)."""
    summaries_changed = Signal(list)
    """Ids of sessions whose row in ``data.summaries`` was replaced or added."""
    segments_added = Signal(int)
    """How many segments joined the warm set (and the warm store, when open)."""
    knowledge_changed = Signal(list)
    """Ids of facts whose state changed."""
    file_reset = Signal(str)
    """A file was truncated or replaced and has been reloaded whole."""
    compaction_announced = Signal(str, str)
    """Session id and a sentence: the agent compacted a session."""
    memory_flush_announced = Signal(str, str)
    """Session id and a sentence: the agent flushed memory before a compaction."""
    problem = Signal(object)
    """A :class:`core.io.problems.Problem` (file and line) met in the new lines."""
    state_changed = Signal(str)
    """``live``, ``paused`` or ``off``."""
    recall_reopen_needed = Signal()
    """segments.jsonl was replaced: open the recall side again, then :meth:`set_recall`."""
    batch_applied = Signal(object)
    """The :class:`core.live.follow.LiveChanges` of one batch (emitted last)."""
    read_failed = Signal(str)
    """A read or its application failed (the message; the traceback is in the log)."""
    polled = Signal()
    """A read ended (applied, empty or failed): the files were looked at."""

    def __init__(
        self,
        parent: QObject | None = None,
        *,
        use_watcher: bool = True,
        poll_ms: int = POLL_MS,
        drain_ms: int = DRAIN_MS,
        runner: JobRunner | None = None,
    ) -> None:
        super().__init__(parent)
        self.use_watcher = use_watcher
        self.poll_ms = poll_ms
        self.follower: LiveFollower | None = None
        self.last_event_time: float | None = None
        """Epoch seconds of the last batch that changed something."""
        self._runner = runner if runner is not None else default_runner()
        self._read_key = f"live-read-{id(self)}"
        self._embed_key = f"live-embed-{id(self)}"
        self._state = "off"
        self._everything = False
        self._gate: _ReadGate | None = None
        self._reading = False
        self._read_again = False
        self._held: list[LiveRead] = []
        """Reads that arrived while paused: applied on resume, before the next read."""
        self._recall_pending: list[RecallData | None] = []
        self._embedding = False
        self._embed_again = False
        self._files: list[str] = []
        self._watcher: QFileSystemWatcher | None = None
        self._drain = QTimer(self, singleShot=True, interval=drain_ms)
        self._drain.timeout.connect(self._on_drain_timeout)
        self._poll = QTimer(self, interval=poll_ms)
        self._poll.timeout.connect(self._on_poll_timeout)

    # -- state ----------------------------------------------------------------------------
    @property
    def state(self) -> str:
        """``live``, ``paused`` or ``off``."""
        return self._state

    def _set_state(self, state: str) -> None:
        if state != self._state:
            self._state = state
            self.state_changed.emit(state)

    # -- attach / detach ------------------------------------------------------------------
    def attach(self, data: DataSet, recall: RecallData | None = None) -> None:
        """Follow *data*'s files from where they were loaded; *recall* when it is open."""
        self.detach()
        follower = self.follower = LiveFollower(data, recall)
        self._gate = _ReadGate(follower)
        self._files = follower.files()
        if self.use_watcher:
            self._watcher = QFileSystemWatcher(self)
            self._watcher.fileChanged.connect(self._on_file_changed)
            self._watcher.directoryChanged.connect(self._on_directory_changed)
            self._rewatch()
        self._poll.setInterval(SAFETY_POLL_MS if self._watcher is not None else self.poll_ms)
        self._poll.start()
        self._set_state("live")
        # Catch up with what was written between the load and now.
        self._everything = True
        self._drain.start()

    def set_recall(self, recall: RecallData | None) -> None:
        """The recall side opened (or reopened): index what it missed, follow into it."""
        if self.follower is None:
            return
        if self._reading:  # the read job uses the follower's store: change it after
            self._recall_pending = [recall]
            return
        if self.follower.set_recall(recall):
            self._embed()

    def detach(self) -> None:
        """Stop following (the loaded objects stay as they are)."""
        self._poll.stop()
        self._drain.stop()
        self._runner.cancel(self._read_key)  # a late read is dropped
        self._runner.cancel(self._embed_key)
        if self._watcher is not None:
            self._watcher.deleteLater()
            self._watcher = None
        if self._gate is not None:
            self._gate.close()
        self._gate = None
        self.follower = None
        self._everything = False
        self._reading = self._read_again = False
        self._embedding = self._embed_again = False
        self._held = []
        self._recall_pending = []
        self._files = []
        self._set_state("off")

    @Slot()
    def pause(self) -> None:
        """Stop applying changes (they are noted, and applied on :meth:`resume`)."""
        if self._state == "live":
            self._drain.stop()
            self._set_state("paused")

    @Slot()
    def resume(self) -> None:
        """Apply everything written while paused (in one batch), then follow again."""
        if self._state == "paused":
            self._set_state("live")
            if self._held:  # before the next read: it builds on what they found
                held = LiveRead([step for r in self._held for step in r.steps])
                self._held = []
                self._apply(held)
            self._everything = True
            self._start_read()

    @Slot()
    def toggle(self) -> None:
        """Pause when live, resume when paused (nothing when off)."""
        if self._state == "live":
            self.pause()
        elif self._state == "paused":
            self.resume()

    # -- events (GUI thread: they only mark files dirty) ----------------------------------------
    def _rewatch(self) -> None:
        """Watch every followed file and folder that exists (a rename drops a watch)."""
        watcher, follower = self._watcher, self.follower
        if watcher is None or follower is None:
            return
        have = set(watcher.files()) | set(watcher.directories())
        wanted = [p for p in (*follower.directories(), *self._files) if p not in have]
        wanted = [p for p in wanted if os.path.exists(p)]
        if wanted:
            failed = watcher.addPaths(wanted)
            if failed:  # watch limit reached: poll often instead
                self._poll.setInterval(self.poll_ms)

    @Slot(str)
    def _on_file_changed(self, path: str) -> None:
        if self.follower is not None:
            self.follower.mark_dirty(path)
            self._schedule()

    @Slot(str)
    def _on_directory_changed(self, path: str) -> None:
        follower = self.follower
        if follower is None:
            return
        follower.mark_dirty(path)
        # A file of the folder may have been replaced by a rename: look at each.
        for file in self._files:
            if os.path.dirname(file) == path:
                follower.mark_dirty(file)
        self._schedule()

    @Slot()
    def _on_poll_timeout(self) -> None:
        if self.follower is not None:
            self._everything = True
            self._schedule()

    def _schedule(self) -> None:
        if self._state == "live" and not self._drain.isActive():
            self._drain.start()

    @Slot()
    def _on_drain_timeout(self) -> None:
        if self._state == "live":
            self._start_read()

    # -- reading (a job) and applying (GUI thread) ---------------------------------------------
    def _start_read(self) -> None:
        follower, gate = self.follower, self._gate
        if follower is None or gate is None:
            return
        self._drain.stop()
        if self._reading:
            self._read_again = True
            return
        dirty = follower.take_dirty()
        everything, self._everything = self._everything, False
        self._reading = True

        def read(**_: Any) -> LiveRead:
            return gate.read(dirty, everything)

        self._runner.submit(
            "Live mode: reading new lines",
            read,
            key=self._read_key,
            done=self._on_read,
            failed=self._on_read_failed,
            cancelled=self._on_read_ended,
        )

    def _on_read(self, read: LiveRead) -> None:
        if self.follower is None:
            return
        if self._state == "paused":
            self._held.append(read)  # applied on resume, before its read
        else:
            self._apply(read)
        self._on_read_ended()

    def _apply(self, read: LiveRead) -> None:
        """Run a read's steps on the data set (GUI thread) and say what changed."""
        follower = self.follower
        assert follower is not None
        try:
            changes = follower.apply(read)
        except Exception as exc:  # a bad batch must not stop live mode
            log.error("live mode: applying a batch failed", exc_info=exc)
            changes = self._failure(f"{type(exc).__name__}: {exc}")
        self._files = follower.files()
        self._rewatch()
        if changes:
            self.last_event_time = time.time()
            self._emit(changes)

    def _on_read_failed(self, message: str) -> None:
        changes = self._failure(message)  # the runner logged the traceback
        self._emit(changes)
        self._on_read_ended()

    def _failure(self, message: str) -> LiveChanges:
        changes = LiveChanges()
        where = str(self.follower.data.discovery.path) if self.follower is not None else ""
        changes.problems.append(Problem(where, 0, f"live update failed: {message}"))
        if self.follower is not None:
            self.follower.data.problems.extend(changes.problems)
        self.read_failed.emit(message)
        return changes

    def _on_read_ended(self) -> None:
        self._reading = False
        if self._recall_pending and self.follower is not None:
            (recall,) = self._recall_pending
            self._recall_pending = []
            if self.follower.set_recall(recall):
                self._embed()
        self.polled.emit()
        if self._read_again:
            self._read_again = False
            self._schedule()

    def _emit(self, changes: LiveChanges) -> None:
        for path in changes.resets:
            self.file_reset.emit(path)
        for sid in changes.sessions_added:
            self.session_added.emit(sid)
        if changes.sessions_changed:
            self.sessions_changed.emit(list(changes.sessions_changed))
        if changes.summaries_changed:
            self.summaries_changed.emit(list(dict.fromkeys(changes.summaries_changed)))
        if changes.segments_added:
            self.segments_added.emit(changes.segments_added)
        if changes.segments_indexed:
            self._embed()
        if changes.facts_changed:
            self.knowledge_changed.emit(list(dict.fromkeys(changes.facts_changed)))
        for a in changes.announcements:
            signal = (
                self.compaction_announced if a.kind == "compaction" else self.memory_flush_announced
            )
            signal.emit(a.session_id, a.message)
        for p in changes.problems:
            self.problem.emit(p)
        if changes.store_reopen_needed:
            self.recall_reopen_needed.emit()
        self.batch_applied.emit(changes)

    # -- embedding (a job) --------------------------------------------------------------------
    def _embed(self) -> None:
        """Give the new segments vectors in a job (one at a time; BM25 finds them meanwhile)."""
        follower = self.follower
        store = follower.segments.store if follower and follower.segments else None
        if store is None:
            return
        if self._embedding:
            self._embed_again = True
            return
        self._embedding = True
        self._runner.submit(
            "Live mode: embedding new segments",
            lambda progress, cancelled: store.embed_missing(
                save=False, progress=progress, cancelled=cancelled
            ),
            key=self._embed_key,
            done=lambda _count: self._on_embedded(),
            failed=lambda _message: self._on_embedded(),  # logged and shown by the runner
            cancelled=self._on_embedded,
        )

    def _on_embedded(self) -> None:
        self._embedding = False
        if self._embed_again:
            self._embed_again = False
            self._embed()


def bind_indicator(controller: LiveController, indicator: LiveIndicator) -> None:
    """Keep *indicator* in step with *controller*; clicks and Ctrl+L toggle pause."""
    indicator.set_state(controller.state)
    controller.state_changed.connect(indicator.set_state)
    controller.batch_applied.connect(
        lambda changes: indicator.note_changes(describe(changes), controller.last_event_time)
    )
    indicator.toggle_requested.connect(controller.toggle)


def describe(changes: LiveChanges) -> str:
    """A short sentence for what one batch applied (the indicator's tooltip)."""
    parts: list[str] = []
    entries = sum(len(v) for v in changes.entries.values())
    if entries:
        parts.append(f"{entries} new entr{'y' if entries == 1 else 'ies'}")
    if changes.sessions_added:
        parts.append(f"{len(changes.sessions_added)} new session(s)")
    if changes.segments_added:
        parts.append(f"{changes.segments_added} new segment(s)")
    if changes.facts_changed:
        parts.append(f"{len(set(changes.facts_changed))} fact(s) changed")
    if changes.resets:
        parts.append(f"{len(changes.resets)} file(s) reloaded")
    if changes.announcements:
        parts.append("; ".join(a.message for a in changes.announcements))
    if changes.problems:
        parts.append(f"{len(changes.problems)} problem(s)")
    return ", ".join(parts) or "files touched, nothing new"


@contextmanager
def kept_view(view: QAbstractItemView, key: Callable[[QModelIndex], Any]) -> Iterator[None]:
    """Keep an item view's current row and scroll position across a model reset.

    Use around a call that resets or refills the view's model (``with
    kept_view(tree, key): model.set_records(...)``). *key* names a row (for
    instance the record's id under ``RecordRole``); afterwards the row with the
    same key is made current again, without emitting selection signals (the
    views driven by the selection must not reload), and both scroll bars get
    their old values back. Live mode does not need it: its updates are row inserts
    and ``dataChanged``, which keep all of that by themselves.
    """
    current = view.currentIndex()
    wanted = key(current) if current.isValid() else None
    h_bar, v_bar = view.horizontalScrollBar(), view.verticalScrollBar()
    h, v = h_bar.value(), v_bar.value()
    try:
        yield
    finally:
        if wanted is not None:
            found = _find(view.model(), key, wanted)
            if found is not None:
                selection = view.selectionModel()
                with QSignalBlocker(selection):
                    view.setCurrentIndex(found)
                view.viewport().update()
        h_bar.setValue(h)
        v_bar.setValue(v)


def _find(
    model: QAbstractItemModel, key: Callable[[QModelIndex], Any], wanted: Any
) -> QModelIndex | None:
    """The first index (column 0, depth first) whose key is *wanted*.

    ``rowCount`` tells whether a row has children: ``hasChildren`` is private in
    ``QAbstractTableModel`` and PySide6 raises when it is called on a table model.
    """
    stack = [QModelIndex()]
    while stack:
        parent = stack.pop()
        for row in range(model.rowCount(parent)):
            index = model.index(row, 0, parent)
            if key(index) == wanted:
                return index
            if model.rowCount(index) > 0:
                stack.append(index)
    return None
