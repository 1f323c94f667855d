"""``memlens audit SESSION [--at COMPACTION] [--dry-run-summary] [--probe --llm SPEC]``.

The audit itself is :mod:`core.compaction.audit`; this module opens the session
as ``plan`` and ``compact`` do (a transcript path, or ``--data DIR`` and a session
id) and prints the scores per category, then the items lost for good and the
missing ones. ``--json`` prints every item (``text``, ``category``, ``status``,
``source``). With ``--probe`` and a model (``--llm``, its key named by
``--key-env`` as for ``compact``), questions made from the items are answered from
the summary alone and graded (:mod:`core.compaction.probe`): the JSON gains
``probes``. Without a model the audit runs as before and ``probes`` says why it did
not run. Nothing is written, ever; a failed model call exits 1 with its reason.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.cli.compaction import _settings, open_session
from core.cli.output import CliError
from core.compaction.audit import AuditError, audit_compaction, audit_dry_run
from core.io.text import one_line

if TYPE_CHECKING:
    import argparse

    from core.compaction.audit import LossAudit
    from core.compaction.probe import ProbeRun
    from core.transcript.model import Session

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
    payload, text = audit.to_json(), _text(audit)
    probes = _probe(args, session, audit)
    payload["probes"] = probes if isinstance(probes, dict) else probes.to_json()
    if isinstance(probes, dict):
        text += f"\n\nprobes: not run ({probes['reason']})"
    else:
        text += "\n\n" + _probe_text(probes)
    return payload, text


def _probe(
    args: argparse.Namespace, session: Session, audit: LossAudit
) -> ProbeRun | dict[str, Any]:
    """The probe run ``--probe`` asks for, or ``{"run": false, "reason"}``."""
    spec = getattr(args, "llm", None) or "offline"
    if not getattr(args, "probe", False):
        return {"run": False, "reason": "not asked for (--probe --llm SPEC)"}
    if spec.strip() == "offline":
        return {"run": False, "reason": "no model: --llm offline (probes need one)"}
    from core.compaction.probe import ProbeError, run_probes
    from core.llm import Deadline, parse_llm_spec

    try:
        client = parse_llm_spec(
            spec, api_key_env=args.key_env, deadline=Deadline(args.timeout or 120.0)
        )
    except ValueError as exc:
        raise CliError(str(exc)) from None
    assert client is not None  # not offline
    messages = [(e.id, e.message) for e in session.entries if e.message is not None]
    try:
        return run_probes(audit, messages, client, limit=args.probes, extra=args.probe_extra)
    except ProbeError as exc:
        raise CliError(f"probes: {exc} (nothing was written)") from None
    finally:
        client.close()


def _probe_text(run: ProbeRun) -> str:
    total = run.total()
    lines = [
        f"probes by {run.model}: {total.exact + total.normalised} of {total.questions} "
        f"answered right from the summary alone ({100 * total.score:.0f}%)",
        *run.notes,
        f"{'category':<13} {'asked':>5} {'exact':>5} {'norm.':>5} {'unk.':>5} {'wrong':>5}  score",
    ]
    for name, s in run.scores().items():
        lines.append(
            f"{name:<13} {s.questions:>5} {s.exact:>5} {s.normalised:>5} {s.unknown:>5} "
            f"{s.wrong:>5}  {100 * s.score:.0f}%"
        )
    for r in run.results:
        if r.grade in ("unknown", "wrong"):
            lines += [f"  {r.grade:<8} {r.probe.question}", f"{'':11}expected: {r.probe.expected}"]
        if r.grade == "wrong":
            lines.append(f"{'':11}answered: {one_line(r.answer, 160)}")
    return "\n".join(lines)


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
