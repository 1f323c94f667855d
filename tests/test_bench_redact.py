"""The redaction benchmark runs at a tiny size (no timing asserts)."""

from __future__ import annotations

import subprocess
import sys

import orjson

from tests.conftest import ROOT


def test_bench_redact_tiny():
    done = subprocess.run(
        [sys.executable, "-m", "bench.bench_redact", "--bytes", "20000", "--runs", "1"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    )
    result = orjson.loads(done.stdout)
    assert result["benchmark"] == "redact" and result["source"] == "synthetic"
    assert result["chars"] >= 20000 and result["masks"] > 0
    assert result["p50_ms"] >= 0 and result["mb_per_s"] > 0
    assert set(result["adversarial_ms"]) >= {"dashes", "begin_without_end", "markers"}


def test_bench_redact_on_a_file(tmp_path):
    session = tmp_path / "session.jsonl"
    session.write_text('{"text": "export OPENAI_API_KEY=sk-FAKEfakeFAKEfake0123456789"}\n')
    done = subprocess.run(
        [sys.executable, "-m", "bench.bench_redact", "--file", str(session), "--runs", "1"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    )
    result = orjson.loads(done.stdout)
    assert result["source"] == str(session) and result["masks"] == 1
