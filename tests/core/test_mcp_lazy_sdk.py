"""``memlens mcp`` imports the SDK's server without its client and FastMCP, and loses nothing.

Run in a fresh interpreter each (the test process has the SDK imported whole already).
"""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import sys
from core.mcp.lazy_sdk import defer_sdk_init
defer_sdk_init()
import core.mcp.server
heavy = [m for m in ("mcp.server.fastmcp", "mcp.client.session", "uvicorn", "starlette")
         if m in sys.modules]
print("heavy", heavy)
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
    heavy, whole, again = _run(SCRIPT)
    assert heavy == "heavy []"
    assert whole == "whole ClientSession McpError FastMCP Server Tool"
    assert again == "again True"


def test_an_imported_sdk_is_left_whole() -> None:
    (line,) = _run(
        "import sys, mcp\n"
        "from core.mcp.lazy_sdk import defer_package_init\n"
        "print(defer_package_init('mcp'), sys.modules['mcp'] is mcp, hasattr(mcp, 'ClientSession'))"
    )
    assert line == "False True True"
