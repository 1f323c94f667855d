"""``memlens backups``: the backups memlens keeps of the files it writes (list, prune, restore).

``memlens backups PATH`` lists the backups in a data directory (or beside one
file): each with its original, UTC time, size, lines and SHA-256, and whether it
is complete (its size, and the hash the activity log recorded when it was made,
given ``--activity``). ``--prune`` applies retention (``--keep N`` newest per file,
``--days D``; the newest of each file is always kept) and ``--restore`` puts a
backup (PATH) back in place of its original, after backing the original up. Both
only say what they would do unless ``--write`` is given, like ``compact``.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING, Any

from core.cli.output import output_flags
from core.io import jsonio
from core.safety.activity import load_activity
from core.safety.backups import (
    Backup,
    BackupCheck,
    RestoreRefused,
    backup_at,
    check_backup,
    list_backups,
    plan_restore,
    prune,
    recorded_hashes,
    restore,
)

if TYPE_CHECKING:
    import argparse

DEFAULT_KEEP = 10
DEFAULT_DAYS = 30


class BackupsCliError(ValueError):
    """A user-facing error of ``memlens backups`` (one line, exit status 1)."""


def _print(args: argparse.Namespace, payload: Any, text: Any) -> None:
    if args.json:
        sys.stdout.buffer.write(jsonio.dumps(payload, pretty=args.pretty) + b"\n")
    else:
        sys.stdout.write(text() + "\n")
    sys.stdout.flush()


def _utc(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(seconds))


def run_backups_command(args: argparse.Namespace) -> int:
    """Run ``memlens backups``; returns the exit status (1 when a backup is incomplete)."""
    if args.restore:
        return _restore(args)
    if args.prune:
        return _prune(args)
    if args.write:
        raise BackupsCliError("--write goes with --prune or --restore")
    backups = list_backups(args.path)
    recorded = recorded_hashes(load_activity(args.activity).records) if args.activity else None
    checks = [check_backup(b, recorded=recorded) for b in backups]
    payload = {"path": args.path, "backups": [c.to_json() for c in checks]}
    _print(args, payload, lambda: _list_text(args.path, checks))
    return 0 if all(c.complete for c in checks) else 1


def _list_text(path: str, checks: list[BackupCheck]) -> str:
    if not checks:
        return f"no memlens backups in {path}"
    lines = [f"{len(checks)} backup(s) in {path} (times UTC):"]
    of = None
    for c in checks:
        b = c.backup
        if b.of != of:
            of = b.of
            lines.append(of + ("" if c.current_size is not None else "  (gone)"))
        state = "complete" if c.complete else "INCOMPLETE"
        if c.recorded is not None and c.complete:
            state = "complete, hash as recorded"
        lines.append(
            f"  {_utc(b.time)}  {b.size:>12,} bytes  {c.lines:>7,} lines  "
            f"sha256 {c.sha256[:12]}  {state}  {b.name}"
        )
    return "\n".join(lines)


def _prune(args: argparse.Namespace) -> int:
    if args.keep < 0 or args.days < 0:
        raise BackupsCliError("--keep and --days must be 0 (no limit) or more")
    done = prune(args.path, keep=args.keep, days=args.days, dry_run=not args.write)

    def text() -> str:
        verb = "removed" if args.write else "would remove"
        size = sum(b.size for b in done.removed)
        lines = [
            f"{verb} {len(done.removed)} backup(s), {size:,} bytes "
            f"(keep {args.keep or 'all'} per file, {args.days or 'any number of'} days; "
            "the newest of each file is always kept)"
        ]
        lines += [f"  {_utc(b.time)}  {b.size:>12,}  {b.path}" for b in done.removed]
        if done.temps:
            lines.append(
                f"{verb} {len(done.temps)} stale temp copy(ies) left by interrupted backups"
            )
            lines += [f"  {t}" for t in done.temps]
        lines += [f"could not remove {p}: {e}" for p, e in done.failed]
        if not args.write and (done.removed or done.temps):
            lines.append("(a dry run: add --write to remove them)")
        return "\n".join(lines)

    _print(args, done.to_json(), text)
    return 1 if done.failed else 0


def _restore(args: argparse.Namespace) -> int:
    if args.prune:
        raise BackupsCliError("--restore and --prune do not go together")
    backup: Backup | None = backup_at(args.path)
    if backup is None:
        raise BackupsCliError(
            f"{args.path}: not a memlens backup (a file named <file>.memlens-backup-<time>)"
        )
    plan = plan_restore(backup)
    recorded = recorded_hashes(load_activity(args.activity).records) if args.activity else {}
    expected = recorded.get(os.path.abspath(backup.path))
    if not args.write:
        payload = {
            "dry_run": True,
            "backup": backup.to_json(),
            "target": plan.target,
            "target_size": plan.target_size,
        }
        _print(args, payload, lambda: f"would {plan.describe()}\n(a dry run: add --write)")
        return 0
    try:
        done = restore(plan, expected_sha256=expected)
    except RestoreRefused as exc:
        raise BackupsCliError(str(exc)) from None
    payload = {"dry_run": False, "backup": backup.to_json(), **done.to_json()}
    _print(
        args,
        payload,
        lambda: (
            f"restored {done.target} from {backup.name} ({done.size:,} bytes)"
            + (f"; the replaced file was kept as {done.saved}" if done.saved else "")
        ),
    )
    return 0


def register_backups_commands(sub: Any) -> argparse.ArgumentParser:
    """Add ``backups`` to the CLI's subparsers *sub*."""
    about = "list the backups memlens made before writing an agent's files"
    more = (
        "Backups lie beside their files as <file>.memlens-backup-<UTC time>[.N]; only whole, "
        "verified copies get such a name. --prune and --restore only say what they would do "
        "unless --write is given. Exit status 1 when a listed backup is incomplete."
    )
    p: argparse.ArgumentParser = sub.add_parser(
        "backups", help=about, description=f"{about}. {more}"
    )
    p.add_argument(
        "path",
        metavar="PATH",
        help="a data directory or a file (its backups); with --restore, the backup to restore",
    )
    output_flags(p)
    p.add_argument(
        "--activity",
        metavar="FILE",
        help="memlens's activity.jsonl: compare each backup with the SHA-256 recorded then",
    )
    p.add_argument(
        "--prune",
        action="store_true",
        help="remove the backups retention does not keep, and stale temp copies",
    )
    p.add_argument(
        "--keep",
        type=int,
        default=DEFAULT_KEEP,
        metavar="N",
        help="with --prune: backups kept per file, newest first (0: all; default: %(default)s)",
    )
    p.add_argument(
        "--days",
        type=int,
        default=DEFAULT_DAYS,
        metavar="D",
        help="with --prune: remove backups older than D days (0: never; default: %(default)s)",
    )
    p.add_argument(
        "--restore",
        action="store_true",
        help="put the backup PATH back in place of its file (the file is backed up first)",
    )
    p.add_argument(
        "--write", action="store_true", help="really prune or restore (default: a dry run)"
    )
    p.set_defaults(func=run_backups_command)
    return p
