"""``memlens export``: a session's timeline, or its compaction plan, as one HTML file.

The same self-contained page as the app's File > Export (:mod:`core.export.report`):
CSS and the chart inline, nothing fetched, every text redacted. The file is written
atomically and never replaces an existing one unless ``--force`` says so.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from core.cli.compaction import open_session
from core.cli.output import CliError, emit_result
from core.compaction.plan import plan_compaction
from core.compaction.settings import compaction_settings, session_model
from core.context.budget import budget_for
from core.export.report import compaction_report, timeline_report
from core.io.fsutil import atomic_write
from core.timeline.arrays import build_timeline

if TYPE_CHECKING:
    import argparse


def cmd_export(args: argparse.Namespace) -> int:
    """Write the HTML page of ``args.session`` to ``args.output``; exit status 0."""
    out = Path(args.output)
    if out.is_dir():
        raise CliError(f"{out}: is a folder; give the HTML file to write")
    if not out.parent.is_dir():
        raise CliError(f"{out}: no such folder {out.parent}")
    if out.exists() and not args.force:
        raise CliError(f"{out} exists; pass --force to replace it")
    session, _store, config = open_session(args)
    budget = budget_for(session, config=config, model_id=session_model(session), window=args.window)
    timeline = build_timeline(session, budget)
    now = datetime.now(UTC)
    if args.compaction:
        settings = compaction_settings(session, config, window=budget.window)
        plan = plan_compaction(session, at=args.at, **settings.kwargs())
        page = compaction_report(plan, session, generated=now, timeline=timeline)
        what = "compaction report"
    else:
        page = timeline_report(session, timeline, generated=now)
        what = "timeline"
    data = page.encode("utf-8")
    atomic_write(out, data, backup=False)
    payload = {"session": session.id, "path": session.path, "output": str(out), "bytes": len(data)}
    emit_result(args, payload, lambda: f"wrote the {what} of {session.id} to {out}")
    return 0
