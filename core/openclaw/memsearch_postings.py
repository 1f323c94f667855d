"""FTS5's matches and ``bm25()`` ranks of OpenClaw's body query, from postings in memory.

The body query (:func:`core.openclaw.memsearch_fts.ranked_body_rows`) costs SQLite
about 3.5 ms at 50,000 chunks: FTS5 reads each term's doclist and computes ``bm25()``
for every match. For an index whose body table FTS5 tokenizes with the default
``unicode61`` tokenizer and whose texts are all ASCII, that tokenizer is simple
(``[0-9A-Za-z]+``, folded to lower case), so the postings can be held in memory per
index generation and the same answer computed in numpy:

* a match is a row holding every phrase of the MATCH query (OpenClaw's
  ``"tok" AND "tok" ...``; a token with an underscore is a phrase of several terms
  that must follow each other);
* its rank is FTS5's ``fts5Bm25Function`` to the last bit: ``-sum(idf * (f * (k1 +
  1)) / (f + k1 * (1 - b + b * D / avgdl)))`` over the phrases in query order, k1 1.2,
  b 0.75, ``idf = log((N - n + 0.5) / (n + 0.5))`` (1e-6 when <= 0), ``f`` the
  phrase's instances in the row, ``D`` the row's size and ``N`` and ``avgdl`` from
  FTS5's own ``_docsize`` and averages records, read from the database.

Everything it cannot reproduce returns None and the caller asks SQLite: another
tokenizer or option, a non-ASCII text anywhere in the table, a row whose token count
is not FTS5's, a query token that is not ASCII or that the tokenizer empties. When
the table is built, a few queries of its own words are answered both ways and any
difference in a match or a rank's bits (a SQLite compiled to fuse multiply-adds,
say) turns it off for that index (``tests/core/test_memsearch_postings.py`` compares
the two over random corpora and queries).
"""

from __future__ import annotations

import math
import re
from array import array
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from core.io.problems import FormatError
from core.openclaw.memindex import quote
from core.openclaw.memsearch_chunks import GenerationTables
from core.openclaw.memsearch_fts import content_columns, fts5_options, ranked_body_rows
from core.openclaw.memsearch_vectors import canonical, index_signature

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    import numpy.typing as npt

    from core.openclaw.memindex import MemoryIndex

ENABLED = True
"""False: every body query goes to SQLite (a test compares the two)."""

K1, B = 1.2, 0.75
"""FTS5's bm25 constants (``fts5Bm25Function``)."""
_TOKEN = re.compile(rb"[0-9a-z]+")
"""unicode61's ASCII tokens (of lowered text)."""
_QUERY = re.compile(r'"([^"]*)"')
MAX_TOKENS = 1 << 22
"""Tables of more tokens get no postings: about 30 bytes a token are kept (120 MB here)
and the build peaks near 75 (300 MB); the total is read from FTS5's averages first."""
MAX_TOKEN_BYTES = 32_768
"""``FTS5_MAX_TOKEN_SIZE``: FTS5 cuts longer tokens; a text or query holding one is left to it."""


def _varints(blob: bytes) -> list[int]:
    """SQLite's varints (FTS5's ``_docsize`` and averages records), in order."""
    out: list[int] = []
    i = 0
    while i < len(blob):
        value = 0
        for n in range(9):
            byte = blob[i]
            i += 1
            if n == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        out.append(value)
    return out


def _sizes(blobs: list[bytes]) -> npt.NDArray[np.int64]:
    """Each ``_docsize`` record's sum (the row's tokens over every column).

    Records of one-byte varints (every column under 128 tokens) are summed in numpy.
    """
    if not blobs:
        return np.zeros(0, dtype=np.int64)
    flat = np.frombuffer(b"".join(blobs), dtype=np.uint8)
    lengths = np.fromiter(map(len, blobs), np.int64, len(blobs))
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    out = np.add.reduceat(flat.astype(np.int64), starts) if flat.size else np.zeros(len(blobs))
    out[lengths == 0] = 0
    long = flat >= 0x80
    if long.any():  # multi-byte varints: those records one at a time
        row_of = np.repeat(np.arange(len(blobs)), lengths)
        for i in np.unique(row_of[long]).tolist():
            out[i] = sum(_varints(blobs[i]))
    return out.astype(np.int64)


_WORDS = bytes(c if chr(c).isalnum() else 32 for c in range(128)).lower() + b" " * 128
"""``bytes.translate`` table: ASCII letters lowered, digits kept, anything else a space."""


@dataclass(frozen=True, slots=True)
class BodyPostings:
    """One body table in memory: its rows, sizes, postings and token sequences."""

    table: str
    rowids: npt.NDArray[np.int64]
    """FTS rowids, ascending: position r in every array below is this row."""
    rows: list[tuple[Any, ...]]
    """``(id, path, source, start_line, end_line, text)`` of each row, as SQLite gives them."""
    live: npt.NDArray[np.bool_]
    """The row's chunk id is in the chunks table (OpenClaw's ``EXISTS`` condition)."""
    sources: npt.NDArray[np.object_]
    sizes: npt.NDArray[np.float64]
    n_row: int
    avgdl: float
    terms: dict[bytes, int]
    starts: npt.NDArray[np.int64]
    """Term t's rows are ``post_rows[starts[t]:starts[t + 1]]`` (ascending)."""
    post_rows: npt.NDArray[np.int32]
    post_tf: npt.NDArray[np.int32]
    seq: npt.NDArray[np.int32]
    """Every row's term ids in text order, the rows one after the other."""
    seq_at: npt.NDArray[np.int64]
    """Row r's places in :attr:`seq` are ``seq_at[r]`` to ``seq_at[r + 1]``."""
    places: npt.NDArray[np.int32]
    """Term t's places in :attr:`seq` are ``places[place_at[t]:place_at[t + 1]]``."""
    place_at: npt.NDArray[np.int64]
    distinct: npt.NDArray[np.int64]
    """Each row's distinct terms."""
    lengths: npt.NDArray[np.int64]
    """Each row's text length (characters: the texts are ASCII)."""
    underscore: npt.NDArray[np.bool_]
    """The row's text holds an underscore (its search tokens are not its terms)."""
    source_masks: dict[tuple[str, ...], npt.NDArray[np.bool_]] = field(default_factory=dict)
    """:meth:`_from`'s masks."""

    def holding(self, term: int, rows: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
        """Which of *rows* (positions) hold the term *term* (-1: none do)."""
        if term < 0:
            return np.zeros(len(rows), dtype=bool)
        posting = self.post_rows[self.starts[term] : self.starts[term + 1]]
        at = np.searchsorted(posting, rows)
        np.minimum(at, len(posting) - 1, out=at)
        return posting[at] == rows  # type: ignore[no-any-return]

    def phrases(self, match: str) -> list[list[int]] | None:
        """OpenClaw's MATCH string as term ids per phrase (-1: a term no row has)."""
        tokens = _QUERY.findall(match)
        if not tokens or match != " AND ".join(f'"{t}"' for t in tokens):
            return None
        out: list[list[int]] = []
        for token in tokens:
            if not token.isascii():
                return None
            words = _TOKEN.findall(token.encode("ascii").lower())
            if not words or max(map(len, words)) >= MAX_TOKEN_BYTES:
                return None  # an empty phrase, a token FTS5 cuts short: FTS5's own business
            out.append([self.terms.get(w, -1) for w in words])
        return out

    def _phrase(self, ids: list[int]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """Rows holding the phrase *ids* (ascending), and its instances in each."""
        if any(t < 0 for t in ids):
            return np.zeros(0, np.int64), np.zeros(0, np.float64)
        first = ids[0]
        if len(ids) == 1:
            span = slice(self.starts[first], self.starts[first + 1])
            return self.post_rows[span].astype(np.int64), self.post_tf[span].astype(np.float64)
        at = self.places[self.place_at[first] : self.place_at[first + 1]].astype(np.int64)
        at = at[at + len(ids) - 1 < len(self.seq)]
        row = np.searchsorted(self.seq_at, at, side="right") - 1
        ok = at + len(ids) <= self.seq_at[row + 1]  # the phrase ends within the row
        for j, t in enumerate(ids[1:], 1):
            ok &= self.seq[at + j] == t
        rows, counts = np.unique(row[ok], return_counts=True)
        return rows.astype(np.int64), counts.astype(np.float64)

    def ranks(self, match: str) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]] | None:
        """Row positions matching *match* (ascending) and FTS5's ``bm25()`` of each."""
        phrases = self.phrases(match)
        if phrases is None:
            return None
        found = [self._phrase(p) for p in phrases]
        rows = found[0][0]
        for other, _ in found[1:]:  # sorted, distinct: kept where a mask of the other says
            mask = np.zeros(self.n_row, dtype=bool)
            mask[other] = True
            rows = rows[mask[rows]]
        score = np.zeros(len(rows), dtype=np.float64)
        norm = (1 - B) + (B * self.sizes[rows]) / self.avgdl
        for p_rows, p_freq in found:  # in query order, as fts5Bm25Function adds them
            n_hit = len(p_rows)
            idf = math.log((self.n_row - n_hit + 0.5) / (n_hit + 0.5))
            if idf <= 0.0:
                idf = 1e-6
            f = p_freq[np.searchsorted(p_rows, rows)]
            score += idf * ((f * (K1 + 1.0)) / (f + K1 * norm))
        return rows, -1.0 * score

    def ranked(
        self, match: str, sources: Sequence[str], limit: int
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]] | None:
        """:meth:`ranked_rows` as row positions and their ranks, or None."""
        found = self.ranks(match)
        if found is None:
            return None
        rows, ranks = found
        keep = self.live[rows]
        if sources:
            keep &= self._from(tuple(sources))[rows]
        rows, ranks = rows[keep], ranks[keep]
        order = np.lexsort((rows, ranks))[: max(limit, 0)]  # by rank, then rowid
        return rows[order], ranks[order]

    def _from(self, sources: tuple[str, ...]) -> npt.NDArray[np.bool_]:
        """Which rows are of one of *sources* (kept per sources: a search reads ~200 rows)."""
        found = self.source_masks.get(sources)
        if found is None:
            found = np.isin(self.sources, list(sources))
            if len(self.source_masks) < 8:
                self.source_masks[sources] = found
        return found

    def ranked_rows(
        self, match: str, sources: Sequence[str], limit: int
    ) -> list[tuple[Any, ...]] | None:
        """:func:`~core.openclaw.memsearch_fts.ranked_body_rows`'s answer, or None."""
        found = self.ranked(match, sources, limit)
        if found is None:
            return None
        return [
            (*self.rows[r], rank)
            for r, rank in zip(found[0].tolist(), found[1].tolist(), strict=True)
        ]


def _build(index: MemoryIndex, table: str, chunks: str) -> BodyPostings | None:
    opts = fts5_options(index, table)
    if opts is None or opts.get("tokenize", "unicode61") != "unicode61":
        return None
    if opts.get("detail", "full") != "full" or opts.get("columnsize", "1") != "1":
        return None
    cols = content_columns(index, table)
    if cols is None or not _text_ids(index, chunks):
        return None
    avg = index.db.rows(f"SELECT block FROM {quote(table + '_data')} WHERE id = 1")
    if not avg or not isinstance(avg[0][0], bytes):
        return None
    totals = _varints(avg[0][0])
    n_row, n_token = totals[0], sum(totals[1:])
    if n_row == 0 or n_token == 0 or n_token > MAX_TOKENS:  # too big: nothing read
        return None
    content = index.db.rows(
        f"SELECT id, {', '.join(cols)} FROM {quote(table + '_content')} ORDER BY id"
    )
    sizes = dict(index.db.rows(f"SELECT id, sz FROM {quote(table + '_docsize')}"))
    if n_row != len(content) or len(sizes) != len(content):
        return None
    texts = [r[6] for r in content]
    if not all(isinstance(t, str) and t.isascii() for t in texts):
        return None
    if not all(isinstance(r[1], str) for r in content):  # the EXISTS test compares ids as text
        return None
    terms: dict[bytes, int] = {}
    number = terms.setdefault
    ids = array("i")
    lengths = np.zeros(len(texts), dtype=np.int64)
    for r, text in enumerate(texts):  # term ids numbered in order of first appearance
        words = text.encode("ascii").translate(_WORDS).split()
        if len(text) >= MAX_TOKEN_BYTES and max(map(len, words), default=0) >= MAX_TOKEN_BYTES:
            return None  # FTS5 cuts such a token short: its postings are not these
        lengths[r] = len(words)
        ids.extend([number(w, len(terms)) for w in words])
        if len(ids) > MAX_TOKENS:
            return None
    blobs = [sizes.get(r[0]) for r in content]
    if not all(isinstance(b, bytes) for b in blobs):
        return None
    fts_sizes = _sizes(blobs)  # type: ignore[arg-type]
    if not np.array_equal(fts_sizes, lengths) or int(fts_sizes.sum()) != n_token:
        return None
    seq = np.frombuffer(ids, dtype=np.int32) if ids else np.zeros(0, np.int32)
    seq_at = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    row_of = np.repeat(np.arange(len(content), dtype=np.int64), lengths)
    keys, tf = np.unique(seq.astype(np.int64) * len(content) + row_of, return_counts=True)
    del row_of
    post_terms, post_rows = np.divmod(keys, len(content))
    starts = np.searchsorted(post_terms, np.arange(len(terms) + 1))
    places = np.argsort(seq, kind="stable")  # by term, then place
    place_at = np.searchsorted(seq[places], np.arange(len(terms) + 1))
    live_ids = {r[0] for r in index.db.rows(f"SELECT id FROM {quote(chunks)}")}
    canon = canonical(index)  # ids, paths and texts: the objects the other tables hold
    return BodyPostings(
        table,
        np.array([r[0] for r in content], dtype=np.int64),
        [(canon(r[1]), _canon(canon, r[2]), *r[3:6], canon(r[6])) for r in content],
        np.array([r[1] in live_ids for r in content], dtype=bool),
        np.array([r[3] for r in content], dtype=object),
        fts_sizes.astype(np.float64),
        n_row,
        float(n_token) / float(n_row),
        terms,
        starts.astype(np.int64),
        post_rows.astype(np.int32),
        tf.astype(np.int32),
        seq,
        seq_at,
        places.astype(np.int32),
        place_at.astype(np.int64),
        np.bincount(post_rows, minlength=len(content)).astype(np.int64),
        np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)),
        np.fromiter(("_" in t for t in texts), dtype=bool, count=len(texts)),
    )


def _canon(canon: Callable[[str], str], value: Any) -> Any:
    return canon(value) if isinstance(value, str) else value


PROBES = 12
"""Queries answered both ways when a table is built (any difference turns it off)."""
PROBE_ROWS = 300
"""Rows of each probe compared with SQLite's through OpenClaw's live and source conditions."""


def _agrees(index: MemoryIndex, post: BodyPostings, chunks: str) -> bool:
    """Whether SQLite gives the same matches and rank bits for a few of the table's words.

    The most common word (its idf may clamp to 1e-6), the rarest and a few between, two
    words together, and a phrase of two words of the first text.
    """
    by_count = np.argsort(-np.diff(post.starts), kind="stable").tolist()
    words = list(post.terms)
    step = max(1, len(by_count) // PROBES)
    picks = [words[i] for i in [*by_count[::step][:PROBES], by_count[-1]]]
    queries = [f'"{w.decode()}"' for w in picks]
    if len(picks) >= 3:
        queries.append(f'"{picks[1].decode()}" AND "{picks[2].decode()}"')
    if post.seq_at[1] >= 2:  # a phrase: the first two words of the first text
        a, b = post.seq[:2].tolist()
        queries.append(f'"{words[a].decode()}_{words[b].decode()}"')
    fts = quote(post.table)
    sql = f"SELECT rowid, rank FROM {fts} WHERE {fts} MATCH ? AND {fts}.rank MATCH 'bm25()'"
    for match in queries:
        ours = post.ranks(match)
        if ours is None:
            return False
        found = index.db.rows(sql, [match])
        if not all(type(r) is int and type(k) is float for r, k in found):
            return False
        rowids = np.array([r for r, _ in found], dtype=np.int64)
        ranks = np.array([k for _, k in found], dtype=np.float64)
        order = np.argsort(rowids, kind="stable")
        if not np.array_equal(rowids[order], post.rowids[ours[0]]):
            return False
        if not np.array_equal(ranks[order].view(np.int64), ours[1].view(np.int64)):
            return False
        for sources in ((), (str(post.sources[0]),)):  # the live and source conditions too
            want = ranked_body_rows(index, post.table, chunks, sources, match, (), PROBE_ROWS)
            if want != post.ranked_rows(match, sources, PROBE_ROWS):
                return False
    return True


def _checked(index: MemoryIndex, table: str, chunks: str) -> BodyPostings | None:
    post = _build(index, table, chunks)
    return post if post is not None and _agrees(index, post, chunks) else None


def _text_ids(index: MemoryIndex, chunks: str) -> bool:
    """Whether the chunks' ``id`` compares as Python strings do (TEXT, no collation)."""
    cols = {
        str(r[1]): str(r[2]).upper() for r in index.db.rows(f"PRAGMA table_info({quote(chunks)})")
    }
    ddl = index.db.rows("SELECT sql FROM sqlite_master WHERE name = ?", (chunks,))
    return cols.get("id") == "TEXT" and bool(ddl) and "COLLATE" not in str(ddl[0][0]).upper()


def _signature(index: MemoryIndex) -> tuple[Any, ...]:
    """:func:`index_signature` and FTS5's own averages and structure records of the body table.

    The chunks' signature alone misses a write to the FTS table only; FTS5 rewrites its
    structure record (id 10) on every write and its averages (id 1) on every row change.
    """
    table = index.layout.fts
    if table is None:
        return index_signature(index)
    sql = f"SELECT id, block FROM {quote(table + '_data')} WHERE id IN (1, 10) ORDER BY id"
    try:
        fts: list[tuple[Any, ...]] = index.db.per_version(
            f"fts records {table}", lambda: index.db.rows(sql)
        )
    except FormatError:  # no readable records: the postings are never built (see _build)
        fts = [("unreadable",)]
    return (index_signature(index), tuple(fts))


POSTINGS = GenerationTables(_signature, apart=True)


def body_postings(index: MemoryIndex, table: str, chunks: str) -> BodyPostings | None:
    """The postings of *index*'s body *table*, when it has them now (see the module doc)."""
    if not ENABLED:
        return None
    found: BodyPostings | None = POSTINGS.get(index, lambda i: _checked(i, table, chunks))
    return found if found is not None and found.table == table else None
