"""Drive the real pi (npm, pinned) non-interactively against :mod:`tests.oracle.fake_llm`.

pi runs from its package (``node dist/cli.js``) with an isolated agent dir
(``PI_CODING_AGENT_DIR``) holding a ``models.json`` with one OpenAI-compatible
provider on 127.0.0.1 and a ``settings.json`` with small compaction settings,
``PI_OFFLINE=1`` and telemetry off. Print mode (``-p``) runs one prompt; RPC
mode (``--mode rpc``) takes several commands (prompt, set_model,
set_thinking_level, set_session_name, compact, fork) in one process. The helper
scripts ``pi_entries.mjs`` and ``pi_session.mjs`` call pi's own exported code.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from tests.oracle.agents import run_node

HERE = Path(__file__).parent
PROVIDER = "fake"
MODELS = ("fake-small", "fake-large")
"""Two models of the fake provider, so that a model change is a real change."""
COMPACTION_PREFIX = (
    "The conversation history before this point was compacted into the following summary:"
    "\n\n<summary>\n"
)
COMPACTION_SUFFIX = "\n</summary>"
BRANCH_PREFIX = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
BRANCH_SUFFIX = "</summary>"
"""How pi's ``convertToLlm`` wraps summaries into user messages (``dist/core/messages.js``)."""
OPENAI_ROLE = {
    "user": "user",
    "assistant": "assistant",
    "toolResult": "tool",
    "bashExecution": "user",
    "custom": "user",
    "branchSummary": "user",
    "compactionSummary": "user",
}
"""The role pi sends on the OpenAI chat API for each of its message roles."""


@dataclass(frozen=True, slots=True)
class PiHome:
    """An isolated pi: its agent dir, session dir and working directory."""

    pkg: Path
    agent_dir: Path
    session_dir: Path
    cwd: Path

    def env(self) -> dict[str, str]:
        """The environment pi runs in: only the isolated dirs, offline."""
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.endswith("_API_KEY")
            and not k.startswith(("PI_", "OPENAI", "ANTHROPIC"))
            and k.lower() not in ("http_proxy", "https_proxy", "all_proxy")
        }
        env.update(
            {
                "PI_CODING_AGENT_DIR": str(self.agent_dir),
                "PI_CODING_AGENT_SESSION_DIR": str(self.session_dir),
                "PI_OFFLINE": "1",
                "PI_TELEMETRY": "0",
                "HOME": str(self.agent_dir.parent),
                "NO_COLOR": "1",
                # pi's CLI installs undici's EnvHttpProxyAgent: keep loopback direct.
                "NO_PROXY": "127.0.0.1,localhost",
                "no_proxy": "127.0.0.1,localhost",
            }
        )
        return env

    def sessions(self) -> list[Path]:
        """Every session file pi wrote, sorted by name."""
        return sorted(self.session_dir.rglob("*.jsonl"))


def make_home(
    pkg: Path,
    root: Path,
    base_url: str,
    *,
    context_window: int = 4000,
    reserve_tokens: int = 1000,
    keep_recent_tokens: int = 200,
    compaction: bool = True,
) -> PiHome:
    """Write an isolated pi setup under *root* pointing at *base_url*.

    Auto-compaction fires after a turn whose usage exceeds
    ``context_window - reserve_tokens``.
    """
    agent_dir = root / "home" / ".pi" / "agent"
    session_dir = root / "sessions"
    cwd = root / "work"
    for d in (agent_dir, session_dir, cwd):
        d.mkdir(parents=True, exist_ok=True)
    model = {
        "reasoning": False,
        "input": ["text"],
        "contextWindow": context_window,
        "maxTokens": 1000,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
    }
    models = {
        "providers": {
            PROVIDER: {
                "baseUrl": base_url,
                "api": "openai-completions",
                "apiKey": "test-key",
                "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
                "models": [{"id": m, "name": f"Fake {m}", **model} for m in MODELS],
            }
        }
    }
    settings = {
        "defaultProvider": PROVIDER,
        "defaultModel": MODELS[0],
        "quietStartup": True,
        "enableInstallTelemetry": False,
        "compaction": {
            "enabled": compaction,
            "reserveTokens": reserve_tokens,
            "keepRecentTokens": keep_recent_tokens,
        },
        "retry": {"enabled": False},
    }
    (agent_dir / "models.json").write_text(json.dumps(models, indent=2))
    (agent_dir / "settings.json").write_text(json.dumps(settings, indent=2))
    return PiHome(pkg, agent_dir, session_dir, cwd)


def cli(home: PiHome) -> list[str]:
    """The command line that runs pi's CLI from its package."""
    return ["node", str(home.pkg / "dist" / "cli.js")]


COMMON = ["--no-extensions", "--no-skills", "--no-prompt-templates", "--no-context-files"]


def run_print(
    home: PiHome,
    prompt: str,
    *,
    session: Path | None = None,
    model: str | None = None,
    extra: list[str] | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """Run one prompt in print mode (``-p``); resume *session* when given."""
    args = [*cli(home), "-p", *COMMON]
    if session is not None:
        args += ["--session", str(session)]
    if model is not None:
        args += ["--model", f"{PROVIDER}/{model}"]
    args += [*(extra or []), prompt]
    done = subprocess.run(
        args,
        cwd=home.cwd,
        env=home.env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"pi -p failed ({done.returncode}): {done.stderr}\n{done.stdout}")
    return done


class Rpc:
    """pi in RPC mode: send a command, read events and responses (JSON lines).

    Use as a context manager; :meth:`call` sends a command and waits for its
    response, :meth:`prompt` also waits for the ``agent_end`` event and for any
    auto-compaction it triggered to end.
    """

    def __init__(
        self, home: PiHome, *, session: Path | None = None, extra: list[str] | None = None
    ) -> None:
        args = [*cli(home), "--mode", "rpc", *COMMON]
        if session is not None:
            args += ["--session", str(session)]
        args += extra or []
        self.proc = subprocess.Popen(
            args,
            cwd=home.cwd,
            env=home.env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.events: list[dict[str, Any]] = []
        self._cond = threading.Condition()
        self._stderr: list[bytes] = []
        self._closed = False
        self._n = 0
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            line = line.rstrip(b"\r\n")
            if not line:
                continue
            try:
                obj = orjson.loads(line)
            except orjson.JSONDecodeError:
                obj = {"type": "_unparsed", "line": line.decode(errors="replace")}
            with self._cond:
                self.events.append(obj)
                self._cond.notify_all()
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._stderr.append(line)

    def wait_for(self, start: int, pred: Any, timeout: float = 60) -> dict[str, Any]:
        """The first event from position *start* on that *pred* accepts (waits for it)."""
        return self._wait_for(start, pred, timeout)

    def _wait_for(self, start: int, pred: Any, timeout: float) -> dict[str, Any]:
        with self._cond:
            pos = start
            while True:
                while pos < len(self.events):
                    if pred(self.events[pos]):
                        return self.events[pos]
                    pos += 1
                if self._closed:
                    raise RuntimeError(f"pi rpc exited: {b''.join(self._stderr).decode()}")
                if not self._cond.wait(timeout):
                    raise TimeoutError(
                        f"pi rpc: no answer in {timeout}s; last events "
                        f"{self.events[-5:]!r}; stderr {b''.join(self._stderr).decode()}"
                    )

    def send(self, command: dict[str, Any]) -> str:
        """Send *command* with a fresh id; return the id."""
        self._n += 1
        cid = f"req-{self._n}"
        assert self.proc.stdin is not None
        self.proc.stdin.write(orjson.dumps({**command, "id": cid}) + b"\n")
        self.proc.stdin.flush()
        return cid

    def call(self, command: dict[str, Any], timeout: float = 60) -> dict[str, Any]:
        """Send *command* and return its response; raise when it failed."""
        with self._cond:
            start = len(self.events)
        cid = self.send(command)
        resp = self._wait_for(
            start, lambda e: e.get("type") == "response" and e.get("id") == cid, timeout
        )
        if not resp.get("success"):
            raise RuntimeError(f"pi rpc {command['type']} failed: {resp}")
        return resp

    def prompt(self, message: str, timeout: float = 60) -> list[dict[str, Any]]:
        """Send a prompt and wait until the agent is idle again; return its events."""
        with self._cond:
            start = len(self.events)
        self.call({"type": "prompt", "message": message}, timeout)
        self._wait_for(start, lambda e: e.get("type") == "agent_end", timeout)
        # Auto-compaction runs after agent_end: wait until pi is idle, then for its end.
        deadline = time.monotonic() + timeout
        while True:
            state = self.call({"type": "get_state"}, timeout)["data"]
            if not state.get("isStreaming") and not state.get("isCompacting"):
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"pi rpc: still busy after {timeout}s: {state}")
            time.sleep(0.05)
        with self._cond:
            started = any(e.get("type") == "compaction_start" for e in self.events[start:])
        if started:
            self._wait_for(start, lambda e: e.get("type") == "compaction_end", timeout)
        with self._cond:
            return list(self.events[start:])

    def state(self) -> dict[str, Any]:
        """pi's ``get_state`` data (session file, model, ...)."""
        return dict(self.call({"type": "get_state"})["data"])

    def close(self) -> None:
        """Close stdin and wait for pi to exit."""
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def __enter__(self) -> Rpc:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def node_json(script: str, *args: str, timeout: float = 120) -> Any:
    """Run ``node tests/oracle/<script> args...`` and parse its JSON stdout."""
    return run_node(HERE / script, *args, timeout=timeout)


def pi_entries(pkg: Path, transcript: Path) -> dict[str, Any]:
    """pi's own view of *transcript*: its parsed entries and, per entry id, its context."""
    return dict(node_json("pi_entries.mjs", str(pkg), str(transcript)))


def pi_messages(pkg: Path, transcript: Path) -> dict[str, Any]:
    """Every message the entries of *transcript* put in context, with pi's estimate."""
    return dict(node_json("pi_entries.mjs", str(pkg), str(transcript), "messages"))


def pi_leaf(pkg: Path, transcript: Path) -> dict[str, Any]:
    """pi's parsed entries and the context at the leaf only (for long files)."""
    return dict(node_json("pi_entries.mjs", str(pkg), str(transcript), "leaf"))


def pi_session_ops(pkg: Path, spec: dict[str, Any], workdir: Path) -> dict[str, Any]:
    """Run pi's own SessionManager calls (see ``pi_session.mjs``); return its answer."""
    workdir.mkdir(parents=True, exist_ok=True)
    ops = workdir / f"ops-{len(list(workdir.glob('ops-*.json')))}.json"
    # The standard library, not orjson: it escapes lone surrogates, which orjson refuses.
    ops.write_text(json.dumps(spec))
    return dict(node_json("pi_session.mjs", str(pkg), str(ops)))


def shape(message: dict[str, Any]) -> dict[str, Any]:
    """The fields of a pi message description (``pi_entries.mjs``) memlens must match."""
    return {
        "role": message["role"],
        "text": message["text"],
        "toolCalls": message["toolCalls"],
        "toolCallId": message["toolCallId"],
        "isError": bool(message["isError"]) if message["role"] == "toolResult" else None,
        "tokens": message["tokens"],
    }


def memlens_shape(item: Any) -> dict[str, Any]:
    """The same description of a memlens ``ContextItem``."""
    m = item.message
    return {
        "role": m.role,
        "text": m.text(),
        "toolCalls": [b.tool_id for b in m.tool_calls()],
        "toolCallId": m.tool_call_id or None,
        "isError": m.is_error if m.role == "toolResult" else None,
        "tokens": item.tokens,
    }


def replay_mismatches(session: Any, pi: dict[str, Any]) -> list[str]:
    """Entries where memlens's replayed context differs from pi's ``buildSessionContext``.

    *session* is memlens's loaded session, *pi* the output of :func:`pi_entries`.
    Empty when every entry's context matches message for message.
    """
    from core.transcript import context_at

    out: list[str] = []
    mine_ids = [e.id for e in session.entries]
    pi_ids = [e["id"] for e in pi["entries"]]
    if mine_ids != pi_ids:
        out.append(f"entry ids differ: memlens {mine_ids} pi {pi_ids}")
    for entry_id, theirs in pi["contexts"].items():
        if entry_id not in session.by_id:
            continue
        mine = [memlens_shape(i) for i in context_at(session, entry_id)]
        want = [shape(m) for m in theirs]
        if mine != want:
            detail = [
                f"  #{n}: memlens {a!r}\n       pi      {b!r}"
                for n, (a, b) in enumerate(zip(mine, want, strict=False))
                if a != b
            ]
            out.append(
                f"context at {entry_id}: memlens {len(mine)} messages, pi {len(want)}\n"
                + "\n".join(detail[:5])
            )
    return out


def llm_text(message: dict[str, Any]) -> str:
    """The text of one message of an OpenAI chat request (string or text parts)."""
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if p.get("type") == "text")
    return content or ""


def expected_roles(items: list[Any]) -> list[str]:
    """The OpenAI roles pi sends for memlens's replayed *items* (failed turns are not sent)."""
    return [
        OPENAI_ROLE[i.message.role]
        for i in items
        if not (i.message.role == "assistant" and i.message.stop_reason in ("error", "aborted"))
    ]
