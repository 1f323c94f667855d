"""Fixtures of the oracle tier: the pinned real agents.

In CI (``CI=true``) an agent that cannot be installed is a failure; elsewhere
the tests that need it are skipped with the reason (shown by ``-ra``).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from tests.oracle import agents

if TYPE_CHECKING:
    from pathlib import Path


def _unavailable(exc: agents.OracleUnavailable) -> None:
    if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
        pytest.fail(f"oracle tier: {exc}")
    pytest.skip(f"oracle tier skipped: {exc}")


@pytest.fixture(scope="session")
def pi_package() -> Path:
    """pi's package folder (``.../@mariozechner/pi-coding-agent``), pinned."""
    try:
        return agents.pi_package()
    except agents.OracleUnavailable as exc:
        _unavailable(exc)
        raise


@pytest.fixture(scope="session")
def openclaw() -> agents.OpenClaw:
    """OpenClaw's package folder and a Node 24 to run it, pinned."""
    try:
        return agents.openclaw()
    except agents.OracleUnavailable as exc:
        _unavailable(exc)
        raise


@pytest.fixture(scope="session")
def inspector() -> agents.McpInspector:
    """The official MCP Inspector (its CLI mode) and a Node to run it, pinned."""
    try:
        return agents.mcp_inspector()
    except agents.OracleUnavailable as exc:
        _unavailable(exc)
        raise


@pytest.fixture(scope="session")
def claude() -> Path:
    """The ``claude`` binary of Claude Code, an MCP host, pinned."""
    try:
        return agents.claude_code()
    except agents.OracleUnavailable as exc:
        _unavailable(exc)
        raise
