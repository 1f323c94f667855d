"""The embedder interface: texts in, unit-length float32 rows out."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

EmbedProgress = Callable[[int, int], None]
"""``progress(done, total)`` in texts."""

Vectors = npt.NDArray[np.float32]


class Embedder(Protocol):
    """Something that turns texts into vectors of ``dim`` float32 values."""

    name: str
    dim: int

    def embed(
        self,
        texts: Sequence[str],
        *,
        batch_size: int = 32,
        progress: EmbedProgress | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> Vectors:
        """Embed *texts* into a ``(len(texts), dim)`` matrix of unit rows.

        Raises
        ------
        core.io.jobs.Cancelled
            When *cancelled* returns True between batches.
        """
        ...


def remember_queries(embedder: Embedder, queries: Sequence[str]) -> None:
    """Embed *queries* ahead, in batches, where *embedder* keeps them (the transformer).

    An evaluation searches each labelled query under several rankings; embedded one
    at a time, a model embedder would spend most of the run on them.
    """
    remember = getattr(embedder, "remember", None)
    if remember is not None:
        remember(list(queries))
