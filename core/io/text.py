"""Short text for listings: one line, cut with an ellipsis."""

from __future__ import annotations


def cut(text: str, width: int) -> str:
    """*text* if it fits in *width* characters, else its start and an ellipsis."""
    return text if len(text) <= width else text[: width - 1] + "…"


def one_line(text: str, width: int) -> str:
    """*text* on one line (whitespace runs made one space), :func:`cut` to *width*."""
    return cut(" ".join(text.split()), width)
