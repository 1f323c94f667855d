"""What the soak run measures while the agent writes: GUI stalls, memory, errors.

- :class:`StallMeter`: a timer ticking every few ms on the GUI thread; the longest gap
  between two ticks, minus the interval, is the longest time the GUI thread could not
  run a timer: the longest stall a user would feel.
- :class:`RssSampler`: the process's resident memory (``VmRSS`` of ``/proc/self/status``),
  sampled each second by a plain thread, so a stalled GUI thread does not skew it.
- :class:`ErrorCapture`: every log record at WARNING or above (the app logs job failures
  with their tracebacks on ``memlens.jobs``), every exception that reached
  ``sys.excepthook`` (PySide6 sends an exception raised in a slot there) or
  ``threading.excepthook``, and every Qt warning (``qInstallMessageHandler``).
"""

from __future__ import annotations

import itertools
import logging
import statistics
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PySide6.QtCore import QTimer, QtMsgType, qInstallMessageHandler

QT_BENIGN = ("This plugin does not support propagateSizeHints",)
"""Qt messages the offscreen platform prints for every window (as in pyproject's
``qt_log_ignore``)."""


class StallMeter:
    """Ticks of a *tick_ms* timer on the GUI thread; see the module docstring."""

    def __init__(self, tick_ms: int = 5) -> None:
        self.tick_ms = tick_ms
        self.timer = QTimer()
        self.timer.setInterval(tick_ms)
        self.timer.timeout.connect(self._on_tick)
        self.stamps: list[float] = []
        self.wall: list[float] = []

    def _on_tick(self) -> None:
        self.stamps.append(time.perf_counter())
        self.wall.append(time.time())

    def start(self) -> None:
        self._on_tick()
        self.timer.start()

    def stop(self) -> None:
        self.timer.stop()
        self._on_tick()

    def stalls_ms(self) -> list[float]:
        """Each gap between ticks minus the interval (never negative)."""
        s = self.stamps
        return [max(0.0, (b - a) * 1000 - self.tick_ms) for a, b in itertools.pairwise(s)]

    def worst(self, n: int = 5) -> list[tuple[float, float, float]]:
        """The *n* longest stalls: (stall ms, wall time it began, wall time it ended)."""
        gaps = self.stalls_ms()
        order = sorted(range(len(gaps)), key=gaps.__getitem__, reverse=True)[:n]
        return [(gaps[i], self.wall[i], self.wall[i + 1]) for i in order]

    def summary(self) -> dict[str, Any]:
        gaps = sorted(self.stalls_ms())
        if not gaps:
            return {"ticks": 0, "max_stall_ms": 0.0}
        return {
            "tick_ms": self.tick_ms,
            "ticks": len(gaps),
            "max_stall_ms": round(gaps[-1], 1),
            "p99_stall_ms": round(gaps[int(len(gaps) * 0.99)], 1),
            "median_stall_ms": round(statistics.median(gaps), 2),
            "stalls_over_100ms": sum(1 for g in gaps if g > 100),
            "stalls_over_50ms": sum(1 for g in gaps if g > 50),
        }


class StackSampler(threading.Thread):
    """Where the GUI thread is, every *interval* seconds: the frames of memlens's own code.

    Each sample is ``(wall time, frames)``, frames innermost last, each
    ``package/module.py:function`` for files under the repository's ``app/``, ``widgets/``
    or ``core/`` (and pyqtgraph's, which paints the timeline).
    :meth:`during` names what the GUI thread was doing in a stall: the stacks sampled
    inside it, most frequent first. Sampling costs a stack walk every 10 ms.
    """

    ROOT = str(Path(__file__).resolve().parents[2]) + "/"
    """The repository: frames of its ``app``, ``widgets`` and ``core`` are ours."""

    def __init__(self, interval: float = 0.01) -> None:
        super().__init__(name="soak-stacks", daemon=True)
        self.interval = interval
        self.target = threading.get_ident()  # created on the GUI thread
        self.samples: list[tuple[float, tuple[str, ...]]] = []
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.wait(self.interval):
            frame = sys._current_frames().get(self.target)
            frames: list[str] = []
            while frame is not None and len(frames) < 12:
                short = self._short(frame.f_code.co_filename)
                if short:
                    frames.append(f"{short}:{frame.f_code.co_name}")
                frame = frame.f_back
            if frames:
                self.samples.append((time.time(), tuple(reversed(frames))))

    def stop(self) -> None:
        self._stop_event.set()
        self.join(timeout=5)

    def _short(self, name: str) -> str:
        """``app/live.py`` for our files, ``pyqtgraph/...`` for pyqtgraph's, else ""."""
        if name.startswith(self.ROOT):
            rel = name[len(self.ROOT) :]
            return rel if rel.startswith(("app/", "widgets/", "core/")) else ""
        at = name.find("/pyqtgraph/")
        return name[at + 1 :] if at >= 0 else ""

    def during(self, began: float, ended: float, top: int = 2) -> list[str]:
        """The *top* most sampled stacks between *began* and *ended* (outermost first)."""
        stacks = [f for t, f in self.samples if began <= t <= ended]
        counts: dict[tuple[str, ...], int] = {}
        for f in stacks:
            counts[f] = counts.get(f, 0) + 1
        best = sorted(counts.items(), key=lambda kv: -kv[1])[:top]
        return [f"{n}x " + " > ".join(f[-6:]) for f, n in best]


def rss_bytes() -> int:
    """Resident memory of this process (0 where /proc is not there)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class RssSampler(threading.Thread):
    """``(seconds since start, RSS bytes)`` every *interval* seconds until :meth:`stop`."""

    def __init__(self, interval: float = 1.0) -> None:
        super().__init__(name="soak-rss", daemon=True)
        self.interval = interval
        self.samples: list[tuple[float, int]] = []
        self._stop_event = threading.Event()
        self._t0 = time.monotonic()

    def run(self) -> None:
        while True:
            self.samples.append((time.monotonic() - self._t0, rss_bytes()))
            if self._stop_event.wait(self.interval):
                break

    def stop(self) -> None:
        self._stop_event.set()
        self.join(timeout=5)
        self.samples.append((time.monotonic() - self._t0, rss_bytes()))


@dataclass(frozen=True, slots=True)
class MemoryVerdict:
    """Whether memory stayed flat (see :func:`memory_verdict`)."""

    start: int
    end: int
    peak: int
    first_third: int
    last_third: int
    growth: int
    allowed: int
    flat: bool

    def to_json(self) -> dict[str, Any]:
        mb = 1 << 20
        return {
            "rss_start_mb": round(self.start / mb, 1),
            "rss_end_mb": round(self.end / mb, 1),
            "rss_peak_mb": round(self.peak / mb, 1),
            "rss_first_third_median_mb": round(self.first_third / mb, 1),
            "rss_last_third_median_mb": round(self.last_third / mb, 1),
            "rss_growth_mb": round(self.growth / mb, 1),
            "rss_allowed_growth_mb": round(self.allowed / mb, 1),
            "rss_flat": self.flat,
        }


BASE_ALLOWANCE = 48 << 20
"""Growth allowed whatever was written: allocator arenas, Qt's caches, the recall index's
and the timeline's buffers reaching their working size."""
PER_BYTE_ALLOWANCE = 8
"""Growth allowed per byte the data folder grew: what the agent added is held in memory,
parsed and indexed (measured: a loaded data set costs 2.3 times its bytes, 6.2 times with
the recall index, on a 0.9 MB soak home)."""


def memory_verdict(
    samples: list[tuple[float, int]], data_bytes: int, *, warmup: float = 0.15
) -> MemoryVerdict:
    """Flat: the last third's median exceeds the first third's by at most the allowance.

    The first *warmup* share of the samples is dropped (the first batches grow caches
    once); the rest is cut in thirds and the medians compared, so a single spike (a
    timeline built, a GC pause) does not decide. The allowance is
    :data:`BASE_ALLOWANCE` plus :data:`PER_BYTE_ALLOWANCE` times *data_bytes*, how much
    the data folder grew: what the agent added is legitimately in memory, a leak grows
    beyond it.
    """
    values = [v for _, v in samples if v > 0] or [0]
    rest = values[int(len(values) * warmup) :] or values
    third = max(1, len(rest) // 3)
    first = int(statistics.median(rest[:third]))
    last = int(statistics.median(rest[-third:]))
    allowed = BASE_ALLOWANCE + PER_BYTE_ALLOWANCE * max(0, data_bytes)
    growth = last - first
    return MemoryVerdict(
        values[0], values[-1], max(values), first, last, growth, allowed, growth <= allowed
    )


@dataclass(slots=True)
class ErrorCapture:
    """Log records, uncaught exceptions and Qt messages while installed (a context manager)."""

    records: list[dict[str, Any]] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)
    qt_messages: list[str] = field(default_factory=list)
    _handler: logging.Handler | None = None
    _saved: tuple[Any, ...] = ()
    _level: int = logging.WARNING

    def __enter__(self) -> ErrorCapture:
        capture = self

        seen: set[int] = set()

        class _Handler(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                if id(record) in seen:  # on "memlens" and again on the root
                    return
                seen.add(id(record))
                text = record.getMessage()
                if record.exc_info:
                    text += "\n" + "".join(traceback.format_exception(*record.exc_info))
                elif record.exc_text:  # formatted (and masked) by the app log's filter
                    text += "\n" + record.exc_text
                capture.records.append(
                    {"logger": record.name, "level": record.levelname, "message": text}
                )

        root = logging.getLogger()
        self._handler = _Handler(level=logging.WARNING)
        root.addHandler(self._handler)
        # also where the records start, should the app stop them propagating to the root
        logging.getLogger("memlens").addHandler(self._handler)
        self._level = root.level
        if root.level > logging.WARNING or root.level == logging.NOTSET:
            root.setLevel(logging.WARNING)

        def on_exception(kind: Any, value: Any, tb: Any) -> None:
            self.exceptions.append("".join(traceback.format_exception(kind, value, tb)))

        def on_thread_exception(args: Any) -> None:
            self.exceptions.append(
                f"in thread {getattr(args.thread, 'name', '?')}:\n"
                + "".join(
                    traceback.format_exception(args.exc_type, args.exc_value, args.exc_traceback)
                )
            )

        def on_qt_message(mode: QtMsgType, context: Any, message: str) -> None:
            if mode != QtMsgType.QtDebugMsg and mode != QtMsgType.QtInfoMsg:
                if not any(b in message for b in QT_BENIGN):
                    self.qt_messages.append(f"{mode.name}: {message}")
            if previous_qt is not None:
                previous_qt(mode, context, message)

        saved_hook, saved_thread_hook = sys.excepthook, threading.excepthook
        sys.excepthook = on_exception
        threading.excepthook = on_thread_exception
        previous_qt = qInstallMessageHandler(on_qt_message)
        self._saved = (saved_hook, saved_thread_hook, previous_qt)
        return self

    def __exit__(self, *exc: object) -> None:
        saved_hook, saved_thread_hook, previous_qt = self._saved
        sys.excepthook = saved_hook
        threading.excepthook = saved_thread_hook
        qInstallMessageHandler(previous_qt)
        root = logging.getLogger()
        if self._handler is not None:
            root.removeHandler(self._handler)
            logging.getLogger("memlens").removeHandler(self._handler)
        root.setLevel(self._level)

    @property
    def failures(self) -> list[str]:
        """What fails a soak run: an ERROR record, a traceback anywhere, a Qt warning."""
        out = [
            f"{r['logger']} {r['level']}: {r['message']}"
            for r in self.records
            if r["level"] in ("ERROR", "CRITICAL") or "Traceback" in r["message"]
        ]
        return out + self.exceptions + self.qt_messages
