"""README's CLI reference is exactly what docs/gen_cli_reference.py builds from the parsers."""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from core.cli import parser as cli

if TYPE_CHECKING:
    from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "docs" / "gen_cli_reference.py"


@pytest.fixture(scope="module")
def gen() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_cli_reference", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_readme_block_is_what_the_generator_builds_now(gen: ModuleType) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert gen.current_block(readme) == gen.render(), (
        "README.md's CLI reference is out of date: run python docs/gen_cli_reference.py"
    )


def test_block_sits_in_the_command_line_section(gen: ModuleType) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Command line\n", 1)[1].split("\n## ", 1)[0]
    assert gen.START in section and gen.END in section


def test_every_command_and_option_is_documented(gen: ModuleType) -> None:
    block = gen.render()
    for name in cli.COMMANDS:
        if name not in ("fact", "memory"):  # those two are listed by subcommand
            assert f"### `memlens {name}`" in block
            assert f"(#memlens-{name})" in block
    for action in ("add", "edit", "supersede", "delete", "restore"):
        assert f"### `memlens fact {action}`" in block
    for action in ("search", "status", "files", "chunks"):
        assert f"### `memlens memory {action}`" in block
        assert f"(#memlens-memory-{action})" in block
    parser = cli.build_parser()
    for command in gen.commands(parser):
        for action in command.parser._actions:
            for option in action.option_strings:
                if option not in ("-h", "--help", "--json", "--pretty"):
                    assert f"`{option}" in block, (command.name, option)
    assert "`--json` (machine-readable JSON output)" in block


def test_usage_lines(gen: ModuleType) -> None:
    block = gen.render()
    assert "memlens show SESSION [--at ENTRY] [--data DIR] [--full]\n" in block
    assert "memlens eval DATA --labels FILE [options]\n" in block  # required stays, rest folds
    assert "memlens fact delete DATA ID [ID ...] [--dry-run]\n" in block
    assert "memlens fact ACTION\n" in block
    assert "| `--limit N` | newest N (0: all) | `20` |" in block
    assert "| `--labels FILE` | required; JSONL:" in block


def test_a_new_option_changes_the_reference(gen: ModuleType) -> None:
    parser = cli.build_parser()
    before = gen.render(parser)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    sub.choices["info"].add_argument("--deep", action="store_true", help="look | deeper")
    after = gen.render(parser)
    assert after != before
    assert "memlens info PATH [--deep]\n" in after
    assert "| `--deep` | look \\| deeper |  |" in after


def test_replace_block_and_markers(gen: ModuleType) -> None:
    text = f"intro\n{gen.START}\nold\n{gen.END}\nafter\n"
    assert gen.replace_block(text, "new\n") == f"intro\n{gen.START}\nnew\n{gen.END}\nafter\n"
    assert gen.current_block(gen.replace_block(text, "new\n")) == "new\n"
    with pytest.raises(ValueError, match="expected one"):
        gen.replace_block("no markers", "x\n")
    with pytest.raises(ValueError, match="comes before"):
        gen.replace_block(f"{gen.END}\n{gen.START}\n", "x\n")


def test_check_mode_and_rewrite(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(
        "# x\n\n<!-- cli-reference:start -->\nOUTDATED-BLOCK\n<!-- cli-reference:end -->\n\ntail\n"
    )

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, str(SCRIPT), "--readme", str(readme), *args],
            capture_output=True,
            text=True,
            check=False,
        )

    stale = run("--check")
    assert stale.returncode == 1 and "out of date" in stale.stderr
    assert "OUTDATED-BLOCK" in readme.read_text()  # --check writes nothing
    assert run().returncode == 0
    text = readme.read_text()
    assert (
        "OUTDATED-BLOCK" not in text and "### `memlens info`" in text and text.endswith("\ntail\n")
    )
    assert run("--check").returncode == 0
    readme.write_text("no markers\n")
    broken = run("--check")
    assert broken.returncode == 2 and "expected one" in broken.stderr
