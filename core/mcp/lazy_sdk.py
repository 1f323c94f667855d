"""A quick ``memlens mcp`` start: the SDK's server modules without its packages' ``__init__``.

``import mcp.types`` first runs ``mcp/__init__.py``, which imports the SDK's client,
and ``mcp.server.lowlevel`` runs ``mcp/server/__init__.py``, which imports FastMCP
(uvicorn, starlette, sse-starlette, httpx): a quarter of a second on a 2-core machine
that ``memlens mcp`` never uses, and an MCP host waits for its first answer.
:func:`defer_package_init` puts the package in ``sys.modules`` with its path but not
its ``__init__`` run: its submodules import as usual, and the first name asked of the
package itself (``from mcp import ClientSession``) runs the real ``__init__`` then,
so nothing that needs it goes without (PEP 562's module ``__getattr__``).

The garbage collector is paused for the start too (:func:`pause_collector`, then
:func:`resume_collector` once DATA is open): the collections the imports set off cost
more than any other part of the start memlens controls.
"""

from __future__ import annotations

import gc
import importlib.util
import sys
import threading
from typing import Any

SDK_PACKAGES = ("mcp", "mcp.server")
"""The packages whose ``__init__`` the server defers, outermost first."""

LIBRARIES = ("httpx", "jsonschema")
"""Packages the SDK's server modules import and a warm server seldom uses, deferred too
(0.18 s of the import): ``httpx`` names a timeout's status code and serves remote
embedding providers; ``jsonschema`` explains refused arguments (the server checks the
others itself: :class:`core.mcp.server.InputCheck`)."""


def defer_package_init(name: str) -> bool:
    """Make *name* importable without running its ``__init__`` yet; False if it can't.

    Only before the package is imported (a process that imported it keeps it whole).
    """
    if name in sys.modules:
        return False
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return False
    module = importlib.util.module_from_spec(spec)
    loader = spec.loader
    lock = threading.RLock()  # (the __init__ itself may ask the module for a name)
    started: list[bool] = []

    def __getattr__(attr: str) -> Any:  # PEP 562: asked for a name the module lacks
        # the real __init__, once, in this module (its submodules already imported stay);
        # another thread asking meanwhile waits for it rather than finding names missing
        with lock:
            if not started:
                started.append(True)
                try:
                    loader.exec_module(module)
                finally:  # (a __getattr__ of the package's own is left in place)
                    if module.__dict__.get("__getattr__") is __getattr__:
                        del module.__dict__["__getattr__"]
        try:
            return module.__dict__[attr]
        except KeyError:
            own = module.__dict__.get("__getattr__")
            if own is not None and own is not __getattr__:
                return own(attr)
            raise AttributeError(f"module {name!r} has no attribute {attr!r}") from None

    module.__getattr__ = __getattr__  # type: ignore[method-assign]
    sys.modules[name] = module
    return True


def defer_sdk_init() -> None:
    """:func:`defer_package_init` of the SDK's packages the server imports through."""
    for name in SDK_PACKAGES:
        if not defer_package_init(name):
            return
    for name in LIBRARIES:
        defer_package_init(name)


_collector_paused = False


def pause_collector() -> None:
    """The cyclic garbage collector off while the server starts (``memlens mcp``).

    The start imports the SDK and memlens's reading stack, some 100,000 long-lived
    objects and no garbage cycles worth finding: the collections they trigger (one of
    them walking everything) take 40 to 50 ms of the host's wait for a first answer.
    :func:`resume_collector` turns it on again once DATA is open.
    """
    global _collector_paused
    if gc.isenabled():
        gc.disable()
        _collector_paused = True


def resume_collector() -> None:
    """After :func:`pause_collector`: what the start built frozen, the collector on again.

    Frozen objects are still freed by reference counting; the collections after this
    no longer walk the modules and schemas that live as long as the server.
    No effect when the collector was not paused by :func:`pause_collector`.
    """
    global _collector_paused
    if _collector_paused:
        _collector_paused = False
        gc.freeze()
        gc.enable()
