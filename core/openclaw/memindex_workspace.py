"""An OpenClaw workspace's memory files compared with what the memory index holds.

Only read: a file is hashed as OpenClaw's ``buildFileEntry`` hashes it.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from core.openclaw.memindex_records import FileState

if TYPE_CHECKING:
    from core.openclaw.memindex_records import IndexFile, Staleness


def compare_with_workspace(
    indexed: list[IndexFile], workspace: str | os.PathLike[str] | None
) -> list[FileState]:
    """Compare the *indexed* files with the workspace (never written, only read).

    A ``memory`` file is ``fresh`` when its content hash (sha256 of the
    text, as OpenClaw's ``buildFileEntry``) equals the indexed one,
    ``stale`` when it differs, ``missing`` when the file is gone. Files
    OpenClaw would index (``MEMORY.md``, ``USER.md``, ``memory/**/*.md``)
    that the index lacks are ``new-unindexed``. Session sources and a
    missing workspace give ``unknown``.
    """
    root = Path(workspace) if workspace is not None else None
    root = root if root is not None and root.is_dir() else None  # not here: nothing to compare
    out: list[FileState] = []
    for f in indexed:
        if root is None or f.source != "memory":
            out.append(FileState(f.path, f.source, "unknown", f))
            continue
        out.append(_compare(root, f))
    if root is not None:
        known = {f.path for f in indexed if f.source == "memory"}
        for rel in eligible_memory_files(root):
            if rel not in known:
                disk = _disk(root / rel)
                out.append(FileState(rel, "memory", "new-unindexed", None, *disk))
    return out


def eligible_memory_files(root: Path) -> list[str]:
    """Workspace-relative paths OpenClaw indexes as memory.

    ``MEMORY.md``, ``USER.md`` and ``memory/**/*.md``, symlinks skipped.
    """
    out: list[str] = []
    for name in ("MEMORY.md", "USER.md"):
        p = root / name
        if p.is_file() and not p.is_symlink():
            out.append(name)
    folder = root / "memory"
    if folder.is_dir() and not folder.is_symlink():
        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames[:] = sorted(d for d in dirnames if not (Path(dirpath) / d).is_symlink())
            for name in sorted(filenames):
                p = Path(dirpath) / name
                if name.endswith(".md") and p.is_file() and not p.is_symlink():
                    out.append(p.relative_to(root).as_posix())
    return out


def _disk(path: Path) -> tuple[int | None, float | None, str | None]:
    try:
        st = path.stat()
        data = path.read_bytes()
    except OSError:
        return None, None, None
    text = data.decode("utf-8", "replace").encode("utf-8")
    return st.st_size, st.st_mtime_ns / 1e6, hashlib.sha256(text).hexdigest()


def _compare(root: Path, f: IndexFile) -> FileState:
    target = root / f.path
    if not target.is_file():
        return FileState(f.path, f.source, "missing", f)
    size, mtime, digest = _disk(target)
    if digest is None:
        return FileState(f.path, f.source, "unknown", f)
    state: Staleness = "fresh" if digest == f.hash else "stale"
    return FileState(f.path, f.source, state, f, size, mtime, digest)
