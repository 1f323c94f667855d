"""What the demo home holds: the sessions to generate and the figures they share.

:data:`PLANS` lists each demo session (agent, project, task, size, compactions,
age, branch); the constants are the window, the prices and the home folder the
generated transcripts and stores agree on.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import random

DAY_MS = 86_400_000
THRESHOLD = 200_000 - 20_000
"""contextTokens minus reserveTokensFloor: where the demo's compactions happen."""
KEEP_RECENT = 20_000
HOME = "/home/dev"
ToolCall = tuple[str, dict[str, Any], str, bool]
"""A tool call to make: name, arguments, result text, whether the result is an error."""
PRICES = {"claude-sonnet-4-5": (3.0, 15.0, 0.3, 3.75), "claude-opus-4-5": (5.0, 25.0, 0.5, 6.25)}


@dataclass(frozen=True, slots=True)
class SessionPlan:
    """One demo session to generate: its agent, key, project, task, size and age."""

    agent: str
    key: str
    project: int
    task: str
    messages: int
    compactions: int
    days_ago: float
    branch: bool = False
    topic: str | None = None


PLANS = (
    SessionPlan(
        "main",
        "agent:main:main",
        0,
        "Move pricing to Decimal and fix discount rounding",
        1500,
        3,
        13.6,
    ),
    SessionPlan(
        "main",
        "agent:main:telegram:direct:123456789",
        1,
        "Byte-budget LRU eviction and cache metrics",
        380,
        2,
        7.6,
    ),
    SessionPlan(
        "main",
        "agent:main:telegram:group:-1002233445566:topic:17",
        2,
        "Token usage chart on the sessions page",
        220,
        0,
        5.6,
        branch=True,
        topic="dashboard: usage chart",
    ),
    SessionPlan(
        "main",
        "agent:main:discord:channel:998877665544332211",
        3,
        "Retries with exponential backoff in the consumer",
        120,
        0,
        4.6,
    ),
    SessionPlan(
        "main",
        "agent:main:cron:nightly-deps",
        0,
        "Render invoice PDFs in a background task",
        90,
        0,
        3.6,
    ),
    SessionPlan(
        "main",
        "agent:main:telegram:direct:555000111",
        1,
        "Fix clippy warnings in render.rs",
        60,
        0,
        2.6,
    ),
    SessionPlan(
        "main",
        "agent:main:subagent:typecheck",
        2,
        "Strict-mode type errors in the API client",
        45,
        0,
        1.6,
    ),
    SessionPlan("main", "agent:main:slack:dm:u04demo", 3, "Flaky TestConsumerRetries", 30, 0, 0.8),
    SessionPlan("reviewer", "agent:reviewer:main", 0, "Per-year invoice numbering", 260, 1, 9.6),
    SessionPlan(
        "reviewer",
        "agent:reviewer:github:pr:ingest-worker",
        3,
        "Idempotent UpsertEvents with ON CONFLICT",
        140,
        0,
        6.6,
    ),
    SessionPlan(
        "reviewer",
        "agent:reviewer:github:pr:web-dashboard",
        2,
        "uPlot instead of recharts for the usage chart",
        70,
        0,
        3.6,
    ),
    SessionPlan(
        "reviewer",
        "agent:reviewer:github:pr:tilecache",
        1,
        "Prometheus /metrics endpoint",
        35,
        0,
        1.6,
    ),
)


def iso(ms: int) -> str:
    """ISO-8601 UTC with milliseconds, as pi writes entry timestamps."""
    return (
        datetime.fromtimestamp(ms // 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S") + f".{ms % 1000:03d}Z"
    )


def rng_uuid(rng: random.Random) -> str:
    """A version-4 UUID drawn from *rng* (reproducible, unlike uuid4())."""
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))
