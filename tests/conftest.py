"""Test set-up: Qt offscreen before anything imports it; shared fixture paths."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
if "MEMLENS_CACHE_DIR" not in os.environ:  # never fill the user's real cache from tests
    import tempfile

    os.environ["MEMLENS_CACHE_DIR"] = tempfile.mkdtemp(prefix="memlens-test-cache-")
    os.environ["MEMLENS_DATA_DIR"] = tempfile.mkdtemp(prefix="memlens-test-data-")
if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) and "PYTHONPYCACHEPREFIX" not in os.environ:
    # The tests' Python subprocesses (the CLI, the app, helpers: hundreds of them) would
    # each compile memlens again. They keep the bytecode in a cache of their own instead,
    # outside the repo as PYTHONDONTWRITEBYTECODE wants, kept between runs like the
    # oracle's agents (a prefix hides the installed packages' own __pycache__).
    # This process is not affected.
    os.environ["PYTHONPYCACHEPREFIX"] = str(Path.home() / ".cache" / "memlens-test-pycache")

from tests.llm_server import server  # noqa: F401  (a fixture for every test)

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT.parent / "shared" / "fixtures" / "pi-v1"


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    if not FIXTURES.is_dir():
        pytest.fail(f"shared fixtures not found at {FIXTURES} (shared/ must sit beside the repo)")
    return FIXTURES


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--fuzz-budget",
        type=int,
        default=None,
        help="cases of the fuzz tier (tests/fuzz; default: a small CI budget)",
    )
    parser.addoption("--fuzz-seed", type=int, default=None, help="seed of the fuzz tier")


@pytest.fixture(scope="session")
def fuzz_budget(request: pytest.FixtureRequest) -> int | None:
    """``--fuzz-budget N``, or None for the CI default."""
    return request.config.getoption("--fuzz-budget")  # type: ignore[no-any-return]


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: one worker more than there are cores (``--maxprocesses`` caps it).

    Many tests wait (subprocesses of the real agents, the soak writer, Qt timers): a
    third worker on two cores fills those waits. Measured on the 2-core VM: 609 s with
    two workers, 589 s with three.
    """
    return (os.cpu_count() or 1) + 1


LONGEST_FIRST = (
    "tests/test_frozen.py",
    "tests/oracle/test_openclaw_context.py",
    "tests/test_screenshots.py",
    "tests/oracle/test_openclaw_memory_search.py",
    "tests/fuzz/test_fuzz.py",
    "tests/core/test_backup_kill.py",
    "tests/oracle/test_mcp_openclaw_client.py",
    "tests/soak/test_soak.py",
)
"""The files that take longest (30-90 s each on 2 cores, ``--durations``), longest first."""


def _start_order(item: pytest.Item) -> tuple[int, int]:
    path = item.nodeid.split("::", 1)[0]
    if path in LONGEST_FIRST:
        return (0, LONGEST_FIRST.index(path))
    return (1 if item.get_closest_marker("slow") else 2, 0)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Run the longest files first, then the other files marked slow (a stable sort: files
    stay whole, order kept).

    The workers then start on the longest work, and no worker is left alone with a
    two-minute file at the end of the run: the suite's wall time is its busiest worker's.
    """
    items.sort(key=_start_order)
