"""Agent homes for the first-run screen: counts only, a time budget, never the real home."""

from __future__ import annotations

import itertools
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from core.dataset import home_scan
from core.dataset.home_scan import HomeSummary, format_size, known_homes, scan_home, scan_homes
from core.dataset.load import load_dataset
from core.demo.build import write_demo
from core.io.problems import FormatError

if TYPE_CHECKING:
    from core.dataset.discovery import Discovery

NOW_MS = 1_760_000_000_000
PI_PROJECT = "--home-dev-shop--"


@pytest.fixture(scope="module")
def demo_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("demo") / ".openclaw"
    write_demo(path, now_ms=NOW_MS, segments=300)
    return path


def _openclaw(home: Path, demo_home: Path) -> Path:
    dest = home / ".openclaw"
    shutil.copytree(demo_home, dest)
    return dest


def _pi(home: Path, fixtures_dir: Path) -> Path:
    sessions = home / ".pi" / "agent" / "sessions"
    project = sessions / PI_PROJECT
    project.mkdir(parents=True)
    for f in sorted(fixtures_dir.glob("*.jsonl")):
        shutil.copy(f, project / f.name)
    return sessions


def _size(paths: list[Path]) -> int:
    return sum(p.stat().st_size for p in paths)


def test_known_homes_are_under_the_given_home(tmp_path: Path) -> None:
    assert known_homes(tmp_path) == [
        ("OpenClaw", tmp_path / ".openclaw"),
        ("pi", tmp_path / ".pi" / "agent" / "sessions"),
    ]


def test_both_homes_counted_as_a_full_load_counts_them(
    tmp_path: Path, demo_home: Path, fixtures_dir: Path
) -> None:
    oc = _openclaw(tmp_path, demo_home)
    pi = _pi(tmp_path, fixtures_dir)
    homes = scan_homes(tmp_path)
    assert [(h.label, h.path, h.kind) for h in homes] == [
        ("OpenClaw", oc, "openclaw-home"),
        ("pi", pi, "pi-sessions"),
    ]
    claw, pis = homes

    data = load_dataset(oc)
    assert claw.agents == len({s.agent for s in data.summaries}) == 2
    assert claw.sessions == len(data.sessions) == 12
    assert data.segments is not None
    assert claw.segments == data.segments.lines == 303
    assert data.knowledge is not None
    active = sum(1 for f in data.knowledge.facts.values() if f.status == "active")
    assert claw.facts == active > 0
    read = [
        *oc.glob("agents/*/sessions/*.jsonl"),
        *oc.glob("agents/*/sessions/sessions.json"),
        *(oc / "memory" / "context").iterdir(),
        *oc.glob("memory/*.sqlite"),
        oc / "openclaw.json",
    ]
    assert claw.size == _size(read)  # the workspace notes are not counted
    transcripts = list(oc.glob("agents/*/sessions/*.jsonl"))
    assert claw.newest == max(p.stat().st_mtime for p in transcripts)
    assert claw.complete and claw.problem is None and claw.openable

    fixtures = sorted(fixtures_dir.glob("*.jsonl"))
    assert (pis.agents, pis.sessions, pis.segments, pis.facts) == (1, len(fixtures), 0, 0)
    assert pis.size == _size(fixtures)
    assert pis.complete and pis.openable


def test_describe_names_what_each_home_holds(
    tmp_path: Path, demo_home: Path, fixtures_dir: Path
) -> None:
    _openclaw(tmp_path, demo_home)
    _pi(tmp_path, fixtures_dir)
    claw, pis = scan_homes(tmp_path)
    assert claw.describe() == (
        f"2 agents · 12 sessions · 303 segments · {claw.facts} facts · {format_size(claw.size)}"
    )
    assert pis.describe() == f"1 project · 2 sessions · {format_size(pis.size)}"


def test_missing_homes_are_left_out(tmp_path: Path, fixtures_dir: Path) -> None:
    assert scan_homes(tmp_path) == []
    assert scan_home(tmp_path / ".openclaw", label="OpenClaw") is None
    _pi(tmp_path, fixtures_dir)
    assert [h.label for h in scan_homes(tmp_path)] == ["pi"]


def test_default_home_is_path_home(
    tmp_path: Path, fixtures_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert Path.home() == tmp_path
    _pi(tmp_path, fixtures_dir)
    assert [h.path for h in scan_homes()] == [tmp_path / ".pi" / "agent" / "sessions"]


def test_an_empty_pi_folder_is_listed_with_a_problem(tmp_path: Path) -> None:
    (tmp_path / ".pi" / "agent" / "sessions").mkdir(parents=True)
    (home,) = scan_homes(tmp_path)
    assert home.label == "pi" and home.kind is None and not home.openable
    assert home.problem == "nothing to open yet: no sessions or memory here"
    assert home.describe() == home.problem


def test_a_file_in_place_of_a_home_is_a_problem(tmp_path: Path) -> None:
    (tmp_path / ".openclaw").write_text("not a folder\n")
    (home,) = scan_homes(tmp_path)
    assert home.kind is None and home.problem is not None
    assert "session header" in home.problem


def test_an_unreadable_home_is_a_problem(
    tmp_path: Path, demo_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    oc = _openclaw(tmp_path, demo_home)
    real_access = os.access
    monkeypatch.setattr(
        "core.dataset.discovery.os.access",
        lambda p, mode: False if Path(p) == oc else real_access(p, mode),
    )
    (home,) = scan_homes(tmp_path)
    assert home.problem == "folder is not readable" and not home.openable


def test_an_os_error_while_discovering_is_a_problem(
    tmp_path: Path, demo_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _openclaw(tmp_path, demo_home)

    def denied(path: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(home_scan, "discover", denied)
    (home,) = scan_homes(tmp_path)
    assert home.problem == "cannot read: Permission denied"


def test_unreadable_store_files_count_as_nothing(
    tmp_path: Path, demo_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    oc = _openclaw(tmp_path, demo_home)
    store = oc / "memory" / "context"
    (store / "segments.jsonl").unlink()
    (store / "segments.jsonl").mkdir()  # open() fails with IsADirectoryError
    (store / "knowledge.jsonl").unlink()
    (store / "knowledge.jsonl").mkdir()
    (home,) = scan_homes(tmp_path)
    assert (home.segments, home.facts) == (0, 0)
    assert home.complete and home.sessions == 12


def test_fact_replay_counts_only_active_facts(tmp_path: Path) -> None:
    store = tmp_path / ".openclaw" / "memory" / "context"
    store.mkdir(parents=True)
    lines = [
        '{"id":"a","type":"decision","content":"use uv"}',
        '{"id":"b","type":"config","content":"port 8080"}',
        '{"id":"c","type":"issue","content":"flaky test"}',
        '{"id":"a","type":"decision","content":"use uv 0.5"}',  # an edit: still one fact
        '{"id":"b","type":"config","content":"port 8080","_deleted":true}',
        '{"id":"c","type":"issue","content":"flaky test","supersededBy":"d"}',
        '{"id":"d","type":"issue","content":"fixed flaky test"}',
        "{not json",
        '{"id":"e","type":"task_state"}',  # no content: skipped, as the agent does
        "[1, 2]",
        "",
        '{"id":"f","type":"task","content":"ship"}',  # no newline at the end
    ]
    (store / "knowledge.jsonl").write_text("\n".join(lines))
    (store / "segments.jsonl").write_bytes(b'{"id":"s1"}\n{"id":"s2"}\n{"id":"s3"}')
    (home,) = scan_homes(tmp_path)
    assert home.kind == "openclaw-home"
    assert home.facts == 3  # a, d, f
    assert home.segments == 3
    assert home.agents == home.sessions == 0


def test_budget_cuts_the_counts_short(tmp_path: Path, demo_home: Path) -> None:
    _openclaw(tmp_path, demo_home)
    ticks = itertools.count()
    (home,) = scan_homes(tmp_path, budget_s=3, clock=lambda: float(next(ticks)))
    assert not home.complete
    assert home.kind == "openclaw-home" and home.openable
    full = scan_home(tmp_path / ".openclaw", label="OpenClaw")
    assert full is not None and full.complete
    assert home.size < full.size
    assert home.segments <= full.segments and home.facts <= full.facts
    assert home.describe().startswith("2 agents · 12 sessions · ")  # listing is complete
    assert home.describe().endswith("+") and "+" not in full.describe()


def test_one_budget_for_all_homes(
    tmp_path: Path, demo_home: Path, fixtures_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _openclaw(tmp_path, demo_home)
    _pi(tmp_path, fixtures_dir)
    now = [0.0]
    real = home_scan._summarise

    def slow(label: str, found: Discovery, budget: home_scan._Budget) -> HomeSummary:
        out = real(label, found, budget)
        now[0] += 10  # the first home used up the whole budget
        return out

    monkeypatch.setattr(home_scan, "_summarise", slow)
    claw, pis = scan_homes(tmp_path, budget_s=5, clock=lambda: now[0])
    assert claw.complete and claw.sessions == 12
    assert not pis.complete and pis.sessions == 2  # still listed; sizes not counted
    assert (pis.size, pis.newest) == (0, None)


def test_cancelled_stops_counting(tmp_path: Path, demo_home: Path) -> None:
    _openclaw(tmp_path, demo_home)
    (home,) = scan_homes(tmp_path, cancelled=lambda: True)
    assert not home.complete
    assert (home.size, home.segments, home.facts) == (0, 0, 0)
    assert home.sessions == 12  # listing is discovery's, and cheap


def test_discover_format_error_message_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".openclaw").mkdir()

    def broken(path: object) -> None:
        raise FormatError(str(path), "openclaw.json: bad JSON")

    monkeypatch.setattr(home_scan, "discover", broken)
    (home,) = scan_homes(tmp_path)
    assert home.problem == "openclaw.json: bad JSON"


@pytest.mark.parametrize(
    ("size", "text"),
    [
        (0, "0 B"),
        (1023, "1023 B"),
        (1024, "1.0 KB"),
        (int(4.2 * 1024 * 1024), "4.2 MB"),
        (3 * 1024**3, "3.0 GB"),
        (5 * 1024**4, "5120.0 GB"),
    ],
)
def test_format_size(size: int, text: str) -> None:
    assert format_size(size) == text


def test_singular_and_plural() -> None:
    one = HomeSummary("OpenClaw", Path("/x"), "openclaw-home", 1, 1, 1, 1, 10)
    assert one.describe() == "1 agent · 1 session · 1 segment · 1 fact · 10 B"


def test_cli_homes_summarises_given_and_known_homes(tmp_path, demo_home, capsys, monkeypatch):
    from core.cli.main import run_cli

    from .build import run_json

    home = _openclaw(tmp_path, demo_home)
    given = run_json(capsys, "homes", str(home), str(tmp_path / "nowhere"))
    [row] = given["homes"]
    assert row["path"] == str(home) and row["kind"] == "openclaw-home"
    assert row["sessions"] > 0 and row["facts"] > 0 and row["problem"] is None
    assert given["missing"] == [str(tmp_path / "nowhere")]

    monkeypatch.setenv("HOME", str(tmp_path))
    known = run_json(capsys, "homes")
    assert [(r["label"], r["path"]) for r in known["homes"]] == [("OpenClaw", str(home))]

    empty = tmp_path / "empty"
    empty.mkdir()
    assert run_cli(["homes", str(empty)]) == 1  # nothing usable: exit 1, the problem shown
    assert "nothing to open yet" in capsys.readouterr().out
