"""``memlens homes [PATH ...]``: what agent homes hold, as the app's first-run screen shows.

Without a path it looks at the well-known homes of this user (``~/.openclaw``, pi's
``~/.pi/agent``, ...); with paths it summarises each of them. Counts only: nothing is
parsed beyond what counting needs, nothing is written, and a home that cannot be read
is listed with its problem instead of failing the command.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.cli.output import emit_result
from core.dataset.home_scan import HomeSummary, scan_home, scan_homes

if TYPE_CHECKING:
    import argparse


def _row(summary: HomeSummary) -> dict[str, Any]:
    return {
        "label": summary.label,
        "path": str(summary.path),
        "kind": summary.kind,
        "agents": summary.agents,
        "sessions": summary.sessions,
        "segments": summary.segments,
        "facts": summary.facts,
        "size": summary.size,
        "newest": summary.newest,
        "complete": summary.complete,
        "problem": summary.problem,
    }


def cmd_homes(args: argparse.Namespace) -> int:
    """List the agent homes found (or the given ones) with their counts; 1 if none is usable."""
    if args.paths:
        found = [scan_home(path, budget_s=args.budget) for path in args.paths]
        missing = [path for path, s in zip(args.paths, found, strict=True) if s is None]
        homes = [s for s in found if s is not None]
    else:
        homes, missing = scan_homes(budget_s=args.budget), []

    def text() -> str:
        lines = [f"{h.label or 'home'}: {h.path}\n  {h.describe()}" for h in homes]
        lines += [f"{path}: does not exist" for path in missing]
        return "\n".join(lines) if lines else "no agent home found"

    emit_result(args, {"homes": [_row(h) for h in homes], "missing": missing}, text)
    return 0 if any(h.openable for h in homes) else 1
