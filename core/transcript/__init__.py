"""pi / OpenClaw session transcripts: loading, normalising, replaying context."""

from __future__ import annotations

from core.transcript.loader import load_transcript, parse_transcript
from core.transcript.model import Block, Entry, Message, Session
from core.transcript.replay import CompactionInfo, ContextItem, compactions, context_at

__all__ = [
    "Block",
    "CompactionInfo",
    "ContextItem",
    "Entry",
    "Message",
    "Session",
    "compactions",
    "context_at",
    "load_transcript",
    "parse_transcript",
]
