"""Token ids and counts of texts, memoised, for BM25 over a one-shot corpus.

Smart trim builds a BM25 corpus of ~2,000 messages, asks it one query and throws
it away (:func:`core.recall.bm25.bm25_scores`). Python dictionaries per message
(Counter over every token) cost more than the rest of the trim together, so texts
become arrays of token ids here and every count is an array operation:

* A text splits on whitespace into chunks (no token holds whitespace, so a
  text's tokens are its chunks' tokens in order). A chunk is tokenized once, and
  the new ASCII chunks of a batch in one regex pass.
* A text's distinct token ids and their counts are memoised (bounded by text
  size): trimming the same context again, or with a few more messages, costs
  array work only.
* One ``np.sort`` of (document, token) keys gives every document's terms and
  counts, so document frequencies and the mean idf (which rank-bm25 uses for
  negative idfs) are exact.
"""

from __future__ import annotations

import re
import threading
from itertools import chain
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from core.recall.tokenize import tokenize, word_tokens

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy.typing as npt

    Ids = npt.NDArray[np.int64]

_ASCII_WORD = re.compile(r"\x00|\x01\d+|[A-Za-z0-9_]+(?:[./\-:@][A-Za-z0-9_]+)*")
r"""The tokenizer's word on ASCII text; ``\x00`` ends a chunk, ``\x01N`` stands for
the N-th new chunk of a batch when it is not ASCII (the tokenizer reads those)."""
_END = -1
_MAX_CHUNKS = 400_000
_MAX_TEXT_CHARS = 50_000_000


class _TokenIds(dict[str, int]):
    """Token -> id; a new token gets the next id (and its name in ``names``)."""

    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []

    def __missing__(self, token: str) -> int:
        found = self[token] = len(self.names)
        self.names.append(token)
        return found


class _WordIds(dict[str, tuple[int, ...]]):
    r"""Word -> its token ids; ``\x00`` -> the end mark; ``\x01N`` -> a fresh chunk's."""

    def __init__(self, table: TokenTable) -> None:
        super().__init__({"\x00": (_END,)})
        self.table = table
        self.fresh: list[str] = []

    def __missing__(self, word: str) -> tuple[int, ...]:
        token_id = self.table.token_ids.__getitem__
        if word[0] == "\x01":
            return tuple(map(token_id, tokenize(self.fresh[int(word[1:])])))
        found = self[word] = tuple(map(token_id, word_tokens(word)))
        return found


class TextTerms(NamedTuple):
    """The terms of one text (a named tuple: a batch makes thousands)."""

    ids: Ids
    """Distinct token ids, ascending."""
    counts: Ids
    """How often each of them occurs."""
    length: int
    """Tokens in all."""


class TokenTable:
    """Token ids of chunks and texts, memoised; thread-safe under :attr:`lock`.

    Ids are given in order of first appearance and stay valid until the table
    outgrows its bounds and starts again, between batches, never inside one: hold
    :attr:`lock` while using ids from :meth:`terms`.
    """

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.clear()

    def clear(self) -> None:
        """Forget every chunk, token and text."""
        self._chunk_ids: dict[str, int] = {}
        self._chunk_start: Ids = np.zeros(1, dtype=np.int64)
        self._chunk_tokens: Ids = np.zeros(0, dtype=np.int64)
        self._word_ids = _WordIds(self)
        self.token_ids = _TokenIds()
        self.names = self.token_ids.names
        self._texts: dict[str, TextTerms] = {}
        self._text_chars = 0

    def __len__(self) -> int:
        """How many distinct tokens the table knows."""
        return len(self.names)

    def counts(self, text: str) -> dict[str, int]:
        """How often each token occurs in *text*, as the table holds it."""
        with self.lock:
            terms = self.terms([text])[0]
            names = self.names
            return {
                names[i]: c for i, c in zip(terms.ids.tolist(), terms.counts.tolist(), strict=True)
            }

    def terms(self, texts: Sequence[str]) -> list[TextTerms]:
        """The terms of each text (memoised)."""
        with self.lock:
            if len(self._chunk_ids) > _MAX_CHUNKS or self._text_chars > _MAX_TEXT_CHARS:
                self.clear()
            known = self._texts
            fresh = list(dict.fromkeys(t for t in texts if t not in known))
            if fresh:
                self._add_texts(fresh)
            return [known[t] for t in texts]

    # -- building ----------------------------------------------------------------
    def _add_chunks(self, chunks: list[str]) -> None:
        """Tokenize new chunks, in id order, in one regex pass."""
        words = self._word_ids
        words.fresh = chunks
        marked = [c if c.isascii() else f"\x01{k}" for k, c in enumerate(chunks)]
        found = _ASCII_WORD.findall("\x00".join(marked) + "\x00")
        flat = np.fromiter(chain.from_iterable(map(words.__getitem__, found)), np.int64)
        words.fresh = []
        ends = np.flatnonzero(flat == _END)
        counts = np.diff(ends, prepend=-1) - 1
        base = self._chunk_start[-1]
        self._chunk_start = np.concatenate((self._chunk_start, base + np.cumsum(counts)))
        self._chunk_tokens = np.concatenate((self._chunk_tokens, flat[flat != _END]))

    def _add_texts(self, texts: list[str]) -> None:
        splits = [t.split() for t in texts]
        every = list(chain.from_iterable(splits))
        chunk_ids = self._chunk_ids
        fresh = [c for c in dict.fromkeys(every) if c not in chunk_ids]
        if fresh:
            chunk_ids.update(
                zip(fresh, range(len(chunk_ids), len(chunk_ids) + len(fresh)), strict=True)
            )
            self._add_chunks(fresh)
        occurrences = np.fromiter(map(chunk_ids.__getitem__, every), np.int64, len(every))
        start = self._chunk_start
        firsts = start[occurrences]
        per = start[occurrences + 1] - firsts  # tokens of each occurrence
        ends = np.cumsum(per)
        total = int(ends[-1]) if len(ends) else 0
        tokens = self._chunk_tokens[np.repeat(firsts - (ends - per), per) + np.arange(total)]
        # Where each text's tokens end: the running total at its last chunk.
        chunk_ends = np.cumsum(np.fromiter(map(len, splits), np.int64, len(splits)))
        text_ends = np.concatenate(([0], ends))[chunk_ends]
        lengths = np.diff(text_ends, prepend=0)
        docs = np.repeat(np.arange(len(texts), dtype=np.int64), lengths)
        # Sorted (document, token) keys: each run is one term of one document.
        width = max(len(self.names), 1)
        keys = np.sort(docs * width + tokens)
        runs = np.flatnonzero(np.diff(keys, prepend=-1))
        counts = np.diff(runs, append=len(keys))
        keys = keys[runs]
        bounds = np.searchsorted(keys, np.arange(len(texts) + 1) * width).tolist()
        keys %= width
        for text, a, b, length in zip(
            texts, bounds[:-1], bounds[1:], lengths.tolist(), strict=True
        ):
            self._texts[text] = TextTerms(keys[a:b], counts[a:b], length)
        self._text_chars += sum(map(len, texts))


TABLE = TokenTable()
