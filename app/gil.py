"""How background jobs share the interpreter with the GUI thread while the window is up."""

from __future__ import annotations

import gc
import sys

from core.io.jsonio import freeze_after_pauses

GIL_SWITCH_INTERVAL_S = 0.0005


def share_gil_with_gui() -> None:
    """Keep jobs from holding the GIL for long while the window is up.

    - Threads take the GIL from each other every 0.5 ms (Python's default: 5 ms).
      Each call from Qt into Python on the GUI thread (a slot, a model's ``data``,
      a paint) takes the GIL back from a busy job first, and at 5 ms a time one
      repaint of the window while a job loaded took ~300 ms instead of ~40
      (bench_responsiveness). The jobs lose a few percent.
    - What a loader builds is frozen out of the cyclic collector
      (:func:`core.io.jsonio.freeze_after_pauses`): collecting it took 65-75 ms in a
      job, holding the GIL. :func:`release_frozen` undoes it for data closed.
    """
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)
    freeze_after_pauses(True)


def release_frozen(*, window_closing: bool = False) -> None:
    """Let the collector see what loads froze (the data they built is being replaced)."""
    gc.unfreeze()
    if window_closing:
        freeze_after_pauses(False)
