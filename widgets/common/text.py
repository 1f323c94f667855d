"""Text for Qt's rich text: escaping what the user or an agent wrote."""

from __future__ import annotations

import html


def esc(text: str) -> str:
    """*text* safe inside rich text (``&``, ``<`` and ``>`` escaped; quotes kept as typed)."""
    return html.escape(text, quote=False)
