"""The soak run: the app follows a separate agent process, then is compared to a fresh open.

:func:`run_soak` writes a starting OpenClaw home (:mod:`tests.soak.writer`), opens it in
a :class:`app.main_window.MainWindow` (live mode attaches by itself once the data is
shown), selects the main session, then starts the writer as a separate process for
``seconds`` and keeps the event loop running while measuring (:mod:`tests.soak.meters`).
When the writer has finished it waits until the window shows what a second window
that opens the same files fresh shows (every view of :mod:`tests.soak.views`, and for
each session its timeline, message and context), or until ``settle_s`` runs out.

The result is a :class:`SoakReport`; :attr:`SoakReport.failures` lists what broke the
issue's criteria. The caller (the pytest test or ``python -m tests.soak.run``) decides
which of them to hold against the run.

Callers isolate the environment first (QSettings, HOME, MEMLENS_* folders): the
harness only touches *workdir*.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QApplication

from tests.soak import views
from tests.soak.meters import (
    ErrorCapture,
    RssSampler,
    StackSampler,
    StallMeter,
    memory_verdict,
    rss_bytes,
)
from tests.soak.writer import init_home

STALL_LIMIT_MS = 100.0
"""Issue 16: the longest GUI stall stays under 100 ms."""


@dataclass(slots=True)
class SoakConfig:
    """How long and how hard the agent writes."""

    seconds: float = 20.0
    rate: float = 40.0
    """Writes per second (a line, a sessions.json replacement or a rewrite)."""
    seed: int = 1
    cycle: int = 400
    """Writes between two rounds of special events (branch, compaction, new session,
    truncate-and-rewrite): at least one round in any run of ``cycle / rate`` seconds."""
    tick_ms: int = 5
    open_timeout_s: float = 120.0
    settle_s: float = 60.0
    """How long the followed window may take to show what a fresh open shows."""
    session_timeout_s: float = 20.0
    """How long a window may take to show a selected session's timeline."""


@dataclass(slots=True)
class SoakReport:
    """What one soak run measured (``to_json`` is what the script prints)."""

    config: SoakConfig
    writes: dict[str, int] = field(default_factory=dict)
    bytes_written: int = 0
    data_growth: int = 0
    """How much the data folder grew while the agent wrote (bytes)."""
    fresh_open_rss: int = 0
    """RSS added by opening the final files in a second window (for comparison)."""
    duration_s: float = 0.0
    stall: dict[str, Any] = field(default_factory=dict)
    worst_stalls: list[dict[str, Any]] = field(default_factory=list)
    memory: dict[str, Any] = field(default_factory=dict)
    rss_samples_mb: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    app_log_errors: list[str] = field(default_factory=list)
    """ERROR lines of the app's log file (mostly the same events as *errors*)."""
    warnings: list[str] = field(default_factory=list)
    alive: bool = False
    live_state: str = ""
    converged_s: float | None = None
    view_diffs: list[str] = field(default_factory=list)
    data_diffs: list[str] = field(default_factory=list)
    sessions: int = 0
    writer_returncode: int | None = None
    writer_stderr: str = ""

    @property
    def max_stall_ms(self) -> float:
        return float(self.stall.get("max_stall_ms", 0.0))

    def failures(self, *, stall_limit_ms: float | None = STALL_LIMIT_MS) -> list[str]:
        """Every criterion of issue 16 item 5 the run broke (the stall one when a limit is given)."""
        out: list[str] = []
        if self.writer_returncode != 0:
            out.append(f"the writer failed ({self.writer_returncode}): {self.writer_stderr[-500:]}")
        if not self.alive:
            out.append("the window is gone")
        if self.live_state not in ("live", "following"):
            out.append(f"live mode is {self.live_state!r} at the end, not live")
        out += [f"error: {e}" for e in self.errors]
        if self.app_log_errors:
            first = self.app_log_errors[0]
            out.append(f"{len(self.app_log_errors)} ERROR line(s) in the app log, first: {first}")
        if not self.memory.get("rss_flat", False):
            out.append(f"memory grew: {self.memory}")
        out += [f"view differs from a fresh open: {d}" for d in self.view_diffs]
        out += [f"data differs from a fresh open: {d}" for d in self.data_diffs]
        if stall_limit_ms is not None and self.max_stall_ms >= stall_limit_ms:
            out.append(f"longest GUI stall {self.max_stall_ms} ms >= {stall_limit_ms} ms")
        return out

    def to_json(self, *, stall_limit_ms: float | None = STALL_LIMIT_MS) -> dict[str, Any]:
        c = self.config
        return {
            "benchmark": "soak",
            "seconds": c.seconds,
            "rate": c.rate,
            "seed": c.seed,
            "cycle": c.cycle,
            "cores": os.cpu_count(),
            "duration_s": round(self.duration_s, 1),
            "writes": self.writes,
            "lines_written": sum(
                v for k, v in self.writes.items() if k not in ("store", "rewrite")
            ),
            "bytes_written": self.bytes_written,
            "data_growth_mb": round(self.data_growth / (1 << 20), 1),
            "fresh_open_rss_mb": round(self.fresh_open_rss / (1 << 20), 1),
            "sessions": self.sessions,
            **self.stall,
            "target_max_stall_ms": STALL_LIMIT_MS,
            "worst_stalls": self.worst_stalls,
            **self.memory,
            "rss_samples_mb": self.rss_samples_mb,
            "alive": self.alive,
            "live_state": self.live_state,
            "converged_s": self.converged_s,
            "errors": self.errors,
            "app_log_errors": self.app_log_errors,
            "warnings": self.warnings[:50],
            "view_diffs": self.view_diffs,
            "data_diffs": self.data_diffs,
            "failures": self.failures(stall_limit_ms=stall_limit_ms),
        }


# -- event loop helpers -----------------------------------------------------------------------
def wait_until(predicate: Any, timeout_s: float, step_ms: int = 20) -> bool:
    """Run the event loop until *predicate* holds (True) or *timeout_s* passes (False)."""
    if predicate():
        return True
    loop = QEventLoop()
    deadline = time.monotonic() + timeout_s
    result = [False]

    def check() -> None:
        try:
            ok = bool(predicate())
        except Exception:  # a view half built: look again at the next step
            ok = False
        if ok or time.monotonic() > deadline:
            result[0] = ok
            loop.quit()

    timer = QTimer()
    timer.setInterval(step_ms)
    timer.timeout.connect(check)
    timer.start()
    loop.exec()
    timer.stop()
    return result[0]


def spin(seconds: float) -> None:
    """Run the event loop for *seconds*."""
    wait_until(lambda: False, seconds)


# -- the window, through its public surface ---------------------------------------------------
def live_state(window: Any) -> str:
    """``live``, ``paused``, ``off`` (or ``following`` from an app state's live status)."""
    live = getattr(window, "live", None)
    controller = getattr(live, "controller", None)
    state = getattr(controller, "state", None)
    if isinstance(state, str):
        return state
    app_state = getattr(window, "app_state", None) or getattr(window, "state", None)
    status = getattr(app_state, "live", None)
    if status is not None and hasattr(status, "following"):
        return "following" if status.following else "off"
    return "unknown"


def loaded(window: Any) -> Any:
    """The window's open data set (``window.data``, or its app state's), None before."""
    data = getattr(window, "data", None)
    if data is None:
        app_state = getattr(window, "app_state", None) or getattr(window, "state", None)
        data = getattr(app_state, "data", None)
    return data


def ready(window: Any) -> bool:
    """The data is shown, recall is indexed (where the window says) and nothing is loading."""
    if loaded(window) is None:
        return False
    if hasattr(window, "recall_data") and window.recall_data is None:
        return False
    settled = getattr(window, "settled", None)
    return bool(settled()) if callable(settled) else True


def open_window(root: Path, timeout_s: float) -> Any:
    """A main window that opened *root* and is ready (see :func:`ready`)."""
    from app.main_window import MainWindow

    window = MainWindow()
    window.resize(1400, 900)
    window.show()
    window.open_path(str(root))
    if not wait_until(lambda: ready(window), timeout_s):
        raise RuntimeError(f"{root} did not open within {timeout_s} s")
    return window


def select_session(window: Any, path: str) -> bool:
    """Select the session at *path* in the navigator (by id when paths are not keys)."""
    session = next((s for s in loaded(window).sessions if s.path == path), None)
    if session is None:
        return False
    nav = window.navigator
    return bool(nav.select_session(path) or nav.select_session(session.id))


def show_entry(window: Any, entry_id: str) -> None:
    """Make *entry_id* the selected point of every view."""
    inspector = getattr(window, "inspector", None)
    if inspector is not None and hasattr(inspector, "show_entry"):
        inspector.show_entry(entry_id)
        return
    app_state = getattr(window, "app_state", None) or getattr(window, "state", None)
    app_state.select_entry(entry_id)


def session_shown(window: Any, path: str) -> bool:
    """The session at *path* is selected and its timeline is built up to its leaf."""
    session = next((s for s in loaded(window).sessions if s.path == path), None)
    if session is None or session.leaf is None:
        return False
    timeline = window.timeline.timeline()
    return (
        timeline is not None
        and timeline.session_id == session.id
        and timeline.leaf_id == session.leaf.id
    )


def _shown(window: Any) -> tuple[str, str | None] | None:
    timeline = window.timeline.timeline()
    return None if timeline is None else (timeline.session_id, timeline.leaf_id)


def _session_snapshot(window: Any, path: str, leaf: str, timeout_s: float) -> dict[str, Any] | None:
    """The session views of *window* once it shows the session at *path*, at *leaf*.

    One window at a time: the windows share the app's job runner, and a job key shared
    by both (the timeline's, the context replay's) would let one window's newer job drop
    the other's result.
    """
    select_session(window, path)
    if not wait_until(lambda: session_shown(window, path), timeout_s):
        return None
    show_entry(window, leaf)
    # the context and trim views are fed by jobs: wait until two looks agree
    last: list[Any] = [None]

    def steady() -> bool:
        now = views.session_views(window)
        same, last[0] = now == last[0], now
        return same

    wait_until(steady, 10, step_ms=300)
    return last[0]  # type: ignore[no-any-return]


# -- comparing ------------------------------------------------------------------------------------
def data_of(window: Any) -> dict[str, Any]:
    """The loaded data itself, keyed so that the order of arrival does not matter."""
    data = loaded(window)
    sessions = {
        s.path: [(e.id, e.type, e.parent_id, json.dumps(e.raw, sort_keys=True)) for e in s.entries]
        for s in data.sessions
    }
    summaries = {s.path: s.to_json() for s in data.summaries}
    problems = sorted((p.file, p.line, p.severity, p.message) for p in data.problems)
    log = data.knowledge
    facts = {}
    if log is not None:
        facts = {
            i: (f.type, f.content, f.status, f.line, f.superseded_by)
            for i, f in sorted(log.facts.items())
        }
    segs = data.segments
    segments = [(s.id, s.session_id, s.content) for s in segs.segments] if segs else []
    return {
        "sessions": sessions,
        "summaries": summaries,
        "problems": problems,
        "facts": facts,
        "fact_lines": log.lines if log is not None else 0,
        "segments": segments,
    }


def _window_diffs(live: dict[str, Any], fresh: dict[str, Any]) -> list[str]:
    """:func:`views.diff` of the window views, a view whose rows only differ in order
    said so in one line."""
    out: list[str] = []
    for key in sorted(set(live) | set(fresh)):
        a, b = live.get(key), fresh.get(key)
        if a == b:
            continue
        if (
            isinstance(a, list)
            and isinstance(b, list)
            and sorted(map(repr, a)) == sorted(map(repr, b))
        ):
            moved = sum(1 for x, y in zip(a, b, strict=True) if x != y)
            out.append(f"/{key}: the same {len(a)} rows, {moved} in another order than fresh")
            out += views.diff(a, b, f"/{key}", limit=2)
        else:
            out += views.diff(a, b, f"/{key}")
    return out


def compare(
    live: Any, fresh: Any, timeout_s: float, session_s: float = 20.0
) -> tuple[float | None, list[str], list[str]]:
    """Wait until *live* shows what *fresh* shows; (seconds it took or None, view diffs, data diffs)."""
    started = time.monotonic()
    want = views.window_views(fresh)
    want_data = data_of(fresh)

    def same() -> bool:
        return views.window_views(live) == want and data_of(live) == want_data

    converged = wait_until(same, timeout_s, step_ms=250)
    took = round(time.monotonic() - started, 2) if converged else None
    view_diffs = _window_diffs(views.window_views(live), want)
    data_diffs = views.diff(data_of(live), want_data, limit=10)
    # every session, selected in each window at its leaf: timeline, message, context
    for session in sorted(loaded(fresh).sessions, key=lambda s: s.path):
        leaf = session.leaf
        if leaf is None:
            continue
        name = Path(session.path).name
        shown = [_session_snapshot(w, session.path, leaf.id, session_s) for w in (live, fresh)]
        if shown[0] is None or shown[1] is None:
            view_diffs.append(
                f"{name}: the timeline did not reach its leaf {leaf.id} "
                f"(live, fresh show {[_shown(w) for w in (live, fresh)]})"
            )
            continue
        view_diffs += views.diff(shown[0], shown[1], name, limit=5)
    return took, view_diffs, data_diffs


class AppLog:
    """The app's own log file (``app.logs``, when there is one) in *folder*, for the run.

    The app writes job failures and uncaught exceptions there; :meth:`problems` lists its
    ERROR lines and tracebacks. Leaves the process's logging and excepthook as it found them.
    """

    def __init__(self, folder: Path) -> None:
        self.path: Path | None = None
        self._hook = sys.excepthook
        root = logging.getLogger()
        self._before = list(root.handlers)
        try:
            from app.logs import setup_logging
        except ImportError:
            return
        self.path = setup_logging(folder / "memlens.log")

    def problems(self) -> list[str]:
        if self.path is None or not self.path.exists():
            return []
        text = self.path.read_text(encoding="utf-8", errors="replace")
        out, current = [], ""
        for line in text.splitlines():
            if " ERROR " in line or " CRITICAL " in line:
                current = line
                out.append(current)
            elif "Traceback" in line and not current:
                out.append(line)
        return [f"app log {self.path.name}: {p}" for p in out]

    def close(self) -> None:
        root = logging.getLogger()
        for handler in [h for h in root.handlers if h not in self._before]:
            root.removeHandler(handler)
            handler.close()
        sys.excepthook = self._hook


def _folder_size(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


# -- the run --------------------------------------------------------------------------------------
def _writer_cmd(root: Path, config: SoakConfig, log: Path) -> list[str]:
    return [
        sys.executable, "-m", "tests.soak.writer", "run", str(root),
        "--seconds", str(config.seconds), "--rate", str(config.rate),
        "--seed", str(config.seed), "--cycle", str(config.cycle), "--log", str(log),
    ]  # fmt: skip


def _worst(
    stalls: list[tuple[float, float, float]],
    events: list[dict[str, Any]],
    stacks: StackSampler,
    t0: float,
) -> list[Any]:
    """The longest stalls: when (seconds after the writer started), the writes of the half
    second before, and what the GUI thread was running meanwhile."""
    out = []
    for ms, began, ended in stalls:
        near = [e["kind"] for e in events if began - 0.5 <= e["t"] <= ended]
        out.append(
            {
                "stall_ms": round(ms, 1),
                "at_s": round(began - t0, 2),
                "writes_before": {k: near.count(k) for k in dict.fromkeys(near)},
                "gui_thread_in": stacks.during(began, ended),
            }
        )
    return out


def run_soak(config: SoakConfig, workdir: Path) -> SoakReport:
    """Run the soak (see the module docstring) in *workdir*; returns what it measured."""
    app = QApplication.instance()
    assert app is not None, "create the QApplication first"
    report = SoakReport(config)
    root = workdir / "openclaw"
    log = workdir / "writes.jsonl"
    init_home(root, config.seed)
    repo = Path(__file__).resolve().parents[2]
    app_log = AppLog(workdir / "logs")
    live = open_window(root, config.open_timeout_s)
    fresh = None
    try:
        # the session the agent writes most to (its header's name is set by the writer)
        main_path = next(s.path for s in loaded(live).summaries if s.name == "soak main")
        select_session(live, main_path)
        wait_until(lambda: session_shown(live, main_path), 20)
        stall = StallMeter(config.tick_ms)
        size_before = _folder_size(root)
        rss = RssSampler()
        stacks = StackSampler()
        with ErrorCapture() as errors:
            rss.start()
            stacks.start()
            stall.start()
            started = time.monotonic()
            t0 = time.time()
            env = dict(os.environ, PYTHONPATH=str(repo))
            proc = subprocess.Popen(
                _writer_cmd(root, config, log),
                cwd=repo,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            wait_until(lambda: proc.poll() is not None, config.seconds + 120, step_ms=50)
            if proc.poll() is None:
                proc.kill()
            out, err = proc.communicate(timeout=30)
            report.writer_returncode = proc.returncode
            report.writer_stderr = err
            report.writes = json.loads(out.splitlines()[-1]) if out.strip() else {}
            # live mode catches up with the last writes (the safety poll included)
            spin(2.5)
            report.duration_s = time.monotonic() - started
            stall.stop()
            rss.stop()
            stacks.stop()
            report.alive = live.isVisible()
            report.live_state = live_state(live)
            written = log.read_bytes() if log.exists() else b""
            events = [json.loads(x) for x in written.splitlines() if x.strip()]
            report.bytes_written = sum(int(e["bytes"]) for e in events)
            report.stall = stall.summary()
            report.worst_stalls = _worst(stall.worst(), events, stacks, t0)
            report.data_growth = _folder_size(root) - size_before
            verdict = memory_verdict(rss.samples, report.data_growth)
            report.memory = verdict.to_json()
            report.rss_samples_mb = [round(v / (1 << 20), 1) for _, v in rss.samples]
            before_fresh = rss_bytes()
            fresh = open_window(root, config.open_timeout_s)
            report.fresh_open_rss = rss_bytes() - before_fresh
            report.sessions = len(loaded(fresh).sessions)
            took, view_diffs, data_diffs = compare(
                live, fresh, config.settle_s, config.session_timeout_s
            )
            report.converged_s = took
            report.view_diffs = view_diffs
            report.data_diffs = data_diffs
            report.alive = report.alive and live.isVisible()
        app.processEvents()
        report.errors = errors.failures
        report.app_log_errors = app_log.problems()
        report.warnings = [r["message"] for r in errors.records if r["level"] == "WARNING"]
    finally:
        for w in (live, fresh):
            if w is not None:
                w.close()
                w.deleteLater()
        app.processEvents()
        app_log.close()
    return report
