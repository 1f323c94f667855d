"""Stored embeddings of OpenClaw's memory index, decoded as OpenClaw decodes them.

Since schema v23 a BLOB of little-endian float64 values (a 0-byte BLOB for an
FTS-only chunk); before v23, and in the legacy layout, a TEXT JSON array. An
unusable one is a problem naming the file and the chunk.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from core.io import jsonio
from core.io.problems import Problem

if TYPE_CHECKING:
    import numpy.typing as npt

    from core.openclaw.memindex_records import EmbeddingState


def decode_embedding(value: Any) -> tuple[npt.NDArray[np.float64] | None, EmbeddingState]:
    """Decode one stored embedding as OpenClaw does.

    A BLOB is little-endian float64 (``decodeMemoryEmbedding``); TEXT is a JSON
    array (``parseEmbedding``, before schema v23 and in the legacy layout).

    Returns
    -------
    (vector, state)
        ``vector`` is None unless ``state`` is ``ok``; an empty BLOB or array is
        ``empty`` (an FTS-only chunk).
    """
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        if not data:
            return None, "empty"
        if len(data) % 8:
            return None, "bad-length"
        vec = np.frombuffer(data, dtype="<f8").astype(np.float64)
        if not np.all(np.isfinite(vec)):
            return None, "non-finite"
        return vec, "ok"
    if isinstance(value, str):
        try:
            data_json = jsonio.loads(value)
        except jsonio.JSONDecodeError:
            return None, "bad-json"
        if not isinstance(data_json, list) or jsonio.too_deep(data_json, value):
            return None, "bad-json"
        if not data_json:
            return None, "empty"
        try:
            vec = np.asarray(data_json, dtype=np.float64)
        except (TypeError, ValueError):
            return None, "bad-json"
        if vec.ndim != 1 or not np.all(np.isfinite(vec)):
            return None, "non-finite" if vec.ndim == 1 else "bad-json"
        return vec, "ok"
    if value is None:
        return None, "empty"
    return None, "bad-json"


UNUSABLE_EMBEDDING = {
    "bad-length": "its embedding BLOB is not a whole number of float64 values",
    "non-finite": "its embedding holds a value that is not finite",
    "bad-json": "its embedding is neither a float64 BLOB nor a JSON array of numbers",
}


def embedding_problem(file: str, chunk_id: str, path: str, state: str) -> Problem:
    """The problem for an unusable stored embedding."""
    text = UNUSABLE_EMBEDDING.get(state, "its embedding cannot be read")
    return Problem(file, 0, f"chunk {chunk_id} ({path}): {text}; it has no vector", "warning")
