"""The fuzz tier (issue 13, item 6): 0 tracebacks, 0 unexpected errors, 0 errors
without a file name, 0 input bytes changed, over mutated fixtures and stores.

CI runs a small budget; ``pytest tests/fuzz --fuzz-budget 5000`` is a long run.
A failure prints the seed and case: ``python -m tests.fuzz.harness --seed S --case N
--budget 1 -v`` replays it.
"""

from __future__ import annotations

import os
import sys

import pytest

from tests.fuzz.harness import FIXTURES, fuzz

CI_BUDGET = 16
"""Cases in CI: about 15 s of CPU (a long run is `--fuzz-budget`)."""


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs, sockets and SIGALRM are POSIX")
def test_damaged_files_never_break_a_read_command(tmp_path, fuzz_budget, request):
    if not FIXTURES.is_dir():
        pytest.fail(f"shared fixtures not found at {FIXTURES}")
    seed = request.config.getoption("--fuzz-seed")
    if seed is None:
        seed = int(os.environ.get("MEMLENS_FUZZ_SEED", "20261125"))
    report = fuzz(fuzz_budget or CI_BUDGET, seed, tmp_path)
    print(report.summary())
    assert report.cases == (fuzz_budget or CI_BUDGET)
    assert report.clean, report.summary() + "\n" + "\n".join(report.failures[:20])
