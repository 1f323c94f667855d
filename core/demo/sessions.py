"""Generating one demo pi v3 transcript, turn by turn, as a real agent would write it.

:class:`TranscriptWriter` plays a session of :data:`~core.demo.plans.PLANS`: prompts,
thinking, tool calls and results, memory flushes, compactions at the threshold and
an optional branch, tracking the context the model sees.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from core.demo.code_text import LINT_OUTPUT, code_file, grep_output, ident, snippet, test_output
from core.demo.plans import (
    DAY_MS,
    HOME,
    KEEP_RECENT,
    PRICES,
    THRESHOLD,
    SessionPlan,
    ToolCall,
    iso,
    rng_uuid,
)
from core.demo.projects import PROJECTS, Project
from core.demo.text import (
    EXPLAIN_TEXTS,
    FINAL_TEXTS,
    FLUSH_PROMPT,
    REVIEW_OPENERS,
    REVIEW_PROMPTS,
    REVIEW_TEXTS,
    STEP_TEXTS,
    THINKING,
    USER_OPENERS,
    USER_PROMPTS,
    compaction_summary,
    fill,
    memory_note,
)
from core.io import jsonio
from core.transcript.normalize import normalize_message
from core.transcript.tokens import estimate_message

if TYPE_CHECKING:
    import random


@dataclass(slots=True)
class GeneratedSession:
    """One generated transcript and what the stores need to know about it."""

    plan: SessionPlan
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


class TranscriptWriter:
    """Builds one pi v3 transcript, tracking the context the model sees."""

    def __init__(
        self, rng: random.Random, plan: SessionPlan, start_ms: int, note_dates: set[str]
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

    def _step(self, calls: list[ToolCall], action: str = "", say: float = 0.6) -> None:
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

    def _read(self, path: str) -> ToolCall:
        self.read_files.append(path)
        text = code_file(self.rng, self.p, self._read_chars())
        return "read", {"path": self._abs(path)}, text, False

    def _bash(self, command: str, output: str, code: int = 0) -> ToolCall:
        text = output if code == 0 else f"{output}\n\nCommand exited with code {code}"
        return "bash", {"command": command, "timeout": 300}, text, code != 0

    def _edit(self, path: str, fail: bool = False) -> ToolCall:
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

    def _tests(self, fail: bool) -> ToolCall:
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

    def build(self, now_ms: int) -> GeneratedSession:
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
        return GeneratedSession(
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
