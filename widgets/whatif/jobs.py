"""The what-if panel's jobs (the replay, then its loss audit) and its summary line.

The job functions run in :func:`widgets.common.jobs.default_runner`'s pool on a
snapshot of the session taken on the GUI thread.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.compaction.whatif import replay_whatif
from core.compaction.whatif_audit import audit_whatif
from widgets.timeline.style import short_tokens

if TYPE_CHECKING:
    from core.compaction.whatif import WhatIfResult, WhatIfSettings
    from core.compaction.whatif_audit import WhatIfAudit
    from core.io.jobs import CancelCheck, Progress
    from core.transcript.model import Session


def whatif_job(session: Session, settings: WhatIfSettings, own: WhatIfSettings) -> Any:
    """The replay as a job function (*session* a snapshot taken on the GUI thread)."""

    def run(*, progress: Progress, cancelled: CancelCheck) -> WhatIfResult:
        return replay_whatif(
            session, settings, own=own.compaction, progress=progress, cancelled=cancelled
        )

    return run


def audit_job(result: WhatIfResult, session: Session, reuse: WhatIfAudit | None) -> Any:
    """The loss audit of *result*'s compactions as a job function (*session*: its snapshot)."""

    def run(*, progress: Progress, cancelled: CancelCheck) -> WhatIfAudit:
        return audit_whatif(result, session, reuse=reuse, progress=progress, cancelled=cancelled)

    return run


def whatif_summary(result: WhatIfResult, audit: WhatIfAudit | None = None) -> str:
    """``4 compactions as it ran · 9 with a 128k window · 1 overflow recovery``.

    With *audit*: ``· lost for good: 92 items as it ran, 213 with these settings``.
    """
    s = result.settings
    window = short_tokens(s.compaction.window)
    parts = [
        f"{len(result.real)} compaction{'s' if len(result.real) != 1 else ''} as it ran",
        f"{len(result.simulated)} with a {window} window",
    ]
    if result.flushes:
        parts.append(f"{len(result.flushes)} memory flush{'es' if len(result.flushes) > 1 else ''}")
    recovered = sum(1 for o in result.overflows if o.recovered)
    if recovered:
        parts.append(f"{recovered} overflow recover{'ies' if recovered > 1 else 'y'}")
    if len(result.overflows) > recovered:
        parts.append(f"{len(result.overflows) - recovered} overflow failing the run")
    if result.failed:
        parts.append(f"{len(result.failed)} trigger(s) with nothing to summarise")
    if audit is not None:
        real = sum(x.total.lost for x in audit.real)
        simulated = sum(x.total.lost for x in audit.simulated)
        parts.append(f"lost for good: {real:,} items as it ran, {simulated:,} with these settings")
    return " · ".join(parts)


def settings_text(s: WhatIfSettings) -> str:
    """The settings a replay runs with, in one line (the panel's detail line)."""
    c = s.compaction
    flush = "memory flush on" if s.memory_flush is not None else "no memory flush"
    return (
        f"Window {c.window:,} ({s.label}) · reserve {c.reserve_tokens:,} · keep recent "
        f"{c.keep_recent_tokens:,} · history share {c.max_history_share:g} · compacts "
        f"above {s.trigger:,} · a simulated summary counts {s.summary_tokens:,} · {flush}"
    )
