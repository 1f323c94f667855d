"""Short text for listings: one line, cut with an ellipsis."""

from __future__ import annotations


def cut(text: str, width: int) -> str:
    """*text* if it fits in *width* characters, else its start and an ellipsis."""
    return text if len(text) <= width else text[: width - 1] + "…"


def one_line(text: str, width: int = 160) -> str:
    """*text* on one line (whitespace runs made one space), :func:`cut` to *width*.

    Only the head of a long text is flattened, unless its whitespace runs are so long
    that the head falls short: a listing of long segments stays cheap.
    """
    head = text[: width * 4]
    flat = " ".join(head.split())
    if len(flat) <= width and len(head) < len(text):
        flat = " ".join(text.split())
    return cut(flat, width)
