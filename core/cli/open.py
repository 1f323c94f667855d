"""``memlens open REF``: check what a ``memlens://`` reference names, then show it.

The reference is parsed and resolved against its data directory here (no Qt); the
desktop app is started on it by the opener the launcher registers
(:func:`set_gui_opener`), so core never imports the app. ``--print`` only resolves
and prints. A reference that is malformed, or whose path, session, entry, fact or
segment is not there, exits with status 2 and a message naming what is missing.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from core.cli.output import emit_result, print_error
from core.dataset.load import load_dataset
from core.io.problems import FormatError
from core.refs.reference import BadReference, parse_reference
from core.refs.resolve import MissingTarget, resolve

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from core.refs.resolve import Place

MISSING = 2
"""Exit status of a reference that is malformed or names what is not there."""

_opener: list[Callable[[str], int]] = []


def set_gui_opener(opener: Callable[[str], int]) -> None:
    """Start the desktop app on a reference with *opener* (it returns the exit status)."""
    _opener[:] = [opener]


def place_text(place: Place) -> str:
    """What ``memlens open --print`` says: the reference, what it names, its text."""
    lines = [place.title, str(place.reference)]
    if place.session_path:
        lines.append(f"session file: {place.session_path}")
    if place.preview:
        lines.append(place.preview)
    return "\n".join(lines)


def cmd_open(args: argparse.Namespace) -> int:
    """Resolve ``args.reference``, print what it names, then open it in the app."""
    try:
        ref = parse_reference(args.reference)
    except BadReference as exc:
        print_error(str(exc))
        return MISSING
    if not os.path.exists(ref.path):
        print_error(f"{ref.path}: no such file or folder (the reference's path)")
        return MISSING
    try:
        place = resolve(load_dataset(ref.path, defer_db=True), ref)
    except (FormatError, OSError) as exc:
        print_error(f"could not open {ref.path}: {exc}")
        return MISSING
    except MissingTarget as exc:
        print_error(str(exc.args[0]))
        return MISSING
    emit_result(args, place.to_json(), lambda: place_text(place))
    if args.print:
        return 0
    if not _opener:
        print_error("the desktop app is not available here; --print only resolves")
        return 1
    return _opener[0](str(ref))
