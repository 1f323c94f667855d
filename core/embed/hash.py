"""The agent's hash embedding behind the :class:`~core.embed.base.Embedder` interface."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from core.embed import hashembed
from core.io.jobs import check

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from core.embed.base import EmbedProgress, Vectors


class HashEmbedder:
    """Bit-compatible with the vectors the agent writes to vectors.bin."""

    name = "hash"
    dim = hashembed.DIM

    def embed(
        self,
        texts: Sequence[str],
        *,
        batch_size: int = 256,
        progress: EmbedProgress | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> Vectors:
        """Embed *texts* (see :func:`core.embed.hashembed.embed`)."""
        if len(texts) == 1 and progress is None:  # a query: no batches to report or cancel
            return hashembed.embed(texts[0], self.dim)[None, :]
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), batch_size):
            check(cancelled, "hash embedding")
            for row in range(start, min(start + batch_size, len(texts))):
                out[row] = hashembed.embed(texts[row], self.dim)
            if progress is not None:
                progress(min(start + batch_size, len(texts)), len(texts))
        return out
