"""The soak test's options and isolation.

``pytest --soak-seconds 300 tests/soak`` runs the long soak (the agent writes for five
minutes) and holds the GUI stall limit too; without the option the short CI version
runs. The option is registered here, so name ``tests/soak`` on the command line when
passing it.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--soak-seconds",
        type=float,
        default=None,
        help="run the long soak for this many seconds (also asserts the 100 ms stall limit)",
    )
    parser.addoption("--soak-rate", type=float, default=None, help="soak writes per second")
    parser.addoption("--soak-seed", type=int, default=None, help="seed of the soak writer")


@pytest.fixture
def soak_options(request: pytest.FixtureRequest) -> dict[str, float | int | None]:
    """``--soak-seconds``, ``--soak-rate`` and ``--soak-seed`` (None when not given)."""
    get = request.config.getoption
    return {
        "seconds": get("--soak-seconds", default=None),
        "rate": get("--soak-rate", default=None),
        "seed": get("--soak-seed", default=None),
    }


@pytest.fixture(autouse=True)
def isolated(tmp_path_factory, monkeypatch):
    """QSettings and HOME in temporary folders (as tests/app does)."""
    folder = tmp_path_factory.mktemp("settings")
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(folder))
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    return folder
