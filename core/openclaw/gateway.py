"""Compaction of a current OpenClaw session through OpenClaw's own path.

memlens never writes into OpenClaw's SQLite database (2026.9+). When the user asks
for a compaction of such a session, memlens runs OpenClaw's CLI,
``openclaw sessions compact KEY --json``, which asks the running gateway to compact
(an LLM summary, or with ``--max-lines`` a trim to the last lines); the gateway
appends the compaction to the transcript itself (docs/notes/openclaw-sqlite.md §7).
There is no local path: without a reachable gateway the command fails, and memlens
says so and writes nothing.

The CLI finds the gateway and its credentials in OpenClaw's own configuration;
memlens passes the state folder (``OPENCLAW_STATE_DIR``) and, only when given, a
URL. A token is never put on the command line (other users can read it there):
OpenClaw reads ``OPENCLAW_GATEWAY_TOKEN`` from the environment, or its config.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.io import jsonio
from core.safety.redact import redact

if TYPE_CHECKING:
    from core.transcript.model import Session

ENV_OPENCLAW = "MEMLENS_OPENCLAW"
"""Environment variable naming the ``openclaw`` command (a path, or ``node /path/openclaw.mjs``)."""
DEFAULT_TIMEOUT_S = 300.0


class GatewayError(Exception):
    """OpenClaw's compaction could not run or failed; nothing was written by memlens."""


@dataclass(frozen=True, slots=True)
class GatewayCompaction:
    """What ``openclaw sessions compact --json`` answered."""

    key: str
    compacted: bool
    result: dict[str, Any] = field(default_factory=dict)
    """OpenClaw's ``result``: ``summary``, ``firstKeptEntryId``, ``tokensBefore``..."""
    reply: dict[str, Any] = field(default_factory=dict)
    """The whole reply."""
    command: tuple[str, ...] = ()

    def describe(self) -> str:
        """One line for a person."""
        if not self.compacted:
            reason = self.reply.get("reason") or self.result.get("reason") or "nothing to compact"
            return f"OpenClaw did not compact {self.key}: {reason}"
        before = self.result.get("tokensBefore")
        after = self.result.get("tokensAfter")
        tokens = (
            f", {before:,} -> {after:,} tokens"
            if isinstance(before, int) and isinstance(after, int)
            else ""
        )
        return f"OpenClaw compacted {self.key}{tokens}"


def openclaw_command(explicit: str | None = None) -> list[str]:
    """The command that runs OpenClaw's CLI.

    *explicit*, else ``$MEMLENS_OPENCLAW``, else ``openclaw`` on the PATH. A value
    with spaces is split (``node /opt/openclaw/openclaw.mjs``).

    Raises
    ------
    GatewayError
        When none is found.
    """
    value = explicit or os.environ.get(ENV_OPENCLAW)
    if value:
        parts = value.split()
        if len(parts) == 1 and not (Path(parts[0]).exists() or shutil.which(parts[0])):
            raise GatewayError(f"{parts[0]}: no such command (the openclaw CLI)")
        return parts
    found = shutil.which("openclaw")
    if found is None:
        raise GatewayError(
            "openclaw is not on the PATH: install OpenClaw, or name its command with "
            f"--openclaw or ${ENV_OPENCLAW}"
        )
    return [found]


def compact_command(
    key: str,
    *,
    agent: str | None = None,
    openclaw: list[str],
    url: str | None = None,
    max_lines: int | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> list[str]:
    """The argv of ``openclaw sessions compact`` (no secret on it)."""
    argv = [*openclaw, "sessions", "compact", key, "--json"]
    argv += ["--timeout", str(int(timeout_s * 1000))]
    if agent:
        argv += ["--agent", agent]
    if url:
        argv += ["--url", url]
    if max_lines is not None:
        argv += ["--max-lines", str(max_lines)]
    return argv


def compact_via_gateway(
    key: str,
    *,
    state_dir: str | os.PathLike[str],
    agent: str | None = None,
    openclaw: str | None = None,
    url: str | None = None,
    max_lines: int | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    env: dict[str, str] | None = None,
) -> GatewayCompaction:
    """Run ``openclaw sessions compact KEY --json`` for the home at *state_dir*.

    Raises
    ------
    GatewayError
        When OpenClaw cannot be run, the gateway is unreachable, the session is
        unknown, or the answer is not OpenClaw's JSON; the message says which,
        with OpenClaw's own words (secrets redacted).
    """
    argv = compact_command(
        key,
        agent=agent,
        openclaw=openclaw_command(openclaw),
        url=url,
        max_lines=max_lines,
        timeout_s=timeout_s,
    )
    run_env = dict(os.environ if env is None else env)
    run_env["OPENCLAW_STATE_DIR"] = os.fspath(state_dir)
    try:
        done = subprocess.run(
            argv,
            env=run_env,
            capture_output=True,
            timeout=timeout_s + 30,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except FileNotFoundError as exc:
        raise GatewayError(f"cannot run {argv[0]}: {exc.strerror or exc}") from exc
    except subprocess.TimeoutExpired as exc:
        raise GatewayError(
            f"openclaw sessions compact did not answer in {timeout_s + 30:.0f} s"
        ) from exc
    reply = _reply(done.stdout)
    if done.returncode != 0 or reply is None or reply.get("ok") is False:
        raise GatewayError(_failure(done, reply))
    result = reply.get("result")
    return GatewayCompaction(
        key=key,
        compacted=bool(reply.get("compacted")),
        result=result if isinstance(result, dict) else {},
        reply=reply,
        command=tuple(argv),
    )


def _reply(stdout: bytes) -> dict[str, Any] | None:
    text = stdout.decode("utf-8", "replace").strip()
    if not text:
        return None
    # the JSON is the last top-level object printed (OpenClaw may log before it)
    start = text.rfind("\n{")
    candidates = [text, text[start + 1 :]] if start >= 0 else [text]
    for candidate in candidates:
        try:
            value = jsonio.loads(candidate)
        except jsonio.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _failure(done: subprocess.CompletedProcess[bytes], reply: dict[str, Any] | None) -> str:
    message = ""
    if reply is not None:
        error = reply.get("error")
        if isinstance(error, dict):
            message = str(error.get("message") or error)
        elif error:
            message = str(error)
    if not message:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        message = lines[-1] if lines else f"exit status {done.returncode}"
    return redact(f"OpenClaw's compaction failed: {message}")


def compact_session(
    session: Session,
    *,
    openclaw: str | None = None,
    url: str | None = None,
    max_lines: int | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> GatewayCompaction:
    """Have OpenClaw compact *session*, one read from an agent database.

    The session key and the home come from the database
    (``<home>/agents/<id>/agent/openclaw-agent.sqlite``).

    Raises
    ------
    GatewayError
        As :func:`compact_via_gateway`, and when the session is not in a database
        inside an OpenClaw home or no session key names it.
    """
    from core.io.problems import FormatError
    from core.openclaw.agentdb import AgentDb, home_of_database

    if session.db is None:
        raise GatewayError(
            f"{session.path}: OpenClaw compacts sessions of its agent database (2026.9+); "
            "this transcript file is compacted by memlens itself"
        )
    home = home_of_database(session.db)
    if home is None:
        raise GatewayError(
            f"{session.db}: not inside an OpenClaw home (agents/<id>/agent/), so OpenClaw "
            "cannot find it"
        )
    try:
        with AgentDb(session.db) as db:
            agent = db.agent
            key = next((r.key for r in db.sessions() if r.session_id == session.id), None)
    except FormatError as exc:
        raise GatewayError(str(exc)) from exc
    if key is None:
        raise GatewayError(f"{session.path}: no session key names this session")
    return compact_via_gateway(
        key,
        state_dir=home,
        agent=agent,
        openclaw=openclaw,
        url=url,
        max_lines=max_lines,
        timeout_s=timeout_s,
    )
