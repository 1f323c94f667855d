"""The compaction settings of a session: window, reserve, recent tokens and history share.

As the agent resolves them: the context window of the session's model (config,
model registry, default, cap) and ``agents.defaults.compaction`` of
``openclaw.json`` (pi's defaults without one).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.compaction.sections import SummaryInstructions
from core.openclaw.config import context_window_for

if TYPE_CHECKING:
    from core.openclaw.config import OpenClawConfig, WindowSource
    from core.transcript.model import Session

DEFAULT_RESERVE_TOKENS = 20_000
DEFAULT_KEEP_RECENT_TOKENS = 20_000
DEFAULT_MAX_HISTORY_SHARE = 0.5


@dataclass(frozen=True, slots=True)
class CompactionSettings:
    """The figures :func:`~core.compaction.plan.plan_compaction` takes."""

    window: int = 200_000
    reserve_tokens: int = DEFAULT_RESERVE_TOKENS
    keep_recent_tokens: int = DEFAULT_KEEP_RECENT_TOKENS
    max_history_share: float = DEFAULT_MAX_HISTORY_SHARE
    window_source: WindowSource = "default"
    model: str | None = None
    """The session's model (its last assistant message's), if any."""
    instructions: SummaryInstructions = field(default_factory=SummaryInstructions)
    """Custom instructions and identifier policy of the summary prompts (not in
    :meth:`kwargs`: they go to ``summarize_plan`` or the ``LLMSummarizer``)."""

    def kwargs(self) -> dict[str, Any]:
        """Keyword arguments of ``plan_compaction`` and ``compact``."""
        return {
            "window": self.window,
            "reserve_tokens": self.reserve_tokens,
            "keep_recent_tokens": self.keep_recent_tokens,
            "max_history_share": self.max_history_share,
        }


def session_model(session: Session) -> str | None:
    """The model of the session's last assistant message, if any."""
    for e in reversed(session.entries):
        if e.message is not None and e.message.role == "assistant" and e.message.model:
            return e.message.model
    return None


def summary_instructions(config: OpenClawConfig | None) -> SummaryInstructions:
    """``customInstructions``, ``identifierPolicy`` and ``identifierInstructions`` of *config*."""
    comp = config.compaction if config else None
    if comp is None:
        return SummaryInstructions()
    return SummaryInstructions(
        custom_instructions=comp.custom_instructions,
        identifier_policy=comp.identifier_policy,
        identifier_instructions=comp.identifier_instructions,
    )


def compaction_settings(
    session: Session, config: OpenClawConfig | None = None, *, window: int | None = None
) -> CompactionSettings:
    """The settings the agent would compact *session* with.

    Parameters
    ----------
    config
        The loaded ``openclaw.json``, or None for pi's defaults.
    window
        Overrides the context window resolved for the session's model.
    """
    model = session_model(session)
    source: WindowSource = "config"
    if window is None:
        window, source = context_window_for(config, model)
    comp = config.compaction if config else None
    return CompactionSettings(
        window=window,
        reserve_tokens=comp.effective_reserve_tokens if comp else DEFAULT_RESERVE_TOKENS,
        keep_recent_tokens=comp.keep_recent_tokens if comp else DEFAULT_KEEP_RECENT_TOKENS,
        max_history_share=comp.max_history_share if comp else DEFAULT_MAX_HISTORY_SHARE,
        window_source=source,
        model=model,
        instructions=summary_instructions(config),
    )
