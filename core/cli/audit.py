"""``memlens audit SESSION [--at COMPACTION] [--dry-run-summary]``: what a compaction lost.

The audit itself is :mod:`core.compaction.audit`; this module opens the session
as ``plan`` and ``compact`` do (a transcript path, or ``--data DIR`` and a session
id) and prints the scores per category, then the items lost for good and the
missing ones. ``--json`` prints every item (``text``, ``category``, ``status``,
``source``). Nothing is written; no model is called.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.cli.compaction import _settings, open_session
from core.cli.output import CliError
from core.compaction.audit import AuditError, audit_compaction, audit_dry_run

if TYPE_CHECKING:
    import argparse

    from core.compaction.audit import LossAudit

SHOWN = 25
"""Missing items listed in the text output (every one is in ``--json``)."""


def cmd_audit(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """``memlens audit SESSION``: the loss audit of a compaction, or of memlens's dry run.

    ``--at`` picks the compaction: its entry id or ``#N``, a later entry (the last
    compaction on its path) or a number N (the file's N-th compaction); by default
    the last one on the current branch. With ``--dry-run-summary`` the summary
    audited is memlens's offline one: of the cut that compaction made when
    ``--at`` names one, else of the next cut memlens would plan at ``--at`` (the
    leaf by default), as ``memlens compact`` makes it.
    """
    session, _store, config = open_session(args)
    try:
        if args.dry_run_summary:
            at = args.at
            same_cut = at is not None and _names_compaction(session, at)
            settings = _settings(args, config, session)
            audit = audit_dry_run(session, at=at, same_cut=same_cut, **settings)
        else:
            audit = audit_compaction(session, args.at)
    except AuditError as exc:
        raise CliError(str(exc)) from None
    return audit.to_json(), _text(audit)


def _names_compaction(session: Any, at: str) -> bool:
    """*at* is a compaction's id or ``#N``, or a plain compaction number."""
    if at not in session.by_id and at.isdigit():
        return True
    try:
        return bool(session.entry(at).type == "compaction")
    except KeyError as exc:
        raise CliError(str(exc.args[0])) from None


def _text(audit: LossAudit) -> str:
    if audit.summariser == "agent":
        what = f"compaction {audit.entry_id} (#{audit.index}, the file's {_nth(audit.number)})"
    elif audit.entry_id is not None:
        what = f"memlens's offline summary of the cut of compaction {audit.entry_id}"
    else:
        what = "memlens's offline summary of the next cut (dry run)"
    lines = [
        f"{audit.path}: {what}",
        f"summarised {audit.summarised_messages} message(s) (~{audit.summarised_tokens:,} "
        f"tokens) into {len(audit.summary):,} chars; kept {audit.kept_messages} from "
        f"{audit.first_kept_entry_id}",
        *audit.notes,
        "",
        f"{'category':<10} {'items':>5} {'kept':>5} {'norm.':>5} {'miss.':>5} {'lost':>5}  loss",
    ]
    for name, s in audit.scores().items():
        lines.append(
            f"{name:<10} {s.items:>5} {s.kept:>5} {s.normalised:>5} {s.missing:>5} "
            f"{s.lost:>5}  {100 * s.loss:.0f}%"
        )
    lost = audit.lost()
    if lost:
        lines += ["", f"lost for good ({len(lost)}: not in the summary, never mentioned again):"]
        lines += [f"  {i.category:<9} {i.text}  [{', '.join(i.source[:3])}]" for i in lost]
    missing = [i for i in audit.items if i.status == "missing"]
    if missing:
        lines += ["", f"missing from the summary ({len(missing)}; the kept messages mention them):"]
        lines += [
            f"  {i.category:<9} {i.text}  [{', '.join(i.source[:3])}]" for i in missing[:SHOWN]
        ]
        if len(missing) > SHOWN:
            lines.append(f"  ...and {len(missing) - SHOWN} more (--json lists every item)")
    if not audit.items:
        lines.append("nothing to audit: the summarised messages hold no identifier, file or ask")
    return "\n".join(lines)


def _nth(n: int | None) -> str:
    if n is None:
        return "?"
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
