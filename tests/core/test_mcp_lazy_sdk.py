"""``memlens mcp`` imports the SDK's server without its client and FastMCP, and loses nothing.

Run in a fresh interpreter each (the test process has the SDK imported whole already).
"""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

SCRIPT = """
import sys
from core.mcp.lazy_sdk import defer_sdk_init
defer_sdk_init()
import core.mcp.server
heavy = [m for m in ("mcp.server.fastmcp", "mcp.client.session", "uvicorn", "starlette",
                    "httpx._client", "jsonschema.validators", "referencing")
         if m in sys.modules]
print("heavy", heavy)
from core.mcp.schemas import INPUT_SCHEMAS
from core.mcp.server import InputCheck
check = InputCheck(INPUT_SCHEMAS)
passed = check.error("memory_search", {"query": "tea", "maxResults": 3})
print("valid", passed, "jsonschema.validators" in sys.modules)  # no jsonschema for them
print("refused", check.error("memory_search", {"query": "tea", "bogus": 1}))
import httpx, jsonschema  # the deferred libraries, whole when asked
print("libraries", httpx.Client.__name__, jsonschema.ValidationError.__name__)
from mcp import ClientSession, McpError  # the package's own names: its __init__ runs now
from mcp.server import FastMCP, Server
import mcp.types as types
print("whole", ClientSession.__name__, McpError.__name__, FastMCP.__name__, Server.__name__,
      types.Tool.__name__)
print("again", defer_sdk_init() is None and sys.modules["mcp"].ClientSession is ClientSession)
"""


def _run(script: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    return out.stdout.splitlines()


def test_the_server_imports_without_the_sdk_client_and_fastmcp() -> None:
    heavy, valid, refused, libraries, whole, again = _run(SCRIPT)
    assert heavy == "heavy []"
    assert valid == "valid None False"
    assert refused == (
        "refused Input validation error: Additional properties are not allowed"
        " ('bogus' was unexpected)"
    )
    assert libraries == "libraries Client ValidationError"
    assert whole == "whole ClientSession McpError FastMCP Server Tool"
    assert again == "again True"


def test_an_imported_sdk_is_left_whole() -> None:
    (line,) = _run(
        "import sys, mcp\n"
        "from core.mcp.lazy_sdk import defer_package_init\n"
        "print(defer_package_init('mcp'), sys.modules['mcp'] is mcp, hasattr(mcp, 'ClientSession'))"
    )
    assert line == "False True True"


def test_a_deferred_package_runs_its_init_once_for_threads_asking_together(
    tmp_path: Path,
) -> None:
    package = tmp_path / "slowpkg"
    package.mkdir()
    (package / "__init__.py").write_text(
        "import sys, time\n"
        "sys.slowpkg_runs = getattr(sys, 'slowpkg_runs', 0) + 1\n"
        "time.sleep(0.3)\n"
        "VALUE = 7\n"
    )
    (line,) = _run(
        "import sys, threading\n"
        f"sys.path.insert(0, {str(tmp_path)!r})\n"
        "from core.mcp.lazy_sdk import defer_package_init\n"
        "print(defer_package_init('slowpkg'), end=' ')\n"
        "import slowpkg\n"
        "got = []\n"
        "threads = [threading.Thread(target=lambda: got.append(slowpkg.VALUE)) for _ in range(4)]\n"
        "[t.start() for t in threads]; [t.join() for t in threads]\n"
        "print(got, sys.slowpkg_runs)"
    )
    assert line == "True [7, 7, 7, 7] 1"


GC_SCRIPT = """
import argparse, gc, sys, threading
import core.mcp.server as server
from core.cli.mcp import cmd_mcp

# the warm-up (which pauses the collector itself while it parses, core.io.jsonio.gc_paused)
# held until the state at `done` is read
checked = threading.Event()
warm = server._Opener._warm
server._Opener._warm = staticmethod(lambda tools: (checked.wait(60), warm(tools)))

def serve(data):
    paused = not gc.isenabled()
    opener = server._Opener(data)
    assert opener.done.wait(60)  # opened (or not): calls may start
    print(paused, gc.isenabled(), gc.get_freeze_count() > 0, opener.error is None)
    checked.set()
    assert opener.warmed.wait(60)
    return 0

server.serve_stdio = serve
cmd_mcp(argparse.Namespace(data=sys.argv[1]))
"""


def test_the_collector_is_paused_for_the_start_and_resumed_once_data_is_open(
    tmp_path: Path,
) -> None:
    """``memlens mcp`` starts with the garbage collector off (40-50 ms of collections
    saved); the opener turns it on again, what the start's imports built frozen, as DATA
    is opened (before the sessions load) and when it could not be opened."""
    from tests.demo_copy import demo_copy

    data = demo_copy(tmp_path / "demo", segments=30)
    for path, opened in ((data, "True"), (tmp_path / "missing", "False")):
        out = subprocess.run(
            [sys.executable, "-c", GC_SCRIPT, str(path)],
            capture_output=True, text=True, timeout=120, check=True,
        )  # fmt: skip
        assert out.stdout.split() == ["True", "True", "True", opened], out.stderr
