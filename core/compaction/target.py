"""What a compaction acts on: the session, its settings and its memory-context folder.

The app builds a :class:`CompactionTarget` from what it loaded and hands it to the
compaction view, which never deals with paths itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from core.compaction.settings import CompactionSettings, compaction_settings

if TYPE_CHECKING:
    from pathlib import Path

    from core.dataset.load import DataSet
    from core.openclaw.config import OpenClawConfig
    from core.transcript.model import Session


@dataclass(frozen=True, slots=True)
class CompactionTarget:
    """A session to compact, how, and where its archive and facts live."""

    session: Session
    settings: CompactionSettings = field(default_factory=CompactionSettings)
    store_dir: Path | None = None
    """The memory-context folder (segments.jsonl, knowledge.jsonl); None: none."""

    def snapshot(self) -> CompactionTarget:
        """The same target over a snapshot of its session (:meth:`Session.snapshot`)."""
        return replace(self, session=self.session.snapshot())

    @property
    def label(self) -> str:
        """The session id and file name, for headers."""
        return self.session.id


def target_for(
    session: Session,
    *,
    config: OpenClawConfig | None = None,
    store_dir: Path | None = None,
    window: int | None = None,
) -> CompactionTarget:
    """A target with the settings the agent would use for *session*."""
    return CompactionTarget(session, compaction_settings(session, config, window=window), store_dir)


def target_from_dataset(
    dataset: DataSet, session: Session, *, window: int | None = None
) -> CompactionTarget:
    """A target for a session of a loaded data directory (its config and store)."""
    return target_for(
        session,
        config=dataset.config,
        store_dir=dataset.discovery.memory_context,
        window=window,
    )
