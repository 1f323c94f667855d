"""CHANGELOG.md is kept, and the version comes from one place (core.__version__)."""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import re
import tomllib
from pathlib import Path

import pytest

import core

ROOT = Path(__file__).resolve().parent.parent
HEADING = re.compile(r"^## \[(?P<name>[^\]]+)\](?: - (?P<date>\d{4}-\d{2}-\d{2}))?\s*$", re.M)
VERSION = re.compile(r"^\d+\.\d+\.\d+(?:[-.]?(?:a|b|rc|dev)\d*)?$")


def sections(text: str) -> list[tuple[str, str | None, str]]:
    """(name, date, body) of every ``## [name] - date`` section, top first."""
    found = list(HEADING.finditer(text))
    out = []
    for i, m in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(text)
        out.append((m["name"], m["date"], text[m.end() : end].strip()))
    return out


def latest_release(text: str) -> str | None:
    """The version of the newest release heading, or None before the first release."""
    return next((name for name, _, _ in sections(text) if name != "Unreleased"), None)


def problems(text: str, version: str) -> list[str]:
    """What is wrong with a changelog for a package at *version* (empty when fine)."""
    out: list[str] = []
    if not text.startswith("# Changelog\n"):
        out.append("the first line is not '# Changelog'")
    secs = sections(text)
    if not secs:
        return [*out, "no '## [Unreleased]' or '## [X.Y.Z] - YYYY-MM-DD' section"]
    other = [
        line for line in text.splitlines() if line.startswith("## ") and not HEADING.match(line)
    ]
    out += [f"malformed section heading {line!r}" for line in other]
    names = [name for name, _, _ in secs]
    if names.count("Unreleased") > 1 or ("Unreleased" in names and names[0] != "Unreleased"):
        out.append("'Unreleased' must be the single top section")
    top_name, _, top_body = secs[0]
    if not top_body:
        out.append(f"the top section [{top_name}] is empty")
    dates: list[dt.date] = []
    for name, date, _ in secs:
        if name == "Unreleased":
            if date:
                out.append("[Unreleased] has no date")
            continue
        if not VERSION.match(name):
            out.append(f"[{name}] is not a version")
        if date is None:
            out.append(f"[{name}] has no release date")
            continue
        try:
            dates.append(dt.date.fromisoformat(date))
        except ValueError:
            out.append(f"[{name}] has a bad date {date}")
    if dates != sorted(dates, reverse=True):
        out.append("releases are not newest first")
    latest = latest_release(text)
    if latest is not None and latest != version:
        out.append(f"the latest release [{latest}] is not the package version {version}")
    return out


def test_changelog_is_well_formed_and_matches_the_version() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert problems(text, core.__version__) == []
    name, _, body = sections(text)[0]
    assert name == "Unreleased" or name == core.__version__
    assert "### " in body  # grouped by kind of change (Added, Changed, Fixed...)


@pytest.mark.parametrize(
    ("text", "wanted"),
    [
        ("# Changelog\n\nnothing\n", "no '## [Unreleased]'"),
        ("# Changelog\n\n## [Unreleased]\n\n## [0.1.0] - 2026-01-02\n- a\n", "is empty"),
        ("# Changelog\n\n## [0.2.0] - 2026-01-02\n- a\n", "is not the package version 0.1.0"),
        ("# Changelog\n\n## [0.1.0]\n- a\n", "has no release date"),
        ("# Changelog\n\n## [0.1.0] - 2026-13-40\n- a\n", "bad date"),
        ("# Changelog\n\n## Unreleased\n- a\n", "no '## [Unreleased]'"),
        ("# Changelog\n\n## [Unreleased]\n- a\n## Notes\n", "malformed section heading"),
        (
            "# Changelog\n\n## [0.1.0] - 2026-01-01\n- a\n## [Unreleased]\n- b\n",
            "single top section",
        ),
        (
            "# Changelog\n\n## [0.1.0] - 2025-01-01\n- a\n## [0.0.9] - 2026-01-01\n- b\n",
            "newest first",
        ),
    ],
)
def test_bad_changelogs_are_caught(text: str, wanted: str) -> None:
    assert any(wanted in p for p in problems(text, "0.1.0")), problems(text, "0.1.0")


def test_good_changelogs_pass() -> None:
    unreleased = "# Changelog\n\n## [Unreleased]\n\n### Added\n- a\n"
    assert problems(unreleased, "0.1.0") == []
    released = unreleased + "\n## [0.1.0] - 2026-11-22\n\n### Added\n- b\n"
    assert problems(released, "0.1.0") == []
    assert latest_release(released) == "0.1.0"
    assert latest_release(unreleased) is None


def test_version_is_read_from_core() -> None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in meta["project"]
    assert "version" in meta["project"]["dynamic"]
    assert meta["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "core.__version__"}
    assert VERSION.match(core.__version__)


def test_installed_version_is_core_version() -> None:
    # The editable install's metadata is built from core.__version__ (pip install -e .).
    assert importlib.metadata.version("memlens") == core.__version__
