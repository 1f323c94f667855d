"""``vectors.bin`` ("VMEM" v1): the agent's embedding cache.

Little-endian, no padding: header ``uint32 magic 0x4d454d56`` (bytes ``VMEM``),
``uint32 version = 1``, ``uint32 dim``, ``uint32 count``; then per entry
``uint16 idLen``, the UTF-8 id, ``dim`` float32. A truncated tail is tolerated
(as the agent's loader does) and reported.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from core.io.fsutil import atomic_write
from core.io.problems import FormatError, Problem
from core.io.safe_read import read_regular

if TYPE_CHECKING:
    from pathlib import Path

MAGIC = 0x4D454D56
VERSION = 1
_HEADER = struct.Struct("<IIII")
MAX_COMPONENT = 1e6
"""Embedding components are near 1; beyond this a vector is damage (its norm overflows)."""


@dataclass(slots=True)
class VectorFile:
    """Vectors read from (or to be written to) a ``vectors.bin``."""

    dim: int
    ids: list[str]
    matrix: npt.NDArray[np.float32]
    """``(len(ids), dim)`` float32, row *i* belongs to ``ids[i]``."""
    declared_count: int = 0
    problems: list[Problem] = field(default_factory=list)

    def index(self) -> dict[str, int]:
        """Row of each id (the last row wins for a repeated id)."""
        return {vid: row for row, vid in enumerate(self.ids)}


def parse_vectors(data: bytes, name: str) -> VectorFile:
    """Parse the bytes of a vectors.bin.

    Raises
    ------
    FormatError
        On a short header, bad magic, an unknown version or 0 dimensions.
    """
    if len(data) < _HEADER.size:
        raise FormatError(name, f"too short for a VMEM header ({len(data)} of 16 bytes)")
    magic, version, dim, count = _HEADER.unpack_from(data, 0)
    if magic != MAGIC:
        raise FormatError(
            name, f"not a vectors.bin: magic {data[:4]!r}, expected b'VMEM' (0x4d454d56 LE)"
        )
    if version != VERSION:
        raise FormatError(name, f"vectors.bin version {version} is not supported (only 1)")
    if dim == 0:
        raise FormatError(name, f"vectors.bin declares 0 dimensions (and {count} vectors)")
    problems: list[Problem] = []
    ids, matrix = _read_entries(data, dim, count)
    if len(ids) < count:
        problems.append(
            Problem(
                name,
                0,
                f"truncated: header says {count} vectors, {len(ids)} complete ones read; "
                "the rest is ignored (the agent will embed those segments again)",
                "warning",
            )
        )
    if len(ids):
        good = np.isfinite(matrix).all(axis=1) & (np.abs(matrix) <= MAX_COMPONENT).all(axis=1)
        if not good.all():
            bad = [ids[i] for i in np.flatnonzero(~good)]
            problems.append(
                Problem(
                    name,
                    0,
                    f"{len(bad)} vector(s) hold NaN, infinite or absurd values (first: id "
                    f"{bad[0][:36]!r}); ignored (the agent will embed those segments again)",
                    "warning",
                )
            )
            ids = [ids[i] for i in np.flatnonzero(good)]
            matrix = np.ascontiguousarray(matrix[good])
    return VectorFile(dim, ids, matrix, count, problems)


def _read_entries(data: bytes, dim: int, count: int) -> tuple[list[str], npt.NDArray[np.float32]]:
    vec_bytes = dim * 4
    n = len(data)
    # Fast path: every id is a 36-char UUID, so entries have a fixed stride.
    # Anything else (other ids, a truncated file) takes the entry-by-entry loop.
    stride = 2 + 36 + vec_bytes
    avail = min(count, (n - 16) // stride)
    if avail > 0:
        buf = np.frombuffer(data, dtype=np.uint8, count=avail * stride, offset=16)
        rows = buf.reshape(avail, stride)
        id_lens = rows[:, 0].astype(np.uint16) | (rows[:, 1].astype(np.uint16) << 8)
        if avail == count and bool(np.all(id_lens == 36)):
            raw_ids = rows[:, 2:38].tobytes()
            ids = [raw_ids[i * 36 : (i + 1) * 36].decode("utf-8", "replace") for i in range(avail)]
            matrix = np.ascontiguousarray(rows[:, 38:]).view("<f4").astype(np.float32, copy=False)
            return ids, matrix.reshape(avail, dim)
    ids = []
    chunks: list[bytes] = []
    offset = 16
    for _ in range(count):
        if offset + 2 > n:
            break
        (id_len,) = struct.unpack_from("<H", data, offset)
        offset += 2
        if offset + id_len > n:
            break
        vid = data[offset : offset + id_len].decode("utf-8", "replace")
        offset += id_len
        if offset + vec_bytes > n:
            break
        ids.append(vid)
        chunks.append(data[offset : offset + vec_bytes])
        offset += vec_bytes
    matrix = np.frombuffer(b"".join(chunks), dtype="<f4").astype(np.float32).reshape(-1, dim)
    return ids, matrix


def load_vectors(path: str | os.PathLike[str]) -> VectorFile:
    """Read a vectors.bin file.

    Raises
    ------
    FormatError
        When the file cannot be read or is not a VMEM v1 file.
    """
    name = os.fspath(path)
    return parse_vectors(read_regular(name), name)


def encode_vectors(ids: list[str], matrix: npt.NDArray[np.floating], dim: int) -> bytes:
    """Encode ids and vectors in the exact VMEM v1 layout."""
    if matrix.shape != (len(ids), dim):
        raise ValueError(f"matrix shape {matrix.shape} does not match {len(ids)} ids x {dim}")
    parts = [_HEADER.pack(MAGIC, VERSION, dim, len(ids))]
    rows = np.ascontiguousarray(matrix, dtype="<f4")
    for row, vid in enumerate(ids):
        raw = vid.encode("utf-8")
        if len(raw) > 0xFFFF:
            raise ValueError(f"id too long for vectors.bin: {len(raw)} bytes")
        parts.append(struct.pack("<H", len(raw)))
        parts.append(raw)
        parts.append(rows[row].tobytes())
    return b"".join(parts)


def write_vectors(
    path: str | os.PathLike[str], ids: list[str], matrix: npt.NDArray[np.floating], dim: int
) -> Path | None:
    """Write a vectors.bin atomically, keeping a backup of the old file (returned)."""
    return atomic_write(path, encode_vectors(ids, matrix, dim))
