"""Live mode: follow the open data directory while the agent writes to it.

:class:`LiveController` wraps :class:`core.live.follow.LiveFollower` for the app.
File-system events (``QFileSystemWatcher``: inotify on Linux) and a polling
timer (the fallback where events do not come: network file systems, watch
limits) only mark files dirty; a short single-shot drain timer then reads the
dirty files and applies everything in one batch, so a burst of appends gives one
set of signals, never one per line. Pause keeps marking files dirty; resume reads
them all, so nothing written meanwhile is lost.
"""

from __future__ import annotations

import os
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QFileSystemWatcher,
    QModelIndex,
    QObject,
    QRunnable,
    QSignalBlocker,
    QThreadPool,
    QTimer,
    Signal,
    Slot,
)
from typing_extensions import override

from core.io.problems import Problem
from core.live.follow import LiveChanges, LiveFollower

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from PySide6.QtCore import QAbstractItemModel
    from PySide6.QtWidgets import QAbstractItemView

    from core.dataset.load import DataSet
    from core.dataset.open_recall import RecallData
    from core.recall.warm_store import WarmStore
    from widgets.live.indicator import LiveIndicator

POLL_MS = 500
"""Polling interval when file-system events are not used."""
SAFETY_POLL_MS = 2000
"""Polling interval beside a working watcher (events can be missed: rename races)."""
DRAIN_MS = 200
"""Delay between the first change noticed and the batch that applies it."""


class _EmbedSignals(QObject):
    finished = Signal(int)
    failed = Signal(str)


class _EmbedWorker(QRunnable):
    """Embed the warm store's new segments (they are searchable by BM25 meanwhile)."""

    def __init__(self, store: WarmStore) -> None:
        super().__init__()
        self.store = store
        self.signals = _EmbedSignals()

    @override
    def run(self) -> None:
        try:
            done = self.store.embed_missing(save=False)
        except Exception as exc:  # a worker turns every failure into a signal
            self.signals.failed.emit(f"{type(exc).__name__}: {exc}")
        else:
            self.signals.finished.emit(done)


class LiveController(QObject):
    """Follow a loaded data set's files and tell the views what changed.

    Parameters
    ----------
    use_watcher
        Use ``QFileSystemWatcher`` events; False polls only (every *poll_ms*).
    poll_ms, drain_ms
        See :data:`POLL_MS` and :data:`DRAIN_MS`.
    pool
        Where new segments are embedded (default: the global pool).

    Signals are emitted once per batch (a drain), in this order: ``file_reset``,
    ``session_added``, ``sessions_changed``, ``summaries_changed``, ``segments_added``,
    ``knowledge_changed``, ``compaction_announced``, ``memory_flush_announced``,
    ``problem``, ``recall_reopen_needed``, then ``batch_applied`` with the whole
    :class:`core.live.follow.LiveChanges`.
    """

    sessions_changed = Signal(list)
    """Ids of sessions with new entries (or reloaded)."""
    session_added = Signal(str)
    """Id of a session whose transcript appeared (already in ``data.sessions``)."""
    summaries_changed = Signal(list)
    """Ids of sessions whose row in ``data.summaries`` was replaced (refresh the navigator)."""
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
    """The :class:`core.live.follow.LiveChanges` of one drain (emitted last)."""

    def __init__(
        self,
        parent: QObject | None = None,
        *,
        use_watcher: bool = True,
        poll_ms: int = POLL_MS,
        drain_ms: int = DRAIN_MS,
        pool: QThreadPool | None = None,
    ) -> None:
        super().__init__(parent)
        self.use_watcher = use_watcher
        self.poll_ms = poll_ms
        self.follower: LiveFollower | None = None
        self.last_event_time: float | None = None
        """Epoch seconds of the last batch that changed something."""
        self.last_changes: LiveChanges | None = None
        self._state = "off"
        self._everything = False
        self._pool = pool or QThreadPool.globalInstance()
        self._embedding: _EmbedWorker | None = None
        self._embed_again = False
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

    @property
    def is_live(self) -> bool:
        """Whether changes are being applied as they come."""
        return self._state == "live"

    @property
    def watching(self) -> bool:
        """Whether file-system events are used (else polling alone)."""
        return self._watcher is not None

    def _set_state(self, state: str) -> None:
        if state != self._state:
            self._state = state
            self.state_changed.emit(state)

    # -- attach / detach ------------------------------------------------------------------
    def attach(self, data: DataSet, recall: RecallData | None = None) -> None:
        """Follow *data*'s files from where they were loaded; *recall* when it is open."""
        self.detach()
        self.follower = LiveFollower(data, recall)
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
        if self.follower.set_recall(recall):
            self._embed()

    def detach(self) -> None:
        """Stop following (the loaded objects stay as they are)."""
        self._poll.stop()
        self._drain.stop()
        if self._watcher is not None:
            self._watcher.deleteLater()
            self._watcher = None
        if self.follower is not None:
            self.follower.close()
        self.follower = None
        self._everything = False
        self._set_state("off")

    @Slot()
    def pause(self) -> None:
        """Stop applying changes (they are noted, and applied on :meth:`resume`)."""
        if self._state == "live":
            self._drain.stop()
            self._set_state("paused")

    @Slot()
    def resume(self) -> None:
        """Apply everything written while paused, then follow again."""
        if self._state == "paused":
            self._set_state("live")
            self._everything = True
            self.drain_now()

    @Slot()
    def toggle(self) -> None:
        """Pause when live, resume when paused (nothing when off)."""
        if self._state == "live":
            self.pause()
        elif self._state == "paused":
            self.resume()

    # -- events -----------------------------------------------------------------------------
    def _rewatch(self) -> None:
        """Watch every followed file and folder that exists (a rename drops a watch)."""
        watcher, follower = self._watcher, self.follower
        if watcher is None or follower is None:
            return
        have = set(watcher.files()) | set(watcher.directories())
        wanted = [p for p in (*follower.directories(), *follower.files()) if p not in have]
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
        for file in follower.files():
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
            self.drain_now()

    # -- applying ---------------------------------------------------------------------------
    def drain_now(self) -> LiveChanges | None:
        """Apply every noted change now (also when paused); returns what was applied."""
        follower = self.follower
        if follower is None:
            return None
        self._drain.stop()
        everything, self._everything = self._everything, False
        try:
            changes = follower.poll(everything=everything)
        except Exception as exc:  # never let a bad file stop live mode
            changes = LiveChanges()
            where = str(follower.data.discovery.path)
            changes.problems.append(Problem(where, 0, f"live update failed: {exc!r}"))
        self._rewatch()
        if changes:
            self.last_event_time = time.time()
            self.last_changes = changes
            self._emit(changes)
        return changes

    def _emit(self, changes: LiveChanges) -> None:
        for path in changes.resets:
            self.file_reset.emit(path)
        for sid in changes.sessions_added:
            self.session_added.emit(sid)
        if changes.sessions_changed:
            self.sessions_changed.emit(list(changes.sessions_changed))
        if changes.summaries_changed:
            self.summaries_changed.emit(list(changes.summaries_changed))
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

    def _embed(self) -> None:
        """Give the new segments vectors in a worker (one at a time)."""
        follower = self.follower
        store = follower.segments.store if follower and follower.segments else None
        if store is None:
            return
        if self._embedding is not None:
            self._embed_again = True
            return
        worker = _EmbedWorker(store)
        worker.signals.finished.connect(self._on_embedded)
        worker.signals.failed.connect(self._on_embedded)
        self._embedding = worker
        self._pool.start(worker)

    @Slot()
    def _on_embedded(self) -> None:
        self._embedding = None
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
    """Keep an item view's current row and scroll position across a model update.

    Use around a call that resets or refills the view's model (``with
    kept_view(tree, key): model.set_records(...)``). *key* names a row (for
    instance the record's id under ``RecordRole``); afterwards the row with the
    same key is made current again, without emitting selection signals (the
    views driven by the selection must not reload), and both scroll bars get
    their old values back.
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
    """The first index (column 0, depth first) whose key is *wanted*."""
    stack = [QModelIndex()]
    while stack:
        parent = stack.pop()
        for row in range(model.rowCount(parent)):
            index = model.index(row, 0, parent)
            if key(index) == wanted:
                return index
            if model.hasChildren(index):
                stack.append(index)
    return None
