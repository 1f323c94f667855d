"""The backups memlens keeps beside the files it writes: list, check, prune, restore.

A backup is ``<file>.memlens-backup-<YYYYmmddTHHMMSS>[.N]`` beside ``<file>``
(:func:`core.io.fsutil.make_backup`): the stamp is the UTC time it was made and
``.N`` numbers the backups made in the same second. Only a whole, verified copy
ever gets such a name. A copy cut short (memlens killed, disk full) is a hidden
temp file, ``.<file>.memlens-copying-XXXX.tmp``: never listed as a backup,
removed by :func:`prune` once it is stale.

Nothing here touches a file whose name is not one of those two shapes.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from calendar import timegm
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.io import fsutil

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from core.io.fsutil import WriteRecord

NAME_RE = re.compile(
    r"^(?P<of>.+)"
    + re.escape(fsutil.BACKUP_INFIX)
    + r"(?P<stamp>\d{8}T\d{6})(?:\.(?P<n>[1-9]\d{0,5}))?$"
)
"""A backup's file name: the original's name, the UTC stamp, maybe ``.N``."""
TEMP_RE = re.compile(r"^\.(?P<of>.+)" + re.escape(fsutil.TEMP_INFIX) + r"[^/]*\.tmp$")
"""A copy in progress (or left by a killed one)."""
STALE_TEMP_SECONDS = 3600.0
"""A temp copy untouched this long is no copy in progress: :func:`prune` removes it."""
SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", ".cache"})
MAX_DEPTH = 8
"""Folders below the root that :func:`list_backups` looks into."""
DAY = 86_400.0


@dataclass(frozen=True, slots=True)
class Backup:
    """One backup file.

    Attributes
    ----------
    path
        The backup.
    of
        The file it is a copy of (beside it; it may be gone since).
    time
        Epoch seconds when it was made (the UTC stamp in its name).
    seq
        The ``.N`` of its name (0 without one): orders backups of one second.
    size
        Its size in bytes.
    """

    path: str
    of: str
    time: float
    seq: int
    size: int

    @property
    def name(self) -> str:
        """The backup's file name."""
        return os.path.basename(self.path)

    def to_json(self) -> dict[str, Any]:
        """The JSON shape of ``memlens backups --json`` (without a check)."""
        return {
            "path": self.path,
            "of": self.of,
            "time": self.time,
            "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.time)),
            "size": self.size,
        }


def parse_name(name: str) -> tuple[str, float, int] | None:
    """``(original name, epoch seconds, seq)`` of a backup's file name, else None."""
    m = NAME_RE.match(name)
    if m is None:
        return None
    try:
        stamp = timegm(time.strptime(m["stamp"], "%Y%m%dT%H%M%S"))
    except ValueError:
        return None  # digits that are no date: not a name memlens made
    return m["of"], float(stamp), int(m["n"] or 0)


def backup_at(path: str | os.PathLike[str]) -> Backup | None:
    """The backup at *path*, or None if its name is not a backup's or it is not a file."""
    name = os.fspath(path)
    parsed = parse_name(os.path.basename(name))
    if parsed is None:
        return None
    try:
        st = os.stat(name, follow_symlinks=False)
    except OSError:
        return None
    if not os.path.isfile(name) or os.path.islink(name):
        return None
    of, stamp, seq = parsed
    return Backup(name, os.path.join(os.path.dirname(name), of), stamp, seq, st.st_size)


def _walk(root: Path, max_depth: int) -> Iterable[tuple[str, list[str]]]:
    """``(folder, file names)`` under *root*, not following links, skipping tool folders."""
    base = len(root.parts)
    for folder, dirs, files in os.walk(root, onerror=lambda _e: None):
        depth = len(Path(folder).parts) - base
        dirs[:] = [] if depth >= max_depth else sorted(d for d in dirs if d not in SKIP_DIRS)
        yield folder, files


def _sorted(backups: Iterable[Backup]) -> list[Backup]:
    return sorted(backups, key=lambda b: (b.of, b.time, b.seq, b.path))


def list_backups(root: str | os.PathLike[str], *, max_depth: int = MAX_DEPTH) -> list[Backup]:
    """The backups in or beside *root*, by original file, oldest first.

    Parameters
    ----------
    root
        A folder (searched *max_depth* levels down: a data directory), a file
        (its backups, beside it) or a backup itself.

    Raises
    ------
    FileNotFoundError
        When *root* does not exist.
    """
    base = Path(root)
    if base.is_dir():
        found = (
            backup_at(os.path.join(folder, name))
            for folder, files in _walk(base, max_depth)
            for name in files
            if fsutil.BACKUP_INFIX in name
        )
        return _sorted(b for b in found if b is not None)
    if not base.exists():
        raise FileNotFoundError(2, "no such file or folder", str(base))
    own = backup_at(base)
    if own is not None:
        return [own]
    prefix = base.name + fsutil.BACKUP_INFIX
    try:
        names = [n for n in os.listdir(base.parent) if n.startswith(prefix)]
    except OSError:
        return []
    found = (backup_at(base.parent / n) for n in names)
    return _sorted(b for b in found if b is not None and b.of == str(base))


def stale_temps(
    root: str | os.PathLike[str],
    *,
    now: float | None = None,
    older_than: float = STALE_TEMP_SECONDS,
    max_depth: int = MAX_DEPTH,
) -> list[str]:
    """Temp copies under *root* (a folder, or a file: beside it) left by killed copies.

    A temp file whose status changed less than *older_than* seconds ago may be a
    copy in progress (the copy's last step sets its times to the original's, so
    the change time is the one that tells).
    """
    base = Path(root)
    if base.is_dir():
        folders: Iterable[tuple[str, list[str]]] = _walk(base, max_depth)
    else:
        try:
            folders = [(str(base.parent), os.listdir(base.parent))]
        except OSError:
            return []
    limit = (time.time() if now is None else now) - older_than
    out = []
    for folder, files in folders:
        for name in files:
            if fsutil.TEMP_INFIX not in name or TEMP_RE.match(name) is None:
                continue
            path = os.path.join(folder, name)
            try:
                st = os.stat(path, follow_symlinks=False)
            except OSError:
                continue
            if st.st_ctime < limit and os.path.isfile(path):
                out.append(path)
    return sorted(out)


# --- checking -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BackupCheck:
    """What reading a backup (and its original) found.

    Attributes
    ----------
    sha256, lines
        Of the backup's bytes now.
    recorded
        The SHA-256 the activity log recorded when the backup was made (None:
        not in the log given).
    current_size
        The original's size now (None: it is gone).
    grown_from
        The original still starts with the backup's bytes (it was only appended
        to since: a transcript); None when it is gone.
    """

    backup: Backup
    size: int
    sha256: str
    lines: int
    recorded: str | None
    current_size: int | None
    grown_from: bool | None

    @property
    def complete(self) -> bool:
        """The bytes are those that were backed up (when the log knows its hash).

        A backup's name is only ever given to a whole, verified copy; this also
        catches a copy changed or cut since.
        """
        return self.size == self.backup.size and self.recorded in (None, self.sha256)

    def to_json(self) -> dict[str, Any]:
        """The backup's JSON with what the check found."""
        return {
            **self.backup.to_json(),
            "sha256": self.sha256,
            "lines": self.lines,
            "recorded_sha256": self.recorded,
            "complete": self.complete,
            "of_size": self.current_size,
            "of_grown_from_backup": self.grown_from,
        }


def recorded_hashes(records: Iterable[WriteRecord]) -> dict[str, str]:
    """Backup path -> SHA-256, from activity records."""
    return {
        os.path.abspath(r.backup): r.sha256
        for r in records
        if r.action == "backup" and r.backup and r.sha256
    }


def _starts_with(path: str, digest: str, size: int) -> bool | None:
    """Whether the first *size* bytes of *path* hash to *digest* (None: unreadable)."""
    h = hashlib.sha256()
    left = size
    try:
        with open(path, "rb") as fh:
            while left > 0:
                data = fh.read(min(left, 1 << 20))
                if not data:
                    return False
                h.update(data)
                left -= len(data)
    except OSError:
        return None
    return h.hexdigest() == digest


def check_backup(backup: Backup, *, recorded: dict[str, str] | None = None) -> BackupCheck:
    """Read *backup* (hash, lines) and compare its original with it.

    Raises
    ------
    OSError
        When the backup cannot be read.
    """
    h = hashlib.sha256()
    size = lines = 0
    last = b"\n"
    with open(backup.path, "rb") as fh:
        while data := fh.read(1 << 20):
            h.update(data)
            size += len(data)
            lines += data.count(b"\n")
            last = data[-1:]
    digest = h.hexdigest()
    try:
        current: int | None = os.stat(backup.of).st_size
    except OSError:
        current = None
    grown = None if current is None else current >= size and _starts_with(backup.of, digest, size)
    return BackupCheck(
        backup,
        size,
        digest,
        lines + (0 if last == b"\n" else 1),
        (recorded or {}).get(os.path.abspath(backup.path)),
        current,
        grown,
    )


# --- pruning ------------------------------------------------------------------------


def prune_plan(
    backups: Sequence[Backup],
    *,
    keep: int,
    days: float,
    now: float | None = None,
    protect: Iterable[str] = (),
) -> list[Backup]:
    """The backups that retention removes, oldest first.

    Per original file, newest first: beyond the *keep* newest (0: no limit), or
    older than *days* days (0: no limit). The newest backup of each file is
    always kept, whatever its age, and so is every path in *protect* (the backup
    just made).
    """
    if keep < 0 or days < 0:
        raise ValueError("keep and days must be 0 (no limit) or more")
    now = time.time() if now is None else now
    kept = {os.path.abspath(p) for p in protect}
    groups: dict[str, list[Backup]] = {}
    for b in backups:
        groups.setdefault(os.path.abspath(b.of), []).append(b)
    out = []
    for group in groups.values():
        group.sort(key=lambda b: (b.time, b.seq), reverse=True)
        for rank, b in enumerate(group):
            if rank == 0 or os.path.abspath(b.path) in kept:
                continue
            if (keep and rank >= keep) or (days and now - b.time > days * DAY):
                out.append(b)
    return _sorted(out)


@dataclass(slots=True)
class Pruned:
    """What :func:`prune` removed (or would remove, in a dry run)."""

    removed: list[Backup] = field(default_factory=list)
    temps: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    """(path, why) for each file that could not be removed."""
    dry_run: bool = False

    def to_json(self) -> dict[str, Any]:
        """The JSON shape of ``memlens backups --prune --json``."""
        return {
            "dry_run": self.dry_run,
            "removed": [b.to_json() for b in self.removed],
            "removed_bytes": sum(b.size for b in self.removed),
            "stale_temps": self.temps,
            "failed": [{"path": p, "error": e} for p, e in self.failed],
        }


def prune(
    root: str | os.PathLike[str],
    *,
    keep: int,
    days: float,
    now: float | None = None,
    protect: Iterable[str] = (),
    dry_run: bool = False,
) -> Pruned:
    """Apply retention (:func:`prune_plan`) to the backups under *root*, and remove stale temps.

    Only files whose names are a backup's or a temp copy's are ever removed.
    A file that cannot be removed is reported in :attr:`Pruned.failed`.
    """
    plan = prune_plan(list_backups(root), keep=keep, days=days, now=now, protect=protect)
    temps = stale_temps(root, now=now)
    out = Pruned(dry_run=dry_run)
    for b in plan:
        if _remove(b.path, out, dry_run):
            out.removed.append(b)
    for t in temps:
        if _remove(t, out, dry_run):
            out.temps.append(t)
    return out


def _remove(path: str, out: Pruned, dry_run: bool) -> bool:
    if dry_run:
        return True
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False  # removed meanwhile (another memlens pruning): nothing to do
    except OSError as exc:
        out.failed.append((path, exc.strerror or str(exc)))
        return False
    return True


# --- restoring ----------------------------------------------------------------------


class RestoreRefused(Exception):
    """A restore that memlens will not do, with the reason (nothing was written)."""


@dataclass(frozen=True, slots=True)
class RestorePlan:
    """A restore as the user confirms it: what replaces what, and the sizes then."""

    backup: Backup
    target: str
    target_size: int | None
    """The file's size when planned (None: it does not exist)."""
    target_mtime_ns: int | None

    def describe(self) -> str:
        """One line for people."""
        now = (
            "which no longer exists"
            if self.target_size is None
            else f"now {self.target_size:,} bytes"
        )
        return (
            f"replace {self.target} ({now}) with the backup {self.backup.name} "
            f"({self.backup.size:,} bytes, made "
            f"{time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime(self.backup.time))})"
        )


def plan_restore(backup: Backup) -> RestorePlan:
    """What restoring *backup* over its original would do (reads only sizes)."""
    try:
        st = os.stat(backup.of)
    except FileNotFoundError:
        return RestorePlan(backup, backup.of, None, None)
    return RestorePlan(backup, backup.of, st.st_size, st.st_mtime_ns)


@dataclass(frozen=True, slots=True)
class Restored:
    """A restore done: the file, its new size, and the backup of what it replaced."""

    target: str
    size: int
    saved: str | None
    """The backup made of the file before it was replaced (None: it did not exist)."""

    def to_json(self) -> dict[str, Any]:
        """The JSON shape of ``memlens backups --restore --write --json``."""
        return {"restored": self.target, "size": self.size, "backup_of_replaced": self.saved}


def restore(
    plan: RestorePlan, *, expected_sha256: str | None = None, backup_to: Path | None = None
) -> Restored:
    """Replace the file with the backup, atomically, keeping a backup of it first.

    The file is backed up (:func:`core.io.fsutil.make_backup`, so the restore can
    be undone), then replaced by a temp copy of the backup renamed over it
    (:func:`core.io.fsutil.atomic_write`). Both writes reach the write observers.

    Raises
    ------
    RestoreRefused
        Before anything is written: the backup is not the size listed or not the
        recorded hash (*expected_sha256*), or the file changed since *plan*.
    OSError
        When a read or a write fails (the file is then as it was).
    """
    b = plan.backup
    data = Path(b.path).read_bytes()
    if len(data) != b.size:
        raise RestoreRefused(f"{b.path} is {len(data):,} bytes, not the {b.size:,} listed")
    if expected_sha256 is not None and hashlib.sha256(data).hexdigest() != expected_sha256:
        raise RestoreRefused(f"{b.path} does not match the SHA-256 recorded when it was made")
    now = plan_restore(b)
    if (now.target_size, now.target_mtime_ns) != (plan.target_size, plan.target_mtime_ns):
        raise RestoreRefused(
            f"{plan.target} changed since the restore was planned (an agent may be writing "
            "to it); nothing was written"
        )
    saved = fsutil.atomic_write(plan.target, data, backup=True, backup_name=backup_to)
    if plan.target_size is None:
        os.chmod(plan.target, os.stat(b.path).st_mode & 0o777)
    return Restored(plan.target, len(data), str(saved) if saved is not None else None)
