"""The pinned real agents of the oracle tier, installed from npm into a cache.

pi runs on any Node >= 20; OpenClaw declares Node >= 24, which the ``node``
package on npm ships as a binary. Everything lands outside the repository, in
``MEMLENS_ORACLE_DIR`` (default ``~/.cache/memlens-oracle``), once per version.

Moving a version forward: change the constant below, run
``python -m tests.oracle.agents install`` and then
``pytest tests/oracle -n 0``; every difference is a test failure that names the
field. Update README ("Tested against ...") and ../shared notes with what moved.

    python -m tests.oracle.agents install     # install (or check) all of them
    python -m tests.oracle.agents paths       # print where they are, as JSON
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

PI_VERSION = "0.73.1"
OPENCLAW_VERSION = "2026.9.6"
NODE24_VERSION = "24.21.0"
INSPECTOR_VERSION = "2.12.0"

PI_PACKAGE = "@mariozechner/pi-coding-agent"
INSPECTOR_PACKAGE = "@modelcontextprotocol/inspector"
CLAUDE_CODE_VERSION = "2.1.197"
CLAUDE_CODE_PACKAGE = "@anthropic-ai/claude-code"


class OracleUnavailable(RuntimeError):
    """The tier cannot run here (no node/npm, or npm could not install)."""


def cache_root() -> Path:
    """Where the pinned agents are installed."""
    env = os.environ.get("MEMLENS_ORACLE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "memlens-oracle"


def _npm_install(folder: Path, spec: str, *, path_prefix: Path | None = None) -> None:
    if shutil.which("npm") is None or shutil.which("node") is None:
        raise OracleUnavailable("node and npm are not on PATH")
    folder.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    if path_prefix is not None:
        env["PATH"] = f"{path_prefix}{os.pathsep}{env.get('PATH', '')}"
    try:
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", spec],
            cwd=folder,
            check=True,
            capture_output=True,
            timeout=900,
            env=env,
        )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        out = getattr(exc, "stderr", b"") or b""
        tail = out.decode("utf-8", "replace")[-600:]
        raise OracleUnavailable(f"npm install {spec} failed in {folder}: {tail}") from exc


def _version(pkg: Path) -> str | None:
    try:
        return str(orjson.loads((pkg / "package.json").read_bytes())["version"])
    except (OSError, orjson.JSONDecodeError, KeyError):
        return None


def pi_package() -> Path:
    """The installed pi package folder (installing it first if needed)."""
    root = Path(os.environ.get("MEMLENS_ORACLE_PI") or cache_root() / f"pi-{PI_VERSION}")
    pkg = root / "node_modules" / "@mariozechner" / "pi-coding-agent"
    if _version(pkg) != PI_VERSION:
        _npm_install(root, f"{PI_PACKAGE}@{PI_VERSION}")
    if _version(pkg) != PI_VERSION:
        raise OracleUnavailable(f"{pkg}: not pi {PI_VERSION} after npm install")
    return pkg


def node24() -> Path:
    """A Node 24 binary (the system one when it is 24+, else npm's ``node`` package)."""
    system = shutil.which("node")
    if system:
        done = subprocess.run([system, "--version"], capture_output=True, text=True, check=False)
        major = done.stdout.strip().lstrip("v").split(".")[0]
        if major.isdigit() and int(major) >= 24:
            return Path(system)
    root = cache_root() / "node24"
    binary = root / "node_modules" / ".bin" / "node"
    if not binary.exists():
        _npm_install(root, f"node@{NODE24_VERSION}")
    if not binary.exists():
        raise OracleUnavailable(f"{binary}: missing after npm install node@{NODE24_VERSION}")
    return binary


@dataclass(frozen=True, slots=True)
class OpenClaw:
    """An installed OpenClaw: its package folder and the Node that runs it."""

    package: Path
    node: Path

    @property
    def cli(self) -> list[str]:
        """The command line that runs ``openclaw``."""
        return [str(self.node), str(self.package / "openclaw.mjs")]

    def run(self, script: Path, *args: str, **kw: Any) -> Any:
        """:func:`run_node` with Node 24, the package folder as the first argument."""
        return run_node(script, str(self.package), *args, node=self.node, **kw)

    def env(self, home: Path) -> dict[str, str]:
        """An environment for OpenClaw with its state under *home* and Node 24 first.

        Node keeps the compiled code of OpenClaw's bundle in the oracle cache, as for
        :func:`run_node`: each ``openclaw`` start then loads it ~15% faster.
        """
        env = dict(os.environ)
        env["HOME"] = str(home)
        env["PATH"] = f"{self.node.parent}{os.pathsep}{env.get('PATH', '')}"
        env.setdefault("NODE_COMPILE_CACHE", str(cache_root() / "node-compile-cache"))
        return env


def openclaw() -> OpenClaw:
    """The installed OpenClaw (installing Node 24 and it first if needed)."""
    node = node24()
    root = Path(
        os.environ.get("MEMLENS_ORACLE_OPENCLAW") or cache_root() / f"openclaw-{OPENCLAW_VERSION}"
    )
    pkg = root / "node_modules" / "openclaw"
    if _version(pkg) != OPENCLAW_VERSION:
        _npm_install(root, f"openclaw@{OPENCLAW_VERSION}", path_prefix=node.parent)
    if _version(pkg) != OPENCLAW_VERSION:
        raise OracleUnavailable(f"{pkg}: not openclaw {OPENCLAW_VERSION} after npm install")
    return OpenClaw(pkg, node)


@dataclass(frozen=True, slots=True)
class McpInspector:
    """An installed MCP Inspector (the official MCP client): its package and a Node 22+."""

    package: Path
    node: Path

    @property
    def cli(self) -> list[str]:
        """The command line of the Inspector in CLI mode (``npx @modelcontextprotocol/inspector --cli``)."""
        return [str(self.node), str(self.package / "clients" / "launcher" / "build" / "index.js"),
                "--cli"]  # fmt: skip


def mcp_inspector() -> McpInspector:
    """The installed MCP Inspector (installing it first if needed); it needs Node >= 22.19."""
    node = node24()
    root = cache_root() / f"mcp-inspector-{INSPECTOR_VERSION}"
    pkg = root / "node_modules" / "@modelcontextprotocol" / "inspector"
    if _version(pkg) != INSPECTOR_VERSION:
        _npm_install(root, f"{INSPECTOR_PACKAGE}@{INSPECTOR_VERSION}", path_prefix=node.parent)
    if _version(pkg) != INSPECTOR_VERSION:
        raise OracleUnavailable(f"{pkg}: not {INSPECTOR_PACKAGE} {INSPECTOR_VERSION} after install")
    return McpInspector(pkg, node)


def claude_code() -> Path:
    """The pinned ``claude`` binary (Claude Code, an MCP host), installing it if needed."""
    root = cache_root() / f"claude-code-{CLAUDE_CODE_VERSION}"
    binary = root / "node_modules" / ".bin" / "claude"
    pkg = root / "node_modules" / "@anthropic-ai" / "claude-code"
    if _version(pkg) != CLAUDE_CODE_VERSION or not binary.exists():
        _npm_install(root, f"{CLAUDE_CODE_PACKAGE}@{CLAUDE_CODE_VERSION}")
    if _version(pkg) != CLAUDE_CODE_VERSION or not binary.exists():
        raise OracleUnavailable(f"{binary}: not Claude Code {CLAUDE_CODE_VERSION}")
    return binary


def run_node(
    script: Path,
    *args: str,
    node: str | Path = "node",
    stdin: Any = None,
    env: dict[str, str] | None = None,
    timeout: float = 300,
) -> Any:
    """Run ``node SCRIPT ARGS...`` (JSON on stdin when given) and parse its JSON stdout.

    The standard library parses it: an agent's JSON may hold lone surrogates, which
    orjson refuses. A failure raises with the script's stderr. Node keeps the compiled
    code of the agents' modules in the oracle cache (``NODE_COMPILE_CACHE``): loading
    OpenClaw's bundle is most of a short run.
    """
    env = dict(os.environ if env is None else env)
    env.setdefault("NODE_COMPILE_CACHE", str(cache_root() / "node-compile-cache"))
    done = subprocess.run(
        [str(node), str(script), *args],
        input=None if stdin is None else json.dumps(stdin).encode(),
        env=env,
        capture_output=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        tail = done.stderr.decode("utf-8", "replace")[-3000:]
        raise RuntimeError(f"{script.name} failed ({done.returncode}): {tail}")
    return json.loads(done.stdout)


def main(argv: list[str]) -> int:
    """``install`` or ``paths``."""
    if not argv or argv[0] not in {"install", "paths"}:
        print(__doc__)
        return 2
    try:
        pi = pi_package()
        oc = openclaw()
        inspector = mcp_inspector()
        claude = claude_code()
    except OracleUnavailable as exc:
        print(f"oracle agents unavailable: {exc}", file=sys.stderr)
        return 1
    info = {
        "pi": {"version": PI_VERSION, "package": str(pi)},
        "openclaw": {"version": OPENCLAW_VERSION, "package": str(oc.package)},
        "node24": str(oc.node),
        "mcp-inspector": {"version": INSPECTOR_VERSION, "package": str(inspector.package)},
        "claude-code": {"version": CLAUDE_CODE_VERSION, "binary": str(claude)},
    }
    sys.stdout.write(orjson.dumps(info, option=orjson.OPT_INDENT_2).decode() + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
