"""Does a summary keep an item? ``kept``, ``normalised``, ``missing`` or ``lost``.

* ``kept`` -- the item's text is in the summary as it is.
* ``normalised`` -- found once both sides are normalised: case, runs of spaces,
  quote and backtick style, ``foo()`` as ``foo``, a number's thousands separators
  and the space or hyphen before its unit (``1,100 lines`` = ``1100-line``); a
  path by a tail of two or more of its components, or by its base name when that
  has an extension (``src/core/agent-session.ts`` for the absolute path,
  ``agent-session.ts``); a command by its first 40 characters; an error by its
  first 60. A sentence (decision, TODO, request) is normalised when at least
  :data:`SENTENCE_COVERAGE` of its content words (4+ letters, not stopwords) are
  words of the summary: a summary rephrases, it does not quote.
* ``missing`` -- neither; ``lost`` when the messages the model still sees after
  the cut (the kept ones and, for a compaction the agent wrote, every later one on
  the session's current branch) never mention it either, by the same rules.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from core.compaction.audit_extract import SENTENCE_CATEGORIES

if TYPE_CHECKING:
    from collections.abc import Sequence

    from core.compaction.audit_extract import Found

STATUSES = ("kept", "normalised", "missing", "lost")
SENTENCE_COVERAGE = 0.6

_SPACE = re.compile(r"\s+")
_QUOTES = re.compile("[`\"'\u2018\u2019\u201c\u201d]")
_NUM_UNIT = re.compile(r"(\d),(?=\d{3}\b)|(\d)[ \t-]+(?=[a-z%])")
_PLURAL = re.compile(r"(\d[a-z]+?)(?:es|s)\b")
_WORD = re.compile(r"[a-z0-9][a-z0-9_'-]{3,}")
_STOP = frozenset(
    """this that with from have will would should could about into then than them they
    their there here what when where which while your you'll we'll it's also just like
    make made more most some such only very been being were does done want need let's
    sure okay yeah please maybe might each other over under after before because""".split()
)


def normalise(text: str, *, numbers: bool = False) -> str:
    """Casefolded, quotes and ``()`` dropped, spaces collapsed; *numbers*: units glued on."""
    text = _SPACE.sub(" ", _QUOTES.sub("", text.casefold().replace("()", "")))
    if numbers:
        text = _PLURAL.sub(r"\1", _NUM_UNIT.sub(lambda m: m.group(1) or m.group(2), text))
    return text


def content_words(text: str) -> set[str]:
    """The content words of *text* (casefolded, 4+ characters, no stopwords)."""
    return {w.strip("'-") for w in _WORD.findall(text.casefold())} - _STOP


class Haystack:
    """A text searched for items: the summary, or the messages after the cut.

    *parts* are the messages when there are several: a sentence is found when one
    of them holds enough of its words, not when a long conversation happens to
    hold them all somewhere.
    """

    def __init__(self, text: str, parts: Sequence[str] | None = None) -> None:
        self.text = text
        self._parts = parts if parts is not None else (text,)
        self._norm: dict[bool, str] = {}
        self._words: list[set[str]] | None = None

    def norm(self, *, numbers: bool = False) -> str:
        """:func:`normalise` of the text, computed on first use (a long text costs)."""
        found = self._norm.get(numbers)
        if found is None:
            found = self._norm[numbers] = normalise(self.text, numbers=numbers)
        return found

    @property
    def words(self) -> list[set[str]]:
        """Content words of each part, computed on first use (only sentences need them)."""
        if self._words is None:
            self._words = [content_words(p) for p in self._parts]
        return self._words

    def exact(self, item: Found) -> bool:
        """The item's text is in this text as it is."""
        return item.text in self.text

    def loose(self, item: Found) -> bool:
        """The item is here once both are normalised (see the module docstring)."""
        if item.category in SENTENCE_CATEGORIES:
            content = content_words(item.text)
            if not content:
                return normalise(item.text) in self.norm()
            need = SENTENCE_COVERAGE * len(content)
            return any(len(content & part) >= need for part in self.words)
        numbers = item.category == "number"
        norm = normalise(item.text, numbers=numbers).strip(" .,:;")
        hay = self.norm(numbers=numbers)
        if norm and norm in hay:
            return True
        if item.category in ("path", "file"):
            parts = [p for p in norm.strip("/").split("/") if p not in ("", ".", "..", "~")]
            if len(parts) >= 3 and "/".join(parts[-2:]) in hay:
                return True
            base = parts[-1] if parts else ""
            return "." in base.strip(".") and len(base) >= 4 and _has_word(hay, base)
        if item.category == "command":
            return len(norm) > 40 and norm[:40] in hay
        if item.category == "error":
            return len(norm) > 60 and norm[:60] in hay
        return False


def _has_word(haystack: str, needle: str) -> bool:
    """*needle* in *haystack* not inside a longer name (``a.ts`` is not in ``data.ts``)."""
    start = haystack.find(needle)
    while start >= 0:
        before = haystack[start - 1] if start else " "
        end = start + len(needle)
        after = haystack[end] if end < len(haystack) else " "
        if not (before.isalnum() or before in "_-.") and not (after.isalnum() or after == "_"):
            return True
        start = haystack.find(needle, start + 1)
    return False


def status_of(item: Found, summary: Haystack, after: Haystack) -> str:
    """The item's status against *summary*, *after* deciding ``missing`` or ``lost``."""
    if summary.exact(item):
        return "kept"
    if summary.loose(item):
        return "normalised"
    if after.exact(item) or after.loose(item):
        return "missing"
    return "lost"
