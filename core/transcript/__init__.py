"""pi / OpenClaw session transcripts: loading, normalising, replaying context."""

from __future__ import annotations

from core.transcript.loader import load_transcript, parse_transcript
from core.transcript.model import Block, Entry, Message, Session
from core.transcript.replay import (
    CompactionInfo,
    ContextItem,
    ContextSize,
    compactions,
    context_at,
    context_size,
)

__all__ = [
    "Block",
    "CompactionInfo",
    "ContextItem",
    "ContextSize",
    "Entry",
    "Message",
    "Session",
    "compactions",
    "context_at",
    "context_size",
    "load_transcript",
    "parse_transcript",
]
