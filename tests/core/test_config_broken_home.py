"""A broken openclaw.json stops only what needs it, and always names file, line, column."""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

import orjson
import pytest

from core.cli.main import run_cli
from core.dataset.load import load_dataset
from core.openclaw.config import MemoryContextConfig
from core.store.knowledge import load_knowledge
from core.store.segments import append_segments, make_segment

if TYPE_CHECKING:
    from pathlib import Path

BROKEN = """\
// line 1
{
  agents: {
    defaults: {
      contextTokens: 200000,
      memoryContext: {
        hardCapTokens: 4000 5000,
      },
    },
  },
}
"""  # line 7, column 29: a second number where ',' or '}' belongs


@pytest.fixture
def home(fixtures_dir: Path, tmp_path: Path) -> Path:
    h = tmp_path / "home"
    sessions = h / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    shutil.copy(fixtures_dir / "before-compaction.jsonl", sessions)
    store = h / "memory" / "context"
    store.mkdir(parents=True)
    segments = [make_segment("s1", "user", f"question {i}", timestamp=4 * 10**12) for i in range(3)]
    append_segments(store / "segments.jsonl", segments)
    load_knowledge(store / "knowledge.jsonl").add("decision", "Use orjson")
    (h / "openclaw.json").write_text(BROKEN, encoding="utf-8")
    return h


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = run_cli(list(args))
    out = capsys.readouterr()
    assert "bug in memlens" not in out.out + out.err
    return code, out.out, out.err


def test_the_data_set_still_loads_with_the_config_problem(home: Path) -> None:
    data = load_dataset(home)
    assert len(data.sessions) == 1 and data.segments is not None and data.knowledge is not None
    assert len(data.segments.segments) == 3 and data.knowledge.counts()["active"] == 1
    assert data.config is None
    (problem,) = [p for p in data.problems if p.file.endswith("openclaw.json")]
    assert (problem.file, problem.line) == (str(home / "openclaw.json"), 7)
    assert problem.message.startswith("invalid JSON5 at line 7, column 29: expected ','")


def test_info_exits_0_and_names_file_line_and_column(capsys, home: Path) -> None:
    code, out, err = run(capsys, "info", str(home))
    assert code == 0, err
    assert f"{home / 'openclaw.json'}:7: invalid JSON5 at line 7, column 29" in out
    assert "sessions: 1" in out
    code, out, _ = run(capsys, "info", str(home), "--json")
    info = orjson.loads(out)
    assert len(info["sessions"]) == 1 and info["segments"] == 3
    (problem,) = [p for p in info["problems"] if p["file"].endswith("openclaw.json")]
    assert problem["line"] == 7 and "column 29" in problem["message"]


@pytest.mark.parametrize("command", ["sessions", "facts", "segments"])
def test_listings_are_not_stopped(capsys, home: Path, command: str) -> None:
    code, out, err = run(capsys, command, str(home), "--json")
    assert code == 0, err
    payload = orjson.loads(out)
    listed = {"sessions": "sessions", "facts": "facts", "segments": "segments"}[command]
    assert len(payload[listed]) >= 1


@pytest.mark.parametrize("command", ["budget", "plan"])
def test_what_needs_the_config_fails_naming_file_line_and_column(
    capsys, home: Path, command: str
) -> None:
    session = next((home / "agents" / "main" / "sessions").glob("*.jsonl"))
    code, out, err = run(capsys, command, str(session))
    assert code == 1 and out == ""
    assert err.startswith(f"memlens: error: {home / 'openclaw.json'}:7: ")
    assert "line 7, column 29" in err and err.count("\n") == 1


def test_out_of_range_numbers_keep_the_defaults_and_commands_run(capsys, home: Path) -> None:
    (home / "openclaw.json").write_text(
        "{\n  agents: { defaults: {\n    memoryContext: { maxSegments: 1e400 },\n"
        "    contextTokens: " + "9" * 5000 + ",\n  } },\n}\n",
        encoding="utf-8",
    )
    data = load_dataset(home)
    assert data.config is not None
    assert data.config.memory_context == MemoryContextConfig()
    assert data.config.context_tokens is None
    lines = sorted({(p.line, p.severity) for p in data.problems if p.file.endswith(".json")})
    assert lines == [(3, "error"), (3, "warning"), (4, "error"), (4, "warning")]
    code, out, err = run(capsys, "info", str(home))
    assert code == 0, err
    assert "openclaw.json:3: agents.defaults.memoryContext.maxSegments:" in out
    session = next((home / "agents" / "main" / "sessions").glob("*.jsonl"))
    code, out, err = run(capsys, "budget", str(session))
    assert code == 0, err


def test_100000_levels_deep_config_still_opens_the_home(capsys, home: Path) -> None:
    (home / "openclaw.json").write_text("{\n  a: " + "[" * 100_000, encoding="utf-8")
    code, out, err = run(capsys, "info", str(home))
    assert code == 0, err
    assert f"{home / 'openclaw.json'}:2: invalid JSON5 at line 2, column " in out
    assert "nested too deeply" in out
    code, out, err = run(capsys, "sessions", str(home))
    assert code == 0, err


@pytest.mark.parametrize("command", ["sessions", "facts", "segments"])
def test_listings_mention_the_config_problem(capsys, home: Path, command: str) -> None:
    code, _out, err = run(capsys, command, str(home))
    assert code == 0
    assert f"{home / 'openclaw.json'}:7: invalid JSON5 at line 7, column 29" in err
