"""Text for Qt's rich text: escaping what the user or an agent wrote."""

from __future__ import annotations

import html


def esc(text: str) -> str:
    """*text* safe inside rich text and its attributes (``&``, ``<``, ``>`` and quotes)."""
    return html.escape(text, quote=True)
