"""vectors.bin (VMEM v1): exact bytes, truncation, bad magic and version."""

from __future__ import annotations

import struct
import uuid

import numpy as np
import pytest

from core.io.problems import FormatError
from core.store.vectors import encode_vectors, load_vectors, parse_vectors, write_vectors


def _ids(n):
    return [str(uuid.UUID(int=i * 7919 + 1)) for i in range(n)]


def test_exact_byte_layout():
    ids = ["0123abcd-0000-4000-8000-000000000001", "é"]
    m = np.array([[1.0, -2.5, 0.0], [0.25, 3.0, -1.0]], dtype=np.float32)
    data = encode_vectors(ids, m, 3)
    assert data[:4] == b"VMEM"
    assert struct.unpack_from("<IIII", data) == (0x4D454D56, 1, 3, 2)
    assert struct.unpack_from("<H", data, 16) == (36,)
    assert data[18:54] == ids[0].encode()
    assert struct.unpack_from("<3f", data, 54) == (1.0, -2.5, 0.0)
    assert struct.unpack_from("<H", data, 66) == (2,)  # "é" is 2 UTF-8 bytes
    assert data[68:70] == "é".encode()
    assert struct.unpack_from("<3f", data, 70) == (0.25, 3.0, -1.0)
    assert len(data) == 16 + (2 + 36 + 12) + (2 + 2 + 12)


@pytest.mark.parametrize("ids", [_ids(50), [*_ids(3), "short-id", "x" * 70]])
def test_round_trip(ids):
    m = np.random.default_rng(1).standard_normal((len(ids), 16)).astype(np.float32)
    v = parse_vectors(encode_vectors(ids, m, 16), "v.bin")
    assert v.ids == ids and v.dim == 16 and v.problems == []
    assert v.matrix.dtype == np.float32 and np.array_equal(v.matrix, m)


@pytest.mark.parametrize("cut", [1, 100, 1550, 1555])
def test_truncated_tail_is_tolerated_and_reported(cut):
    ids = _ids(40)
    m = np.arange(40 * 8, dtype=np.float32).reshape(40, 8)
    data = encode_vectors(ids, m, 8)[:-cut]
    v = parse_vectors(data, "vectors.bin")
    stride = 2 + 36 + 32
    complete = (len(data) - 16) // stride
    assert v.ids == ids[:complete]
    assert np.array_equal(v.matrix, m[:complete])
    (problem,) = v.problems
    assert problem.file == "vectors.bin" and f"{complete} complete" in problem.message


def test_bad_magic_and_version(tmp_path):
    good = encode_vectors(_ids(1), np.zeros((1, 4), np.float32), 4)
    with pytest.raises(FormatError, match=r"not a vectors\.bin: magic") as err:
        parse_vectors(b"MEMV" + good[4:], "/x/vectors.bin")
    assert "/x/vectors.bin" in str(err.value)
    with pytest.raises(FormatError, match="version 2 is not supported"):
        parse_vectors(good[:4] + struct.pack("<I", 2) + good[8:], "v")
    with pytest.raises(FormatError, match="too short"):
        parse_vectors(good[:10], "v")


def test_write_is_atomic_with_backup(tmp_path):
    path = tmp_path / "vectors.bin"
    ids = _ids(3)
    write_vectors(path, ids, np.ones((3, 4), np.float32), 4)
    first = path.read_bytes()
    write_vectors(path, ids[:1], np.zeros((1, 4), np.float32), 4)
    backups = list(tmp_path.glob("vectors.bin.memlens-backup-*"))
    assert len(backups) == 1 and backups[0].read_bytes() == first
    assert load_vectors(path).ids == ids[:1]
    assert not list(tmp_path.glob(".vectors.bin.*.tmp"))


def test_zero_dimensions_is_a_format_error_naming_the_file(tmp_path):
    p = tmp_path / "vectors.bin"
    p.write_bytes(struct.pack("<IIII", 0x4D454D56, 1, 0, 3) + b"\x24\x00" + b"x" * 36)
    with pytest.raises(FormatError, match=r"vectors\.bin.*0 dimensions"):
        load_vectors(p)
