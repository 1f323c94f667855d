"""``memlens whatif``: where the agent would have compacted a session under other settings.

Read-only: it opens the session (and its ``openclaw.json``), replays it with
:func:`core.compaction.whatif.replay_whatif` and prints the real and the simulated
compactions side by side, the memory flushes and the overflow recoveries. With
``--audit``, each compaction's loss (:func:`core.compaction.whatif_audit.audit_whatif`):
what its summary would have dropped, and what no later message mentions again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.cli.compaction import CompactionCliError, open_session
from core.compaction.whatif import replay_whatif
from core.compaction.whatif_report import whatif_json, whatif_settings
from core.io.text import cut

if TYPE_CHECKING:
    import argparse

    from core.compaction.whatif import WhatIfCompaction, WhatIfResult, WhatIfSettings
    from core.compaction.whatif_audit import CompactionLoss, WhatIfAudit


def cmd_whatif(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """``memlens whatif [DATA] SESSION --window N ...``: the replay, JSON or text."""
    extra = getattr(args, "session_id", None)
    if extra:
        if args.data:
            raise CompactionCliError("give DATA SESSION or SESSION --data DATA, not both")
        args.data, args.session = args.session, extra
    session, _store, config = open_session(args)
    try:
        settings, own = whatif_settings(
            session,
            config,
            window=args.window,
            model=args.model,
            reserve=args.reserve,
            keep_recent=args.keep_recent,
            max_history_share=args.max_history_share,
            summary_size=args.summary_tokens,
        )
    except ValueError as exc:
        raise CompactionCliError(str(exc)) from None
    result = replay_whatif(session, settings, at=args.at, own=own.compaction)
    audit = None
    if getattr(args, "audit", False):
        from core.compaction.whatif_audit import audit_whatif

        audit = audit_whatif(result, session)
    payload = {"path": session.path, **whatif_json(result, own, audit)}
    return payload, render_text(session.path, result, own, audit)


def _settings_line(name: str, s: WhatIfSettings) -> str:
    c = s.compaction
    flush = "memory flush on" if s.memory_flush is not None else "no memory flush"
    return (
        f"{name}: window {c.window:,} ({s.label}), reserve {c.reserve_tokens:,}, keep recent "
        f"{c.keep_recent_tokens:,}, history share {c.max_history_share:g}; compacts above "
        f"{s.trigger:,}; {flush}"
    )


def _cell(c: WhatIfCompaction | None) -> str:
    if c is None:
        return ""
    return f"#{c.index} {c.tokens_before:,} -> {c.tokens_after:,} {c.reason}"


def _loss_cell(loss: CompactionLoss | None) -> str:
    """``loss 57% (68 lost)``: missing or lost over every item; lost for good."""
    if loss is None:
        return ""
    t = loss.total
    return f"loss {t.loss:.0%} ({t.lost} lost)"


def render_text(
    path: str, result: WhatIfResult, own: WhatIfSettings, audit: WhatIfAudit | None = None
) -> str:
    """The replay as text: settings, then real and simulated compactions in path order.

    With *audit*, each compaction's loss follows its figures, and the items the
    compactions lost for good are listed (a few each).
    """
    s = result.settings
    lines = [
        f"{path}: what-if replay of {len(result.entry_ids):,} messages on the leaf path",
        _settings_line("what-if", s),
        _settings_line("own    ", own),
        f"a simulated summary counts {s.summary_tokens:,} tokens"
        + (
            " (given)"
            if s.summary_size is not None
            else " (its output budget, 0.8 x reserveTokens: memlens's plan estimate of the "
            "tokens after; real summaries are often smaller)"
        ),
        "",
        f"{'real (transcript)':<40}  what-if",
    ]
    events = sorted(
        [(c.position, 0, n, c) for n, c in enumerate(result.real)]
        + [(c.position, 1, n, c) for n, c in enumerate(result.simulated)],
        key=lambda t: (t[0], t[1]),
    )
    width = 40 if audit is None else 62
    losses: list[tuple[WhatIfCompaction, CompactionLoss]] = []
    for _pos, side, n, c in events:
        loss = audit.of(c.kind, n) if audit is not None else None
        cell = f"{_cell(c)}  {_loss_cell(loss)}".rstrip()
        lines.append(f"{cell:<{width}}  " if side == 0 else f"{'':<{width}}  {cell}")
        if loss is not None:
            losses.append((c, loss))
    if not events:
        lines.append("(no compaction in either)")
    lines.append(
        f"{len(result.real)} real compaction(s), {len(result.simulated)} simulated "
        "(#N: the entry after which it happens; tokens before -> after)"
    )
    for f in result.flushes:
        lines.append(f"memory flush before #{f.index}: {f.reason}")
    for o in result.overflows:
        end = "" if o.recovered else ": the run fails with the overflow error"
        lines.append(
            f"overflow at #{o.index}: {o.tokens:,} tokens > {s.compaction.window:,}; "
            f"{' -> '.join(x.kind for x in o.steps)}{end}"
        )
    if audit is not None:
        lines.append(
            "loss: items of the summarised messages the summary drops (real: the agent's "
            "summary; what-if: memlens's offline summary of the cut); lost: no later message "
            "mentions them"
        )
    for c, loss in losses:
        lost = loss.lost_items()
        if lost:
            name = "real" if c.kind == "real" else "what-if"
            lines.append(f"lost for good by the {name} compaction after #{c.index}:")
            lines.extend(f"  {i.category}: {cut(i.text, 100)}" for i in lost)
    if result.failed:
        lines.append(
            f"{len(result.failed)} time(s) the trigger fired with nothing to summarise "
            f"(first after {result.failed[0][0]}: {result.failed[0][1]})"
        )
    return "\n".join(lines)
