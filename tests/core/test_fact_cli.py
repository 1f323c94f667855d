"""``memlens fact ...``: append-only fact edits from the command line."""

from __future__ import annotations

from typing import TYPE_CHECKING

import orjson
import pytest

from core.cli.main import run_cli
from core.demo.build import write_demo
from core.store.knowledge import load_knowledge

if TYPE_CHECKING:
    from pathlib import Path

NOW = 1_760_000_000_000
KEY = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6"


@pytest.fixture(scope="module")
def demo_home(tmp_path_factory):
    home = tmp_path_factory.mktemp("demo") / "home"
    write_demo(home, now_ms=NOW, segments=300)
    return home


@pytest.fixture
def home(demo_home, tmp_path):
    """A fresh copy of the demo's OpenClaw home for each test (only the knowledge file changes)."""
    import shutil

    dest = tmp_path / "home"
    shutil.copytree(demo_home, dest)
    return dest


def kfile(home: Path) -> Path:
    return home / "memory" / "context" / "knowledge.jsonl"


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = run_cli(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def cli_json(capsys, *argv: str) -> dict:
    code, out, err = cli(capsys, *argv, "--json")
    assert code == 0, err
    return orjson.loads(out)


class Appends:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.data = path.read_bytes()

    def step(self) -> bytes:
        new = self.path.read_bytes()
        assert new.startswith(self.data) and len(new) > len(self.data)
        added, self.data = new[len(self.data) :], new
        return added

    def unchanged(self) -> None:
        assert self.path.read_bytes() == self.data


def test_every_action_appends_and_names_the_id(home, capsys):
    files = Appends(kfile(home))
    added = cli_json(capsys, "fact", "add", str(home), f"deploy key {KEY}", "--type", "config",
                     "--context", "ops")  # fmt: skip
    new_id = added["id"]
    raw = files.step()
    assert KEY.encode() not in raw  # redacted before it was written
    rec = orjson.loads(raw)
    assert rec["id"] == new_id and rec["type"] == "config" and rec["context"] == "ops"
    first = added["lines"][0]
    assert first["offset"] == len(files.data) - len(raw)
    assert first["line"] == files.data.count(b"\n")
    assert first["record"] == rec

    # DATA may also be the memory-context folder; ids may be unique prefixes.
    folder = str(kfile(home).parent)
    edited = cli_json(capsys, "fact", "edit", folder, new_id[:8], "--content", "deploy key rotated")
    assert edited["id"] == new_id and edited["operation"].startswith("UPDATE")
    assert orjson.loads(files.step())["content"] == "deploy key rotated"

    sup = cli_json(capsys, "fact", "supersede", str(home), new_id, "deploy key lives in vault",
                   "--type", "decision")  # fmt: skip
    lines = [orjson.loads(x) for x in files.step().splitlines()]
    assert sup["id"] == lines[0]["id"] != new_id and sup["new_ids"] == [sup["id"]]
    assert lines[1]["id"] == new_id and lines[1]["supersededBy"] == sup["id"]
    assert [ln["line"] for ln in sup["lines"]] == [
        files.data.count(b"\n") - 1,
        files.data.count(b"\n"),
    ]

    deleted = cli_json(capsys, "fact", "delete", str(home), sup["id"], new_id)
    assert deleted["operation"] == "DELETE of 2 facts" and len(deleted["lines"]) == 2
    assert all(orjson.loads(x)["_deleted"] for x in files.step().splitlines())

    restored = cli_json(capsys, "fact", "restore", str(home), new_id)
    assert restored["id"] == new_id
    assert "_deleted" not in orjson.loads(files.step())

    log = load_knowledge(kfile(home))
    assert log.facts[new_id].status == "active" and log.facts[sup["id"]].status == "deleted"
    assert log.facts[new_id].content == "deploy key rotated"


def test_text_output_and_dry_run(home, capsys):
    files = Appends(kfile(home))
    fid = next(iter(load_knowledge(kfile(home)).facts))
    code, out, _ = cli(capsys, "fact", "edit", str(home), fid, "--type", "issue", "--dry-run")
    assert code == 0 and out.startswith("would append 1 fact line to ")
    assert orjson.loads(out.splitlines()[1])["type"] == "issue"
    files.unchanged()
    code, out, _ = cli(capsys, "fact", "delete", str(home), fid)
    assert code == 0 and out.splitlines()[-1] == fid and "DELETE of" in out
    files.step()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("add", "{home}", "x", "--type", "opinion"), "unknown fact type 'opinion'"),
        (("add", "{home}", "x"), "--type is required"),
        (("edit", "{home}", "nope", "--content", "x"), "no fact with id 'nope'"),
        (("edit", "{home}", "{fid}"), "nothing to change"),
        (("delete", "{home}", "{deleted}"), "is already deleted"),
        (("edit", "{home}", "{deleted}", "--content", "x"), "is deleted: restore it"),
        (("supersede", "{home}", "{deleted}", "x"), "is deleted: restore it"),
        (("restore", "{home}", "{fid}"), "is active: nothing to restore"),
        (("delete", "{home}", "{fid}", "{fid}"), "named twice"),
        (("add", "{empty}", "x", "--type", "config"), "no memory-context store"),
        (("add", "{missing}", "x", "--type", "config"), "no such file or folder"),
    ],
)
def test_errors_are_one_line_and_write_nothing(home, tmp_path, capsys, argv, message):
    log = load_knowledge(kfile(home))
    fid = next(f.id for f in log.facts.values() if f.status == "active")
    deleted = next(f.id for f in log.facts.values() if f.status == "deleted")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("hi")
    names = {"home": str(home), "fid": fid, "deleted": deleted,
             "empty": str(tmp_path / "empty"), "missing": str(tmp_path / "missing")}  # fmt: skip
    files = Appends(kfile(home))
    code, out, err = cli(capsys, "fact", *(a.format(**names) for a in argv))
    assert code == 1 and out == ""
    assert message in err and err.startswith("memlens: error: ") and err.count("\n") == 1
    files.unchanged()


def test_add_creates_the_file_in_a_store_without_one(tmp_path, capsys):
    store = tmp_path / "context"
    store.mkdir()
    (store / "segments.jsonl").write_bytes(b"")
    done = cli_json(capsys, "fact", "add", str(store), "first fact", "--type", "task_state")
    log = load_knowledge(store / "knowledge.jsonl")
    assert log.facts[done["id"]].content == "first fact"
    assert done["lines"][0]["line"] == 1 and done["lines"][0]["offset"] == 0


def test_fact_is_a_known_command():
    from core.cli.parser import COMMANDS, build_parser

    assert "fact" in COMMANDS
    help_text = build_parser().format_help()
    assert "fact" in help_text
