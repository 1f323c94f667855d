"""The one job runner: all background work of the app goes through :class:`JobRunner`.

A job is a function ``fn(*, progress, cancelled)`` run in a :class:`QThreadPool`:

- ``progress(done, total, label)`` reports progress (throttled to one report per 50 ms);
- ``cancelled()`` says whether the caller asked it to stop; long jobs check it and raise
  :class:`core.io.jobs.Cancelled` (or call :func:`core.io.jobs.check`).

Its end arrives on the GUI thread, as exactly one of the callbacks given to
:meth:`JobRunner.submit` (``done(result)``, ``failed(message)``, ``cancelled()``), and as
:attr:`JobRunner.ended`. Every exception is logged with its traceback on the
``memlens.jobs`` logger (the app writes it to a rotating log file) and reported by
:attr:`JobRunner.error` (the app shows it in Activity).

A job submitted with a *key* replaces the job of the same key: the old one is asked to
stop and whatever it still delivers is dropped, because its generation is no longer the
key's current one. A late result for an old request therefore never reaches a view.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot
from typing_extensions import override

from core.io.jobs import Cancelled

log = logging.getLogger("memlens.jobs")

PROGRESS_INTERVAL_S = 0.05

JobFn = Callable[..., Any]
"""``fn(*, progress, cancelled) -> result``."""


def throttled(emit: Callable[[int, int, str], Any]) -> Callable[[int, int, str], None]:
    """*emit* at most every 50 ms (first, last and label changes always pass).

    A job may report every file or segment; each report is a queued call on the GUI
    thread, and thousands of them in a row would stall it.
    """
    last_time = [0.0]
    last_label = [""]

    def progress(done: int, total: int, label: str) -> None:
        now = time.monotonic()
        if done >= total or label != last_label[0] or now - last_time[0] >= PROGRESS_INTERVAL_S:
            last_time[0], last_label[0] = now, label
            emit(done, total, label)

    return progress


def error_text(exc: BaseException) -> str:
    """A one-line message for people: the exception's text, or its type when it has none."""
    text = str(exc)
    return text if text else type(exc).__name__


class _Relay(QObject):
    """Carries every job's reports from the pool threads to the GUI thread (queued)."""

    progressed = Signal(int, int, int, str)  # job id, done, total, label
    ended = Signal(int, str)  # job id, outcome ("done" | "failed" | "cancelled")


@dataclass(eq=False)
class Job:
    """One submitted job: its name, key and generation, and a way to cancel it."""

    name: str
    key: str | None
    generation: int
    done: Callable[[Any], None] | None = None
    failed: Callable[[str], None] | None = None
    cancelled: Callable[[], None] | None = None
    progress: Callable[[int, int, str], None] | None = None
    stop: threading.Event = field(default_factory=threading.Event)
    outcome: str = ""
    """``""`` while running, then ``"done"``, ``"failed"``, ``"cancelled"`` or ``"stale"``."""
    fn: JobFn | None = field(default=None, repr=False)

    def cancel(self) -> None:
        """Ask the job to stop at its next check (it still reports its end)."""
        self.stop.set()

    @property
    def running(self) -> bool:
        """Whether the job has not reported its end yet."""
        return not self.outcome


class _Runnable(QRunnable):
    """Runs one job's function in a pool thread.

    It holds no reference the GUI owns when it ends: the function and the job stay with
    the runner, the result is handed over through :attr:`JobRunner._payloads` before the
    end is signalled, and every local is dropped first. So the last reference to a view
    or a controller a job's closure captured is always released on the GUI thread (a
    QObject destroyed in a pool thread would stop its timers from the wrong thread).
    """

    def __init__(self, job_id: int, runner: JobRunner) -> None:
        super().__init__()
        self.setAutoDelete(True)
        self._id = job_id
        self._runner = runner  # lives for the app; never the last reference
        self._relay = runner._relay

    @override
    def run(self) -> None:
        outcome, payload = self._call()
        self._runner._hand_over(self._id, payload)
        del payload
        self._relay.ended.emit(self._id, outcome)

    def _call(self) -> tuple[str, object]:
        job_id, relay = self._id, self._relay
        fn, stop, name = self._runner._start_of(job_id)
        try:
            result = fn(
                progress=throttled(lambda d, t, label: relay.progressed.emit(job_id, d, t, label)),
                cancelled=stop.is_set,
            )
        except Cancelled:
            return "cancelled", None
        except BaseException as exc:  # every failure becomes a report, never a silent end
            log.error("job %r failed", name, exc_info=exc)
            return "failed", error_text(exc)
        finally:
            del fn
        if stop.is_set():
            return "cancelled", None
        return "done", result


class JobRunner(QObject):
    """Runs jobs in a thread pool; delivers their ends on the GUI thread.

    Signals: :attr:`started` (a :class:`Job`), :attr:`progressed` (job, done, total,
    label), :attr:`ended` (job, after its callback ran) and :attr:`error` (job name,
    message) for failures, which the app shows in Activity.
    """

    started = Signal(object)
    progressed = Signal(object, int, int, str)
    ended = Signal(object)
    error = Signal(str, str)

    def __init__(self, pool: QThreadPool | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = pool if pool is not None else QThreadPool.globalInstance()
        self._generations: dict[str, int] = {}
        self._current: dict[str, Job] = {}
        self._jobs: dict[int, Job] = {}  # running jobs by id (GUI thread owns them)
        self._payloads: dict[int, object] = {}  # results handed over by pool threads
        self._lock = threading.Lock()
        self._next_id = 0
        self._relay = _Relay(self)
        self._relay.progressed.connect(self._on_progress)
        self._relay.ended.connect(self._on_ended)

    def submit(
        self,
        name: str,
        fn: JobFn,
        *,
        key: str | None = None,
        done: Callable[[Any], None] | None = None,
        failed: Callable[[str], None] | None = None,
        cancelled: Callable[[], None] | None = None,
        progress: Callable[[int, int, str], None] | None = None,
    ) -> Job:
        """Run ``fn(progress=..., cancelled=...)`` in the pool and return its :class:`Job`.

        With a *key*, an earlier job of that key is cancelled and anything it still
        delivers is dropped. The callbacks run on the GUI thread; exactly one of *done*,
        *failed* and *cancelled* runs, unless the job went stale (nothing runs then).
        """
        generation = 0
        if key is not None:
            generation = self._generations.get(key, 0) + 1
            self._generations[key] = generation
            old = self._current.get(key)
            if old is not None:
                old.cancel()
        job = Job(name, key, generation, done, failed, cancelled, progress, fn=fn)
        if key is not None:
            self._current[key] = job
        self._next_id += 1
        with self._lock:
            self._jobs[self._next_id] = job
        self.started.emit(job)
        self._pool.start(_Runnable(self._next_id, self))
        return job

    def cancel(self, key: str) -> None:
        """Cancel the current job of *key* and drop whatever it still delivers."""
        self._generations[key] = self._generations.get(key, 0) + 1
        job = self._current.pop(key, None)
        if job is not None:
            job.cancel()

    def cancel_all(self) -> None:
        """Ask every running job to stop; what they still deliver is dropped."""
        for job in list(self._jobs.values()):
            if job.key is not None:
                self.cancel(job.key)
            job.cancel()

    def busy(self, key: str) -> bool:
        """Whether the current job of *key* is still running."""
        job = self._current.get(key)
        return job is not None and job.running

    def running(self) -> list[Job]:
        """The jobs that have not reported their end yet."""
        return [job for job in self._jobs.values() if job.running]

    def shutdown(self, timeout_ms: int = 5000) -> bool:
        """Cancel everything and wait for the pool threads; False if some did not stop."""
        self.cancel_all()
        return bool(self._pool.waitForDone(timeout_ms))

    def _start_of(self, job_id: int) -> tuple[JobFn, threading.Event, str]:
        """What a pool thread needs to run job *job_id* (its function, stop flag, name)."""
        with self._lock:
            job = self._jobs[job_id]
            assert job.fn is not None
            return job.fn, job.stop, job.name

    def _hand_over(self, job_id: int, payload: object) -> None:
        """A pool thread leaves job *job_id*'s result here before signalling its end."""
        with self._lock:
            self._payloads[job_id] = payload

    def _stale(self, job: Job) -> bool:
        return job.key is not None and self._generations.get(job.key) != job.generation

    @Slot(int, int, int, str)
    def _on_progress(self, job_id: int, done: int, total: int, label: str) -> None:
        job = self._jobs.get(job_id)
        if job is None or self._stale(job) or job.stop.is_set():
            return
        if job.progress is not None:
            job.progress(done, total, label)
        self.progressed.emit(job, done, total, label)

    @Slot(int, str)
    def _on_ended(self, job_id: int, outcome: str) -> None:
        with self._lock:
            job = self._jobs.pop(job_id, None)
            payload = self._payloads.pop(job_id, None)
        if job is None:
            return
        job.fn = None
        if job.key is not None and self._current.get(job.key) is job:
            del self._current[job.key]
        if outcome == "failed":
            self.error.emit(job.name, str(payload))
        if self._stale(job):
            job.outcome = "stale"
            log.debug("job %r: dropped a result of an old request (%s)", job.name, outcome)
            self.ended.emit(job)
            return
        job.outcome = outcome
        try:
            if outcome == "done" and job.done is not None:
                job.done(payload)
            elif outcome == "failed" and job.failed is not None:
                job.failed(str(payload))
            elif outcome == "cancelled" and job.cancelled is not None:
                job.cancelled()
        except Exception as exc:  # a failing callback must not take the runner down
            log.error("job %r: its %s callback failed", job.name, outcome, exc_info=exc)
            self.error.emit(job.name, error_text(exc))
        self.ended.emit(job)


_default: JobRunner | None = None


def default_runner() -> JobRunner:
    """The app's job runner on the global thread pool (created on first use, GUI thread)."""
    global _default
    if _default is None:
        _default = JobRunner()
    return _default
