"""Test set-up: Qt offscreen before anything imports it; shared fixture paths."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from tests.llm_server import server  # noqa: F401  (a fixture for every test)

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT.parent / "shared" / "fixtures" / "pi-v1"


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    if not FIXTURES.is_dir():
        pytest.fail(f"shared fixtures not found at {FIXTURES} (shared/ must sit beside the repo)")
    return FIXTURES
