"""Embedders: ``hash`` (default, the agent's) and ``transformer`` (all-MiniLM-L6-v2)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.embed.hash import HashEmbedder

if TYPE_CHECKING:
    from core.embed.base import Embedder

EMBEDDERS = ("hash", "transformer")


def load_embedder(name: str) -> tuple[Embedder, str | None]:
    """The embedder called *name*, and a note when it fell back to ``hash``.

    ``transformer`` needs the optional extra ``memlens[transformer]``; if its
    model cannot load, the hash embedder is returned with a note saying why.

    Raises
    ------
    ValueError
        For a name that is neither ``hash`` nor ``transformer``.
    """
    if name == "hash":
        return HashEmbedder(), None
    if name != "transformer":
        raise ValueError(f"unknown embedder {name!r}: use one of {', '.join(EMBEDDERS)}")
    try:
        from core.embed.transformer import TransformerEmbedder

        return TransformerEmbedder.load(), None
    except Exception as exc:  # any failure to load the model means: fall back, and say so
        return HashEmbedder(), f"transformer embedder unavailable ({exc}); using hash"
