"""What-if replay: model presets, the settings a replay runs with, and its JSON.

:func:`whatif_settings` builds :class:`~core.compaction.whatif.WhatIfSettings` from
the session's own (``openclaw.json`` through :func:`compaction_settings`) and what
the user changes; :func:`whatif_json` is the shape ``memlens whatif --json`` prints
(``compactions``: the simulated ones, each with ``entry``, ``tokens_before``,
``tokens_after``).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from core.compaction.settings import compaction_settings
from core.compaction.whatif import WhatIfCompaction, WhatIfResult, WhatIfSettings
from core.context.budget import MAX_COMPACTION_RESERVE_RATIO
from core.openclaw.config import MODEL_REGISTRY, context_window_for

if TYPE_CHECKING:
    from core.compaction.settings import CompactionSettings
    from core.compaction.whatif import Kind
    from core.compaction.whatif_audit import CompactionLoss, WhatIfAudit
    from core.openclaw.config import OpenClawConfig
    from core.transcript.model import Session

SIZE_PRESETS = {"32k": 32_000, "128k": 128_000, "200k": 200_000, "400k": 400_000, "1m": 1_000_000}
"""Window sizes by name, beside the models of :data:`core.openclaw.config.MODEL_REGISTRY`."""


def preset_names() -> list[str]:
    """Every name ``--model`` takes: window sizes, then the registry's models."""
    return [*SIZE_PRESETS, *MODEL_REGISTRY]


def preset_window(name: str) -> int:
    """The context window of preset *name*: a size (``128k``) or a model id.

    A model id matches the registry by longest prefix, as the agent's registry is
    read (``claude-sonnet-4-5-20250929`` is ``claude-sonnet-4``'s 200,000), with or
    without its provider (``openai/gpt-4o``).

    Raises
    ------
    ValueError
        Naming the known presets when *name* is none of them.
    """
    key = name.strip().lower()
    if key in SIZE_PRESETS:
        return SIZE_PRESETS[key]
    window, source = context_window_for(None, key)
    if source != "registry":
        raise ValueError(f"unknown model preset {name!r}; known: {', '.join(preset_names())}")
    return window


def whatif_settings(
    session: Session,
    config: OpenClawConfig | None = None,
    *,
    window: int | None = None,
    model: str | None = None,
    reserve: int | None = None,
    keep_recent: int | None = None,
    max_history_share: float | None = None,
    summary_size: int | None = None,
) -> tuple[WhatIfSettings, WhatIfSettings]:
    """``(what-if, own)``: the settings to replay with and the session's own.

    The own settings are the agent's for this session (:func:`compaction_settings`,
    ``openclaw.json`` when there is one, else pi's defaults); each given value
    replaces one. For an OpenClaw session a *reserve* is raised to
    ``reserveTokensFloor`` and every reserve capped at a quarter of the window, as
    OpenClaw does. The memory flush is the config's (pi: none).

    Raises
    ------
    ValueError
        A bad value (naming it) or an unknown *model* preset.
    """
    own = compaction_settings(session, config)
    comp = config.compaction if config is not None else None
    flush = comp.memory_flush if comp is not None and comp.memory_flush.enabled else None
    label = f"the session's own ({own.window_source})"
    new = own
    if model is not None:
        new, label = replace(new, window=preset_window(model)), f"{model} preset"
    if window is not None:
        new, label = replace(new, window=window), "--window"
    if window is not None or model is not None:
        new = replace(new, window_source="config")
    if reserve is not None:
        if reserve < 0:
            raise ValueError(f"--reserve {reserve} must be 0 or more")
        floor = comp.reserve_tokens_floor if comp is not None else 0
        new = replace(new, reserve_tokens=max(reserve, floor))
    if keep_recent is not None:
        if keep_recent < 1:
            raise ValueError(f"--keep-recent {keep_recent} must be at least 1")
        new = replace(new, keep_recent_tokens=keep_recent)
    if max_history_share is not None:
        if not 0 < max_history_share <= 1:
            raise ValueError(f"--max-history-share {max_history_share} must be in (0, 1]")
        new = replace(new, max_history_share=max_history_share)
    if summary_size is not None and summary_size < 0:
        raise ValueError(f"--summary-tokens {summary_size} must be 0 or more")
    if config is not None or session.db is not None or session.tree is not None:
        # OpenClaw: resolveEffectiveCompactionReserveTokens caps the reserve at a quarter
        # of the window (dist/agent-compaction-constants-*.mjs, MAX_COMPACTION_RESERVE_RATIO)
        own, new = _capped(own), _capped(new)
    if new.reserve_tokens >= new.window:
        raise ValueError(
            f"a reserve of {new.reserve_tokens:,} tokens leaves nothing of a "
            f"{new.window:,}-token window"
        )
    return (
        WhatIfSettings(new, flush, label, summary_size),
        WhatIfSettings(own, flush, label="the session's own"),
    )


def _capped(s: CompactionSettings) -> CompactionSettings:
    cap = math.floor(max(1, s.window) * MAX_COMPACTION_RESERVE_RATIO)
    return replace(s, reserve_tokens=min(s.reserve_tokens, cap))


def _settings_json(s: WhatIfSettings) -> dict[str, Any]:
    c = s.compaction
    return {
        "window": c.window,
        "reserve_tokens": c.reserve_tokens,
        "keep_recent_tokens": c.keep_recent_tokens,
        "max_history_share": c.max_history_share,
        "trigger": s.trigger,
        "summary_tokens": s.summary_tokens,
        "summary_estimate": "given" if s.summary_size is not None else "0.8 x reserveTokens",
        "memory_flush": s.memory_flush is not None,
        "source": s.label,
    }


def compaction_json(c: WhatIfCompaction, loss: CompactionLoss | None = None) -> dict[str, Any]:
    """One compaction: ``entry`` (after which it happens), tokens, reason, cut; its *loss*."""
    return {
        "entry": c.entry_id,
        "index": c.index,
        "position": c.position,
        "tokens_before": c.tokens_before,
        "tokens_after": c.tokens_after,
        "reason": c.reason,
        "first_kept_entry": c.first_kept_entry_id,
        "summarized": c.summarized,
        "kept": c.kept,
        "summary_tokens": c.summary_tokens,
        "detail": c.detail,
        **({"compaction_entry": c.compaction_id} if c.compaction_id else {}),
        **({"loss": loss.to_json()} if loss is not None else {}),
    }


def whatif_json(
    result: WhatIfResult, own: WhatIfSettings | None = None, audit: WhatIfAudit | None = None
) -> dict[str, Any]:
    """The replay as ``memlens whatif --json`` prints it; with *audit*, each compaction's loss."""

    def loss(kind: Kind, n: int) -> CompactionLoss | None:
        return audit.of(kind, n) if audit is not None else None

    return {
        "session": result.session_id,
        "settings": _settings_json(result.settings),
        **({"own_settings": _settings_json(own)} if own is not None else {}),
        "flush_threshold": result.flush_threshold,
        "compactions": [
            compaction_json(c, loss("simulated", n)) for n, c in enumerate(result.simulated)
        ],
        "real_compactions": [
            compaction_json(c, loss("real", n)) for n, c in enumerate(result.real)
        ],
        "flushes": [
            {"entry": f.entry_id, "index": f.index, "position": f.position,
             "tokens": f.tokens, "threshold": f.threshold, "reason": f.reason}
            for f in result.flushes
        ],
        "overflows": [
            {"entry": o.entry_id, "index": o.index, "position": o.position, "tokens": o.tokens,
             "recovered": o.recovered,
             "steps": [{"kind": x.kind, "tokens_before": x.tokens_before,
                        "tokens_after": x.tokens_after, "detail": x.detail} for x in o.steps]}
            for o in result.overflows
        ],
        "failed": [{"entry": e, "reason": why} for e, why in result.failed],
        "curve": {
            "entry": list(result.entry_ids),
            "real": list(result.real_context),
            "simulated": list(result.simulated_context),
        },
    }  # fmt: skip
