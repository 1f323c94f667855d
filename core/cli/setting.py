"""``memlens setting DATA KEY VALUE``: set one recall setting of the agent's openclaw.json.

KEY is a key of ``agents.defaults.memoryContext`` the agent's recall reads
(``autoRecallMinScore``, ``hardCapTokens``, ``crossSession``, ``evictionDays``).
Without ``--write`` the command shows the change as a diff and writes nothing; with
it, the file is backed up and replaced atomically, comments and layout kept
(:mod:`core.openclaw.config_edit`). One key path per run, so every change is seen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.cli.output import CliError, emit_result
from core.dataset.discovery import discover
from core.openclaw.config_edit import apply_setting, plan_setting

if TYPE_CHECKING:
    import argparse


def cmd_setting(args: argparse.Namespace) -> int:
    """Plan (and with ``--write`` apply) one setting; exit status 0."""
    config = discover(args.data).config
    if config is None:
        raise CliError(f"{args.data}: no openclaw.json here")
    edit = plan_setting(config, args.key, args.value)
    backup = apply_setting(edit) if args.write else None
    payload: dict[str, Any] = {
        "file": str(edit.path),
        "key": edit.dotted,
        "old": edit.old_value,
        "new": edit.new_value,
        "changed": edit.old_text != edit.new_text,
        "written": bool(args.write and edit.old_text != edit.new_text),
        "backup": str(backup) if backup is not None else None,
        "diff": edit.diff(),
    }

    def text() -> str:
        old = "absent (the agent's default)" if edit.old_value is None else repr(edit.old_value)
        head = f"{edit.dotted}: {old} -> {edit.new_value!r} in {edit.path}"
        if not payload["changed"]:
            return f"{head}\nalready set: nothing to write"
        if payload["written"]:
            return f"{head}\nwritten; the old file is kept as {backup}"
        return f"{head}\n{edit.diff()}dry run: nothing written (--write to apply)"

    emit_result(args, payload, text)
    return 0
