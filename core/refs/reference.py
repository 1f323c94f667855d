"""The ``memlens://`` reference scheme: format and parse, round-trip exact.

A reference names a place in a data directory::

    memlens://open?path=/home/me/.openclaw&session=5f0c...&entry=a1b2c3d4
    memlens://open?path=/home/me/.openclaw&session=5f0c...&entry=%2342
    memlens://open?path=/home/me/.openclaw&fact=f-0012
    memlens://open?path=/home/me/.openclaw&segment=seg-0042

``path`` (required, absolute) is what was opened: a data directory, a transcript or an
agent database. ``session`` is a session id (a path when the id is not unique);
``entry`` an entry id or ``#N`` (the object index of ``memlens show``) and needs a
session; ``fact`` a knowledge fact id; ``segment`` a memory-context segment id. At
most one of ``entry``, ``fact`` and ``segment``. Values are percent-encoded (UTF-8;
``/`` kept as is); parameters this version does not know are ignored, so a later
version may add some.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import parse_qsl, quote, urlsplit

SCHEME = "memlens"
HOST = "open"
PREFIX = f"{SCHEME}://{HOST}?"
TARGETS = ("entry", "fact", "segment")
_KEYS = ("path", "session", *TARGETS)


class BadReference(ValueError):
    """Text that is not a well-formed ``memlens://`` reference (the message says why)."""


@dataclass(frozen=True, slots=True)
class Reference:
    """A place: a data directory, then a session and entry, a fact or a segment."""

    path: str
    session: str | None = None
    entry: str | None = None
    fact: str | None = None
    segment: str | None = None

    @property
    def kind(self) -> str:
        """``entry``, ``fact``, ``segment``, ``session`` or ``place`` (the path alone)."""
        for name in TARGETS:
            if getattr(self, name):
                return name
        return "session" if self.session else "place"

    def __str__(self) -> str:
        return format_reference(self)


def format_reference(ref: Reference) -> str:
    """The ``memlens://open?...`` text of *ref* (parameters in a fixed order).

    Raises
    ------
    BadReference
        When *ref* breaks the rules :func:`parse_reference` checks.
    """
    _check(ref)
    parts = [f"{key}={quote(value, safe='/')}" for key in _KEYS if (value := getattr(ref, key))]
    return PREFIX + "&".join(parts)


def looks_like_reference(text: str) -> bool:
    """Whether *text* is meant as a reference (it starts with ``memlens://``)."""
    return text.strip().lower().startswith(f"{SCHEME}://")


def parse_reference(text: str) -> Reference:
    """The :class:`Reference` of a ``memlens://open?...`` text.

    Raises
    ------
    BadReference
        Naming what is wrong: another scheme or host, a parameter given twice, no
        ``path``, a relative path, an entry without a session, two targets.
    """
    text = text.strip()
    shown = text if len(text) <= 120 else text[:117] + "..."
    if not looks_like_reference(text):
        raise BadReference(f"not a memlens reference (it must start with {SCHEME}://): {shown}")
    parts = urlsplit(text)
    if parts.netloc != HOST:
        raise BadReference(f"unknown reference host {parts.netloc!r} (expected {HOST!r}): {shown}")
    values: dict[str, str] = {}
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key not in _KEYS:
            continue  # a later version's parameter
        if key in values:
            raise BadReference(f"{key!r} is given twice in {shown}")
        values[key] = value
    ref = Reference(**{k: (v or None) for k, v in values.items() if k != "path"},
                    path=values.get("path", ""))  # fmt: skip
    _check(ref, shown)
    return ref


def _check(ref: Reference, shown: str | None = None) -> None:
    where = f" in {shown}" if shown else ""
    if not ref.path:
        raise BadReference(f"no path{where}: a reference names the data directory it is in")
    if not os.path.isabs(ref.path):
        raise BadReference(f"the path {ref.path!r} is not absolute{where}")
    targets = [name for name in TARGETS if getattr(ref, name)]
    if len(targets) > 1:
        raise BadReference(f"{' and '.join(targets)} together{where}: name one place")
    if ref.entry and not ref.session:
        raise BadReference(f"entry {ref.entry!r} without a session{where}")
