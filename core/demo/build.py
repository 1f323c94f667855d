"""Write a realistic, reproducible demo OpenClaw home for exploring memlens.

``write_demo(dest)`` creates ``openclaw.json``, two agents with a dozen pi v3
transcripts and their ``sessions.json``, the memory-context store
(``segments.jsonl``, ``vectors.bin``, ``knowledge.jsonl``), an OpenClaw memory
index (``memory/main.sqlite``) and the workspace notes it indexes. Everything
is drawn from ``random.Random(seed)`` and timestamps are relative to
``now_ms``, so the same seed and ``now_ms`` give the same bytes.
"""

from __future__ import annotations

import hashlib
import os
import random
import sqlite3
import uuid
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from core.demo.text import (
    EXPLAIN_TEXTS,
    FINAL_TEXTS,
    FLUSH_PROMPT,
    LINT_OUTPUT,
    PROJECTS,
    REVIEW_OPENERS,
    REVIEW_PROMPTS,
    REVIEW_TEXTS,
    STEP_TEXTS,
    THINKING,
    USER_OPENERS,
    USER_PROMPTS,
    Project,
    code_file,
    compaction_summary,
    fill,
    generated_exchange,
    grep_output,
    ident,
    memory_note,
    snippet,
    test_output,
)
from core.embed.hashembed import DIM, embed_many
from core.io import jsonio
from core.store.knowledge import KnowledgeLog
from core.store.segments import Segment, dedup_key, make_segment
from core.store.vectors import encode_vectors
from core.transcript.normalize import normalize_message
from core.transcript.tokens import estimate_message

DAY_MS = 86_400_000
THRESHOLD = 200_000 - 20_000
"""contextTokens minus reserveTokensFloor: where the demo's compactions happen."""
KEEP_RECENT = 20_000
HOME = "/home/dev"
_Call = tuple[str, dict[str, Any], str, bool]
"""A tool call to make: name, arguments, result text, whether the result is an error."""
PRICES = {"claude-sonnet-4-5": (3.0, 15.0, 0.3, 3.75), "claude-opus-4-5": (5.0, 25.0, 0.5, 6.25)}


@dataclass(frozen=True, slots=True)
class DemoSummary:
    """What :func:`write_demo` wrote."""

    root: Path
    config: Path
    transcripts: tuple[Path, ...]
    session_stores: tuple[Path, ...]
    segments_file: Path
    vectors_file: Path
    knowledge_file: Path
    memory_index: Path
    workspace_notes: tuple[Path, ...]
    agents: int
    sessions: int
    messages: int
    compactions: int
    branches: int
    segments: int
    """Valid, distinct segments (the file also holds the duplicate and invalid lines)."""
    duplicate_lines: int
    invalid_lines: int
    vectors: int
    facts: int
    fact_lines: int
    chunks: int

    def to_json(self) -> dict[str, Any]:
        """Counts and paths as JSON-ready values."""
        out: dict[str, Any] = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if isinstance(value, Path):
                value = str(value)
            elif isinstance(value, tuple):
                value = [str(v) for v in value]
            out[name] = value
        return out

    def describe(self) -> str:
        """One line of counts."""
        return (
            f"{self.agents} agents, {self.sessions} sessions ({self.messages} messages, "
            f"{self.compactions} compactions, {self.branches} branch), {self.segments} segments "
            f"({self.vectors} with vectors), {self.facts} facts in {self.fact_lines} lines, "
            f"{self.chunks} memory-index chunks"
        )


@dataclass(frozen=True, slots=True)
class _Plan:
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
    _Plan(
        "main",
        "agent:main:main",
        0,
        "Move pricing to Decimal and fix discount rounding",
        1500,
        3,
        13.6,
    ),
    _Plan(
        "main",
        "agent:main:telegram:direct:123456789",
        1,
        "Byte-budget LRU eviction and cache metrics",
        380,
        2,
        7.6,
    ),
    _Plan(
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
    _Plan(
        "main",
        "agent:main:discord:channel:998877665544332211",
        3,
        "Retries with exponential backoff in the consumer",
        120,
        0,
        4.6,
    ),
    _Plan(
        "main",
        "agent:main:cron:nightly-deps",
        0,
        "Render invoice PDFs in a background task",
        90,
        0,
        3.6,
    ),
    _Plan(
        "main",
        "agent:main:telegram:direct:555000111",
        1,
        "Fix clippy warnings in render.rs",
        60,
        0,
        2.6,
    ),
    _Plan(
        "main",
        "agent:main:subagent:typecheck",
        2,
        "Strict-mode type errors in the API client",
        45,
        0,
        1.6,
    ),
    _Plan("main", "agent:main:slack:dm:u04demo", 3, "Flaky TestConsumerRetries", 30, 0, 0.8),
    _Plan("reviewer", "agent:reviewer:main", 0, "Per-year invoice numbering", 260, 1, 9.6),
    _Plan(
        "reviewer",
        "agent:reviewer:github:pr:ingest-worker",
        3,
        "Idempotent UpsertEvents with ON CONFLICT",
        140,
        0,
        6.6,
    ),
    _Plan(
        "reviewer",
        "agent:reviewer:github:pr:web-dashboard",
        2,
        "uPlot instead of recharts for the usage chart",
        70,
        0,
        3.6,
    ),
    _Plan(
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


@dataclass(slots=True)
class _SessionOut:
    """One generated transcript and what the stores need to know about it."""

    plan: _Plan
    session_id: str
    file_name: str
    data: bytes
    messages: int
    compactions: int
    branches: int
    updated_at: int
    last_usage: dict[str, Any]
    flush_at: int | None
    texts: list[tuple[str, str, int]]
    """``(role, text, ms)`` of user and assistant text messages."""
    notes: list[tuple[str, str]]
    """``(date, markdown)`` written by memory flushes."""


class _Transcript:
    """Builds one pi v3 transcript, tracking the context the model sees."""

    def __init__(
        self, rng: random.Random, plan: _Plan, start_ms: int, note_dates: set[str]
    ) -> None:
        self.rng = rng
        self.plan = plan
        self.p: Project = PROJECTS[plan.project]
        self.review = plan.agent == "reviewer"
        self.note_dates = note_dates  # dates of workspace notes written by any session
        self.pr = rng.randint(96, 180)
        self.focus: dict[str, str] = {}  # what the current turn is about
        self.failure = self.p.failures[0]
        self.changed = False
        self.day = 0
        self.cwd = f"{HOME}/projects/{self.p.name}"
        self.sid = rng_uuid(rng)
        self.lines: list[dict[str, Any]] = []
        self.ids: set[str] = set()
        self.leaf: str | None = None
        self.t = start_ms
        self.ctx: list[tuple[str, int, str]] = []  # (entry id, tokens, role)
        self.system = rng.randint(8500, 12500)
        self.cached = 0
        self.messages = self.compactions = self.branches = 0
        self.reads = 0
        self.other = [0, 0]  # tokens and count of messages that are not reads
        self.read_files: list[str] = []
        self.modified: list[str] = []
        self.failures: list[dict[str, str]] = []
        self.turns: list[tuple[int, str | None]] = []
        n, k = plan.messages, plan.compactions
        self.points = [n * (i + 1) // (k + 1) for i in range(k)]
        self.final_target = min(int(THRESHOLD * rng.uniform(0.2, 0.55)), 9000 + n * 450)
        self.target = self._next_target()
        self.model = "claude-sonnet-4-5"
        self.last_usage: dict[str, Any] = {}
        self.flush_at: int | None = None
        self.texts: list[tuple[str, str, int]] = []
        self.notes: list[tuple[str, str]] = []

    # -- low level ---------------------------------------------------------
    def _next_target(self) -> int:
        if self.compactions < len(self.points):
            return THRESHOLD + self.rng.randint(-7000, 2500)
        return self.final_target

    def _tick(self, lo: float, hi: float) -> None:
        self.t += int(self.rng.uniform(lo, hi) * 1000)

    def _entry(self, kind: str, **fields: Any) -> str:
        eid = f"{self.rng.getrandbits(32):08x}"
        while eid in self.ids:
            eid = f"{self.rng.getrandbits(32):08x}"
        self.ids.add(eid)
        self.lines.append(
            {
                "type": kind,
                "id": eid,
                "parentId": self.leaf,
                "timestamp": iso(self.t + self.rng.randint(1, 40)),
                **fields,
            }
        )
        self.leaf = eid
        return eid

    def _context(self) -> int:
        return self.system + sum(tok for _, tok, _ in self.ctx)

    def _message(self, message: dict[str, Any], *, read: bool = False) -> str:
        message["timestamp"] = self.t
        tokens = estimate_message(normalize_message(message))
        eid = self._entry("message", message=message)
        self.ctx.append((eid, tokens, message["role"]))
        self.messages += 1
        if read:
            self.reads += 1
        else:
            self.other[0] += tokens
            self.other[1] += 1
        return eid

    def _user(self, text: str) -> str:
        self._tick(15, 600)
        self.turns.append((len(self.ctx), self.leaf))
        self.texts.append(("user", text, self.t))
        return self._message({"role": "user", "content": [{"type": "text", "text": text}]})

    def _assistant(self, blocks: list[dict[str, Any]], stop: str) -> str:
        self._tick(2, 35)
        msg: dict[str, Any] = {
            "role": "assistant",
            "content": blocks,
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": self.model,
        }
        out = estimate_message(normalize_message(msg)) + self.rng.randint(4, 60)
        ctx_in = self._context()
        inp = self.rng.randint(3, 40)
        read = min(self.cached, ctx_in - inp)
        write = ctx_in - inp - read
        self.cached = ctx_in
        price = PRICES[self.model]
        cost = {
            k: round(v * p / 1e6, 8)
            for k, v, p in zip(
                ("input", "output", "cacheRead", "cacheWrite"),
                (inp, out, read, write),
                price,
                strict=True,
            )
        }
        cost["total"] = round(sum(cost.values()), 8)
        usage = {
            "input": inp,
            "output": out,
            "cacheRead": read,
            "cacheWrite": write,
            "totalTokens": ctx_in + out,
            "cost": cost,
        }
        msg.update(usage=usage, stopReason=stop)
        self.last_usage = usage
        text = "\n".join(b["text"] for b in blocks if b["type"] == "text")
        if text:
            self.texts.append(("assistant", text, self.t))
        return self._message(msg)

    def _call_id(self) -> str:
        chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
        return "toolu_01" + "".join(self.rng.choice(chars) for _ in range(22))

    def _step(self, calls: list[_Call], action: str = "", say: float = 0.6) -> None:
        """One assistant message with tool calls, then one result per call."""
        blocks: list[dict[str, Any]] = []
        if self.rng.random() < 0.3:
            blocks.append(
                {
                    "type": "thinking",
                    "thinking": self._fill(self.rng.choice(THINKING)),
                    "thinkingSignature": "sig_" + self._call_id()[8:],
                }
            )
        if action and self.rng.random() < say:
            blocks.append({"type": "text", "text": self._fill(self.rng.choice(STEP_TEXTS[action]))})
        ids = [self._call_id() for _ in calls]
        blocks += [
            {"type": "toolCall", "id": cid, "name": name, "arguments": args}
            for cid, (name, args, _, _) in zip(ids, calls, strict=True)
        ]
        self._assistant(blocks, "toolUse")
        for cid, (name, args, text, error) in zip(ids, calls, strict=True):
            self._tick(0.05, 6)
            if error:
                lines = text.splitlines()
                cause = next(
                    (
                        ln
                        for ln in lines
                        if any(k in ln for k in ("Error", "FAIL", "panicked", "error", "Could not"))
                    ),
                    lines[-1],
                )
                self.failures.append(
                    {"toolCallId": cid, "toolName": name, "summary": cause.strip()[:200]}
                )
            result: dict[str, Any] = {
                "role": "toolResult",
                "toolCallId": cid,
                "toolName": name,
                "content": [{"type": "text", "text": text}],
                "isError": error,
            }
            if name == "edit" and not error:
                result["details"] = {"diff": "+" + args["newText"].splitlines()[0]}
            self._message(result, read=name == "read")

    def _fill(self, template: str) -> str:
        return fill(self.rng, template, self.p, self.plan.task, **self.focus)

    def _abs(self, path: str) -> str:
        return f"{self.cwd}/{path}"

    # -- tool calls --------------------------------------------------------
    def _read_chars(self) -> int:
        remaining = max(
            1,
            (
                self.points[self.compactions]
                if self.compactions < len(self.points)
                else self.plan.messages
            )
            - self.messages,
        )
        frac = (self.reads + 3) / (self.messages + 20)
        base = self.other[0] / max(1, self.other[1])
        need = self.target - self._context() - remaining * (1 - frac) * base
        tokens = min(11_000, max(120, need / max(1.0, remaining * frac)))
        return int(tokens * 4 * self.rng.uniform(0.75, 1.25))

    def _read(self, path: str) -> _Call:
        self.read_files.append(path)
        text = code_file(self.rng, self.p, self._read_chars())
        return "read", {"path": self._abs(path)}, text, False

    def _bash(self, command: str, output: str, code: int = 0) -> _Call:
        text = output if code == 0 else f"{output}\n\nCommand exited with code {code}"
        return "bash", {"command": command, "timeout": 300}, text, code != 0

    def _edit(self, path: str, fail: bool = False) -> _Call:
        old, new = snippet(self.rng, self.p)
        if fail:
            return (
                "edit",
                {"path": self._abs(path), "oldText": old, "newText": new},
                (
                    f"Could not find the exact text in {self._abs(path)}. The old text must match "
                    "exactly including all whitespace and newlines."
                ),
                True,
            )
        self.modified.append(path)
        self.changed = True
        return (
            "edit",
            {"path": self._abs(path), "oldText": old, "newText": new},
            f"Successfully replaced text in {self._abs(path)}.",
            False,
        )

    def _tests(self, fail: bool) -> _Call:
        failure = self.failure if fail else None
        cmd = f"gh pr checkout {self.pr} && {self.p.test_cmd}" if self.review else self.p.test_cmd
        return self._bash(cmd, test_output(self.rng, self.p, failure), int(fail))

    # -- workflows ---------------------------------------------------------
    def _turn(self, first: bool) -> None:
        p, rng = self.p, self.rng
        if self.plan.messages >= 1000 and self.messages // 300 > self.day:
            self.day += 1
            # the next working day, some time after half past eight (UTC)
            self.t = (self.t // DAY_MS + 1) * DAY_MS + int(rng.uniform(8.5, 10) * 3600_000)
        file, file2 = rng.sample(p.files, 2)
        self.failure = rng.choice(p.failures)
        self.focus = {
            "file": file,
            "file2": file2,
            "fn": ident(rng.choice(p.functions)),
            "test": rng.choice(p.tests),
            "pr": str(self.pr),
            "ask": rng.choice(p.asks),
            "error": self.failure[1].splitlines()[0].lstrip("E ").strip(),
        }
        self.changed = False
        prompt = rng.choice(REVIEW_PROMPTS if self.review else USER_PROMPTS)
        if not first and rng.random() < 0.08:  # the user ran a command with !
            self._tick(10, 120)
            log = "\n".join(
                f"{rng.getrandbits(28):07x} {rng.choice(p.decisions)}" for _ in range(5)
            )
            cmd, out = rng.choice(
                (("git log --oneline -5", log), (p.test_cmd, test_output(rng, p, None)))
            )
            self._message(
                {
                    "role": "bashExecution",
                    "command": cmd,
                    "output": out,
                    "exitCode": 0,
                    "cancelled": False,
                    "truncated": False,
                }
            )
        if first:
            self._user(self._fill(rng.choice(REVIEW_OPENERS if self.review else USER_OPENERS)))
            if self.review:
                self._step(
                    [self._bash(f"gh pr diff {self.pr}", code_file(rng, p, 3000))], "diff", 1
                )
            self._step([self._read(file), self._read(file2)], "read")
        else:
            self._user(self._fill(prompt))
            self._step([self._read(file)], "read")
        steps = rng.randint(0, 3 if self.plan.messages > 100 else 1)
        for n in range(max(steps, 1) if "{error}" in prompt else steps):
            kind = 0.3 if n == 0 and "{error}" in prompt else rng.random()
            if self.review and kind < 0.3:
                self._step(
                    [
                        self._bash(
                            f"gh pr diff {self.pr} -- {file}",
                            code_file(rng, p, rng.randint(600, 4000)),
                        )
                    ],
                    "diff",
                )
            elif kind < 0.25:
                fn = self.focus["fn"]
                self._step([self._bash(f'rg -n "{fn}" .', grep_output(rng, p, fn))], "grep")
            elif kind < 0.55:  # a failing test, then the fix (a reviewer only reports it)
                self._step([self._tests(True)], "test")
                self._step([self._read(self.focus["test"])], "read", 0.3)
                if not self.review:
                    self._step([self._edit(file)], "edit")
                    self._step([self._tests(False)], "verify")
            elif kind < 0.7 and not self.review:  # an edit whose oldText no longer matches
                self._step([self._edit(file, fail=True)], "edit")
                self._step([self._read(file)], "reread", 1)
                self._step([self._edit(file)])
            elif kind < 0.8 and not self.review:
                test = self.focus["test"]
                self.modified.append(test)
                self.changed = True
                content = code_file(rng, p, rng.randint(400, 1600))
                self._step(
                    [
                        (
                            "write",
                            {"path": self._abs(test), "content": content},
                            f"Successfully wrote {len(content.encode())} bytes to "
                            f"{self._abs(test)}",
                            False,
                        )
                    ],
                    "write",
                )
            else:
                status = "\n".join(f" M {m}" for m in sorted(set(self.modified[-4:])))
                self._step(
                    [
                        self._bash(p.lint_cmd, LINT_OUTPUT[p.lang]),
                        self._bash("git status --short", status or "(no output)"),
                    ],
                    "check",
                )
        if self.review and rng.random() < 0.5:
            self._step(
                [
                    self._bash(
                        f"gh pr review {self.pr} --comment --body-file /tmp/review-{self.pr}.md",
                        f"- Reviewed pull request acme/{p.name}#{self.pr}",
                    )
                ]
            )
        final = rng.choice(
            REVIEW_TEXTS if self.review else FINAL_TEXTS if self.changed else EXPLAIN_TEXTS
        )
        self._assistant([{"type": "text", "text": self._fill(final)}], "stop")

    def _flush(self) -> None:
        date = iso(self.t)[:10]
        self._user(FLUSH_PROMPT.format(date=date))
        self.flush_at = self.t
        if date not in self.note_dates and len(self.note_dates) >= 3:
            self._assistant([{"type": "text", "text": "NO_REPLY"}], "stop")
            return
        self.note_dates.add(date)
        note = memory_note(self.rng, self.p, self.plan.task, date, self.modified)
        path = f"{HOME}/.openclaw/workspace/memory/{date}.md"
        self._step(
            [
                (
                    "write",
                    {"path": path, "content": note},
                    f"Successfully wrote {len(note.encode())} bytes to {path}",
                    False,
                )
            ]
        )
        self.notes.append((date, note))
        self._assistant([{"type": "text", "text": "NO_REPLY"}], "stop")

    def _compact(self) -> None:
        if self.plan.agent == "main":
            self._flush()
        before = self._context()
        acc, cut = 0, 0
        for i in range(len(self.ctx) - 1, -1, -1):
            acc += self.ctx[i][1]
            if acc >= KEEP_RECENT:
                cut = i
                break
        while cut < len(self.ctx) and self.ctx[cut][2] not in ("user", "assistant"):
            cut += 1
        self.compactions += 1
        summary = compaction_summary(
            self.rng, self.p, self.plan.task, self.read_files, self.modified, self.compactions
        )
        self._tick(20, 90)
        first_kept = self.ctx[cut][0]
        kept = self.ctx[cut:]
        tokens = estimate_message(normalize_message({"role": "user", "content": summary}))
        after = self.system + tokens + sum(t for _, t, _ in kept)
        eid = self._entry(
            "compaction",
            summary=summary,
            firstKeptEntryId=first_kept,
            tokensBefore=before,
            tokensAfter=after,
            details={
                "readFiles": sorted({self._abs(f) for f in self.read_files}),
                "modifiedFiles": sorted({self._abs(f) for f in self.modified}),
                "toolFailures": self.failures[-5:],
            },
        )
        self.ctx = [(eid, tokens, "compactionSummary"), *kept]
        self.cached = 0
        self.turns = []
        self.read_files, self.failures = self.read_files[-8:], []
        self.target = self._next_target()

    def _branch(self) -> None:
        """The user goes back two turns; pi records a branch summary there."""
        ctx_len, parent = self.turns[-2]
        from_id = self.leaf
        self.ctx = self.ctx[:ctx_len]
        self.leaf = parent
        self.cached = min(self.cached, self._context())
        summary = (
            f"The user went back to an earlier point. On the abandoned branch the agent "
            f"tried to {self.rng.choice(self.p.asks)}; it was dropped because "
            f"{self.rng.choice(self.p.constraints)}."
        )
        eid = self._entry("branch_summary", fromId=from_id, summary=summary)
        self.ctx.append((eid, len(summary) // 4 + 1, "branchSummary"))
        self._entry("label", targetId=eid, label="retry: smaller change")
        self.branches += 1

    def build(self, now_ms: int) -> _SessionOut:
        """Generate the whole transcript."""
        rng, plan = self.rng, self.plan
        header = {
            "type": "session",
            "version": 3,
            "id": self.sid,
            "timestamp": iso(self.t),
            "cwd": self.cwd,
        }
        self._entry("model_change", provider="anthropic", modelId=self.model)
        self._entry("thinking_level_change", thinkingLevel="medium")
        self._entry(
            "custom",
            customType="model-snapshot",
            data={
                "timestamp": self.t,
                "provider": "anthropic",
                "modelApi": "anthropic-messages",
                "modelId": self.model,
            },
        )
        while self.messages < plan.messages:
            first = not self.messages
            self._turn(first)
            if first:  # the user named the session (/name) after the first answer
                self._entry("session_info", name=plan.task)
            if self.messages == 0 or rng.random() < 0.04:
                self._entry(
                    "label",
                    targetId=self.leaf,
                    label=rng.choice(
                        ("tests green", "before refactor", "checkpoint", "good state")
                    ),
                )
            if self.messages < plan.messages and (
                self._context() >= THRESHOLD
                or (
                    self.compactions < len(self.points)
                    and self.messages >= self.points[self.compactions]
                )
            ):
                self._compact()
            if plan.branch and not self.branches and self.messages >= plan.messages * 0.6:
                self._branch()
            if (
                plan.messages >= 1000
                and abs(self.messages - plan.messages // 2) < 8
                and self.model != "claude-opus-4-5"
            ):
                self.model = "claude-opus-4-5"
                self._entry("model_change", provider="anthropic", modelId=self.model)
                self._entry("thinking_level_change", thinkingLevel="high")
            self._entry(
                "custom",
                customType="openclaw.cache-ttl",
                data={"timestamp": self.t, "provider": "anthropic", "modelId": self.model},
            )
        if self.t >= now_ms:  # a mistake in PLANS, never a user error
            raise RuntimeError(f"demo session {plan.key} would end after now_ms")
        name = self.sid + (f"-topic-{quote(plan.topic, safe='')}" if plan.topic else "")
        data = b"".join(jsonio.dumps_line(obj) for obj in [header, *self.lines])
        return _SessionOut(
            plan,
            self.sid,
            f"{name}.jsonl",
            data,
            self.messages,
            self.compactions,
            self.branches,
            self.t,
            self.last_usage,
            self.flush_at,
            self.texts,
            self.notes,
        )


# -- the stores ---------------------------------------------------------------
CONFIG_TEXT = """// OpenClaw configuration of the memlens demo home. All data here is fictional.
// JSON5: comments, unquoted keys and trailing commas are allowed.
{
  agents: {
    defaults: {
      workspace: "~/.openclaw/workspace",
      contextTokens: 200000,
      compaction: {
        mode: "safeguard",
        reserveTokensFloor: 20000,
        maxHistoryShare: 0.5,
        memoryFlush: { enabled: true, softThresholdTokens: 4000 },
      },
      // memory-context (openclaw/openclaw#14362): raw archive, knowledge log, recall
      memoryContext: {
        enabled: true,
        hardCapTokens: 4000,
        embeddingModel: "hash",
        redaction: true,
        knowledgeExtraction: true,
        maxSegments: 20000,
        evictionDays: 90,
        crossSession: false,
      },
    },
    list: [
      { id: "main", default: true },
      { id: "reviewer", workspace: "~/.openclaw/workspace-reviewer" },
    ],
  },
  models: {
    providers: {
      anthropic: {
        baseUrl: "https://api.anthropic.com",
        api: "anthropic-messages",
        apiKey: "${ANTHROPIC_API_KEY}",
        models: [
          { id: "claude-sonnet-4-5", name: "Claude Sonnet 4.5", contextWindow: 200000,
            maxTokens: 64000 },
        ],
      },
    },
  },
}
"""


def _write_sessions_store(path: Path, outs: list[_SessionOut], rng: random.Random) -> Path:
    store: dict[str, Any] = {}
    for o in outs:
        u = o.last_usage
        entry: dict[str, Any] = {
            "sessionId": o.session_id,
            "updatedAt": o.updated_at,
            "sessionFile": o.file_name,
            "compactionCount": o.compactions,
        }
        if o.flush_at is not None:
            # The flush runs before the compaction it prepares for.
            entry.update(memoryFlushAt=o.flush_at, memoryFlushCompactionCount=o.compactions - 1)
        channel = o.plan.key.split(":")[2].replace("main", "webchat")
        entry.update(
            totalTokens=u["totalTokens"],
            totalTokensFresh=True,
            inputTokens=u["input"] + u["cacheRead"] + u["cacheWrite"],
            outputTokens=u["output"],
            contextTokens=200_000,
            thinkingLevel="medium",
            channelMeta={
                "provider": channel,
                "lastMessageId": str(rng.randint(10**6, 10**7)),
                "displayName": o.plan.task,
            },
        )
        store[o.plan.key] = entry
    path.write_bytes(jsonio.dumps(store, pretty=True) + b"\n")
    return path


@dataclass(frozen=True, slots=True)
class _SegmentsOut:
    segments_file: Path
    vectors_file: Path
    segments: int
    duplicates: int
    invalid: int
    vectors: int


OLD_KEYS = (
    "agent:main:main",
    "agent:main:telegram:direct:123456789",
    "agent:main:discord:channel:998877665544332211",
    "agent:main:slack:dm:u04demo",
)
"""Keys of the older sessions whose transcripts are gone but whose segments remain."""


def _secrets(rng: random.Random) -> list[str]:
    def token(n: int) -> str:
        return "".join(
            rng.choice("abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789")
            for _ in range(n)
        )

    return [
        f"use the staging config for the smoke test: api_key={'sk_live_' + token(24)}",
        f"staging answers 401 with Authorization: Bearer {token(40)} - is it expired?",
        f"the deploy hook still has token={'ghp_' + token(36)} hardcoded, move it to the env",
    ]


def _write_segments(
    folder: Path, outs: list[_SessionOut], rng: random.Random, now: int, count: int
) -> _SegmentsOut:
    folder.mkdir(parents=True, exist_ok=True)
    pool = [
        (o.session_id, o.plan.key, role, text, ms)
        for o in outs
        for role, text, ms in o.texts
        if text != "NO_REPLY"
    ]
    picked = sorted(rng.sample(range(len(pool)), min(len(pool), count * 3 // 5)))
    items: list[tuple[str, str, str, str, int]] = []
    seen: set[str] = set()

    def keep(item: tuple[str, str, str, str, int]) -> None:
        key = dedup_key(item[0], item[2], item[3])
        if key not in seen and len(items) < count:
            seen.add(key)
            items.append(item)

    for i in picked:
        keep(pool[i])
    old = [(rng_uuid(rng), key, PROJECTS[i % len(PROJECTS)]) for i, key in enumerate(OLD_KEYS * 3)]
    secrets = _secrets(rng)
    while len(items) < count:
        sid, key, project = rng.choice(old)
        ms = now - rng.randint(14 * DAY_MS, 60 * DAY_MS)
        user, reply = generated_exchange(rng, project)
        keep((sid, key, "user", secrets.pop() if secrets else user, ms))
        keep((sid, key, "assistant", reply, ms + rng.randint(4000, 90_000)))
    items.sort(key=lambda it: it[4])
    segs = [
        make_segment(sid, role, text, timestamp=ms, session_key=key, new_id=lambda: rng_uuid(rng))
        for sid, key, role, text, ms in items
    ]
    lines = [jsonio.dumps_line(s.to_json()) for s in segs]
    # Two messages archived twice (an agent restart) and one line the loader must skip.
    for i in sorted(rng.sample(range(count), min(2, count)), reverse=True):
        s = segs[i]
        dup = make_segment(
            s.session_id,
            s.role,
            s.content,
            timestamp=s.timestamp + 1500,
            session_key=s.session_key,
            new_id=lambda: rng_uuid(rng),
        )
        lines.insert(i + 1, jsonio.dumps_line(dup.to_json()))
    bad = segs[count // 2]
    lines.insert(
        count // 2,
        jsonio.dumps_line(
            {
                "id": rng_uuid(rng),
                "sessionId": bad.session_id,
                "timestamp": bad.timestamp,
                "role": "system",
                "content": "You are a coding agent. Follow AGENTS.md.",
                "tokens": 14,
                "metadata": {"topics": [], "entities": []},
            }
        ),
    )
    seg_file = folder / "segments.jsonl"
    seg_file.write_bytes(b"".join(lines))
    missing = set(rng.sample(range(count), min(50, max(1, count // 60))))
    have: list[Segment] = [s for i, s in enumerate(segs) if i not in missing]
    vec_file = folder / "vectors.bin"
    vec_file.write_bytes(
        encode_vectors([s.id for s in have], embed_many([s.content for s in have]), DIM)
    )
    return _SegmentsOut(seg_file, vec_file, count, min(2, count), 1, len(have))


def _write_knowledge(path: Path, rng: random.Random, now: int) -> tuple[Path, int, int]:
    path.unlink(missing_ok=True)
    clock = [now - 58 * DAY_MS]

    def tick() -> int:
        clock[0] += rng.randint(3, 16) * 3600_000 + rng.randint(0, 3599_999)
        return clock[0]

    log = KnowledgeLog(str(path), clock=tick, new_id=lambda: rng_uuid(rng))
    facts: list[tuple[str, str, str]] = []
    for p in PROJECTS:
        ctx = f"{p.name} ({p.lang}), /home/dev/projects/{p.name}"
        facts += [("decision", d, ctx) for d in p.decisions]
        facts += [("architecture", a, ctx) for a in p.architecture]
        facts += [("implementation", a, ctx) for a in p.implementation]
        facts += [("config", c, ctx) for c in p.config]
        facts += [
            ("issue", f"{p.name}: {t} failed with {e.splitlines()[0].lstrip('E ').strip()}", ctx)
            for t, e in p.failures[:2]
        ]
        facts += [("task_state", f"{p.name}: open: {t}", ctx) for t in p.todos[:2]]
    rng.shuffle(facts)
    added = [log.add(kind, content, context) for kind, content, context in facts]
    for p in PROJECTS:  # supersession chains: each version replaces the previous one
        fact = log.add("decision" if p.lang != "go" else "config", p.chain[0], p.name)
        for version in p.chain[1:]:
            fact = log.supersede(fact.id, version)
        if len(p.chain) == 1:
            log.delete(fact.id)  # a wrong fact the user removed
    tasks = [f for f in added if f.type == "task_state"]
    for f in rng.sample(tasks, 4):
        log.update(f.id, content=f.content.replace(": open: ", ": done: "))
    log.delete(rng.choice([f for f in added if f.type == "issue"]).id)
    return path, len(log.facts), log.lines


def _chunks(lines: list[tuple[int, str]], size: int) -> list[tuple[int, int, str]]:
    out: list[tuple[int, int, str]] = []
    start, buf = 0, list[str]()
    for line_no, text in lines:
        if not buf:
            start = line_no
        buf.append(text)
        if sum(len(t) for t in buf) >= size:
            out.append((start, line_no, "\n".join(buf)))
            buf = []
    if buf:
        out.append((start, lines[-1][0], "\n".join(buf)))
    return out


def _write_index(dest: Path, outs: list[_SessionOut]) -> tuple[Path, list[Path], int]:
    notes: dict[str, list[str]] = {}
    for o in outs:
        for date, note in o.notes:
            notes.setdefault(date, []).append(note)
    folder = dest / "workspace" / "memory"
    folder.mkdir(parents=True, exist_ok=True)
    sources: list[tuple[str, str, bytes, int, list[tuple[int, int, str]]]] = []
    written: list[Path] = []
    for date in sorted(notes):
        text = f"# {date}\n\n" + "\n".join(notes[date])
        path = folder / f"{date}.md"
        path.write_text(text, encoding="utf-8")
        written.append(path)
        numbered = list(enumerate(text.splitlines(), start=1))
        mtime = int(datetime.fromisoformat(date).replace(tzinfo=UTC).timestamp() * 1000)
        sources.append(
            (
                f"memory/{date}.md",
                "memory",
                text.encode(),
                mtime + 20 * 3600_000,
                _chunks(numbered, 320),
            )
        )
    for o in [o for o in outs if o.plan.agent == "main"][:3]:
        said: list[tuple[int, str]] = []
        for line_no, raw in enumerate(o.data.splitlines(), start=1):
            msg = jsonio.loads(raw).get("message")
            if msg and msg["role"] in ("user", "assistant"):
                text = " ".join(b["text"] for b in msg["content"] if b["type"] == "text")
                if text and text != "NO_REPLY":
                    said.append((line_no, f"{msg['role'].capitalize()}: {text}"))
        chunks = _chunks(said, 1600)
        step = max(1, len(chunks) // 8)
        sources.append(
            (f"sessions/{o.file_name}", "sessions", o.data, o.updated_at, chunks[::step][:8])
        )
    texts = [c[2] for s in sources for c in s[4]]
    vectors = embed_many(texts)
    meta = {
        "model": "hash",
        "provider": "memory-context",
        "providerKey": "demo",
        "chunkTokens": 400,
        "chunkOverlap": 80,
        "vectorDims": DIM,
    }
    db_path = dest / "memory" / "main.sqlite"
    db_path.unlink(missing_ok=True)
    with closing(sqlite3.connect(db_path)) as db:
        db.executescript(INDEX_SCHEMA)
        db.execute(
            "INSERT INTO meta VALUES (?, ?)", ("memory_index_meta_v1", jsonio.dumps(meta).decode())
        )
        row = 0
        for rel, source, data, mtime, parts in sources:
            db.execute(
                "INSERT INTO files VALUES (?, ?, ?, ?, ?)",
                (rel, source, _sha(data), mtime, len(data)),
            )
            for start, end, text in parts:
                h = _sha(text.encode())
                emb = jsonio.dumps([round(float(v), 6) for v in vectors[row]]).decode()
                cid = _sha(f"{source}:{rel}:{start}:{end}:{h}:hash".encode())
                db.execute(
                    "INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (cid, rel, source, start, end, h, "hash", text, emb, mtime),
                )
                db.execute(
                    "INSERT OR IGNORE INTO embedding_cache VALUES (?, ?, ?, ?, ?, ?, ?)",
                    ("memory-context", "hash", "demo", h, emb, DIM, mtime),
                )
                row += 1
        db.commit()
    return db_path, written, row


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


INDEX_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files (path TEXT PRIMARY KEY, source TEXT NOT NULL DEFAULT 'memory',
  hash TEXT NOT NULL, mtime INTEGER NOT NULL, size INTEGER NOT NULL);
CREATE TABLE chunks (id TEXT PRIMARY KEY, path TEXT NOT NULL,
  source TEXT NOT NULL DEFAULT 'memory', start_line INTEGER NOT NULL,
  end_line INTEGER NOT NULL, hash TEXT NOT NULL, model TEXT NOT NULL, text TEXT NOT NULL,
  embedding TEXT NOT NULL, updated_at INTEGER NOT NULL);
CREATE TABLE embedding_cache (provider TEXT NOT NULL, model TEXT NOT NULL,
  provider_key TEXT NOT NULL, hash TEXT NOT NULL, embedding TEXT NOT NULL, dims INTEGER,
  updated_at INTEGER NOT NULL, PRIMARY KEY (provider, model, provider_key, hash));
CREATE INDEX idx_chunks_path ON chunks(path);
CREATE INDEX idx_chunks_source ON chunks(source);
"""


def _start_of_day(now: int | None) -> int:
    if now is not None:
        return now
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return int(today.timestamp() * 1000)


def write_demo(
    dest: Path,
    *,
    seed: int = 7,
    now_ms: int | None = None,
    segments: int = 3000,
    force: bool = False,
) -> DemoSummary:
    """Write a demo OpenClaw home under *dest*.

    Parameters
    ----------
    dest
        The folder that plays ``~/.openclaw``; created if missing.
    seed
        Seed of every random choice: the same seed and *now_ms* give identical bytes.
    now_ms
        The demo's "now" in epoch ms; None means the start of the current UTC day.
    segments
        How many distinct, valid segments ``segments.jsonl`` holds.
    force
        Write into a non-empty *dest*, replacing the demo's files (others are left alone).

    Returns
    -------
    DemoSummary
        The paths written and what they hold.

    Raises
    ------
    FileExistsError
        When *dest* is a file, or a non-empty folder and *force* is False.
    """
    dest = Path(dest)
    if dest.exists() and not dest.is_dir():
        raise FileExistsError(f"{dest} exists and is not a folder; the demo needs a folder")
    if dest.exists() and any(dest.iterdir()) and not force:
        raise FileExistsError(
            f"{dest} is not empty; the demo writes only into an empty folder "
            "(pass force=True to write over the demo's files there)"
        )
    now = _start_of_day(now_ms)
    rng = random.Random(seed)
    outs: list[_SessionOut] = []
    note_dates: set[str] = set()
    for plan in PLANS:
        start = now - int(plan.days_ago * DAY_MS) + rng.randint(0, 3600_000)
        outs.append(_Transcript(rng, plan, start, note_dates).build(now))
    transcripts: list[Path] = []
    stores: list[Path] = []
    for agent in ("main", "reviewer"):
        folder = dest / "agents" / agent / "sessions"
        folder.mkdir(parents=True, exist_ok=True)
        mine = [o for o in outs if o.plan.agent == agent]
        for o in mine:
            (folder / o.file_name).write_bytes(o.data)
            # A transcript's mtime is its last write, as the agent would have left it.
            os.utime(folder / o.file_name, ns=(o.updated_at * 1_000_000, o.updated_at * 1_000_000))
            transcripts.append(folder / o.file_name)
        stores.append(_write_sessions_store(folder / "sessions.json", mine, rng))
    config = dest / "openclaw.json"
    config.write_text(CONFIG_TEXT, encoding="utf-8")
    seg = _write_segments(dest / "memory" / "context", outs, rng, now, segments)
    knowledge_file, facts, fact_lines = _write_knowledge(
        dest / "memory" / "context" / "knowledge.jsonl", rng, now
    )
    index, notes, chunks = _write_index(dest, outs)
    return DemoSummary(
        root=dest,
        config=config,
        transcripts=tuple(transcripts),
        session_stores=tuple(stores),
        segments_file=seg.segments_file,
        vectors_file=seg.vectors_file,
        knowledge_file=knowledge_file,
        memory_index=index,
        workspace_notes=tuple(notes),
        agents=2,
        sessions=len(outs),
        messages=sum(o.messages for o in outs),
        compactions=sum(o.compactions for o in outs),
        branches=sum(o.branches for o in outs),
        segments=seg.segments,
        duplicate_lines=seg.duplicates,
        invalid_lines=seg.invalid,
        vectors=seg.vectors,
        facts=facts,
        fact_lines=fact_lines,
        chunks=chunks,
    )
