"""The ranking of OpenClaw's memory search: recall metadata, decay, importance, MMR, merge.

Each function names the OpenClaw function it ports (memory-core 2026.9.6,
docs/notes/openclaw-sqlite.md section 6): the 30-day half-life decay of dated
notes, the importance multiplier, MMR over snippet tokens, the hybrid merge
``0.7 * vectorScore + 0.3 * keywordScore`` with its exact-path tiers, and the
keyword-only finish.
"""

from __future__ import annotations

import functools
import math
import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from core.openclaw.memindex import quote
from core.openclaw.memsearch_chunks import GenerationTables
from core.openclaw.memsearch_keyword import sort_keyword_hits
from core.openclaw.memsearch_recall import live_recall
from core.openclaw.memsearch_records import MemoryCandidate
from core.openclaw.memsearch_text import (
    locale_sort_key,
    path_forms,
)
from core.openclaw.memsearch_vectors import index_signature

if TYPE_CHECKING:
    from core.openclaw.memindex import MemoryIndex
    from core.openclaw.memindex_records import Attached
    from core.openclaw.memsearch_records import MemoryHit, TimeFrom

VECTOR_WEIGHT = 0.7
TEXT_WEIGHT = 0.3
HALF_LIFE_DAYS = 30.0
DAY_MS = 864e5
INVALID_PROJECT_KEY = "!invalid-project-annotation"
_DATED = re.compile(r"(?:^|/)memory/(?:[^/]+/)*(\d{4})-(\d{2})-(\d{2})(?:-[^/]+)?\.md$")


# -- recall metadata, decay, importance --------------------------------------------------


def attach_recall(index: MemoryIndex, hits: list[MemoryHit]) -> list[MemoryHit]:
    """``attachRecallMetadata``: keep live chunks; importance, provenance, session mtimes."""
    if not hits or index.layout.chunks is None:
        return hits
    live, attached = recall_rows(index, list({h.id for h in hits}))
    session_mtimes = index.file_mtimes("sessions", [h.path for h in hits if h.source == "sessions"])
    get = attached.get
    out = []
    for h in hits:
        if h.id not in live:
            continue
        out.append(h)
        a = get(h.id)
        if a is not None:
            importance, triggers, project_key, provenance = a
            if importance is not None:
                h.importance = importance
            if triggers is not None:
                h.triggers = triggers
            if project_key is not None:
                h.project_key = project_key
            if provenance:
                h.provenance = provenance
        if h.source == "sessions":
            h.source_mtime = session_mtimes.get(h.path)
    return out


def recall_rows(index: MemoryIndex, ids: list[str]) -> tuple[set[str], dict[str, Attached]]:
    """Which of *ids* (distinct) are chunks now, and what their recall rows attach to a hit."""
    found = live_recall(index, ids)  # one join where it reads the same rows
    if found is not None:
        return found
    live: set[str] = set()
    for i in range(0, len(ids), 500):
        part = ids[i : i + 500]
        marks = ", ".join("?" * len(part))
        sql = f"SELECT id FROM {quote(index.layout.chunks or '')} WHERE id IN ({marks})"
        live.update(str(r[0]) for r in index.db.rows(sql, part))
    return live, {i: r.attached() for i, r in index.recall_info(ids).items()}


@functools.lru_cache(maxsize=1 << 16)
def memory_date_ms(path: str) -> int | None:
    """``parseMemoryDateFromPath``: the UTC midnight of ``memory/…/YYYY-MM-DD[-x].md``."""
    norm = path.replace("\\", "/")
    norm = norm[2:] if norm.startswith("./") else norm
    m = _DATED.search(norm)
    if not m:
        return None
    try:
        day = datetime(int(m.group(1)), int(m.group(2)), int(m.group(3)), tzinfo=UTC)
    except ValueError:
        return None
    return int(day.timestamp() * 1000)


@functools.lru_cache(maxsize=1 << 16)
def is_evergreen(path: str) -> bool:
    """``isEvergreenMemoryPath``: ``MEMORY.md``, ``USER.md``, undated ``memory/*``."""
    norm = path.replace("\\", "/")
    norm = norm[2:] if norm.startswith("./") else norm
    if norm in ("MEMORY.md", "USER.md"):
        return True
    return norm.startswith("memory/") and not _DATED.search(norm)


WARM_PATHS = 1 << 14
"""Indexes of more files leave their paths' caches to fill as searches find them."""


def _warm_paths(index: MemoryIndex) -> frozenset[str] | None:
    """Every per-path cache a search reads, filled for each of *index*'s files.

    A search finds ~150 chunks of as many files, each one's locale sort key, date,
    evergreen test and exact-path forms computed at first sight (about 3 us each):
    an index's files are few beside its chunks (5,000 for 50,000 chunks: 15 ms).
    Returns every exact-path form of the chunks' paths (see
    :func:`~core.openclaw.memsearch_text.exact_path_matcher`); None past
    :data:`WARM_PATHS` files.
    """
    table = quote(index.layout.chunks or "")
    paths = index.db.rows(f"SELECT DISTINCT path FROM {table} LIMIT {WARM_PATHS + 1}")
    if len(paths) > WARM_PATHS:
        return None
    forms: set[str] = set()
    texts = [path for (path,) in paths if isinstance(path, str)]
    for path in texts:
        memory_date_ms(path)
        is_evergreen(path)
        locale_sort_key(path)
        forms.update(path_forms(path))
    # a path that is not text: no set of forms stands for it
    return frozenset(forms) if len(texts) == len(paths) else None


PATH_CACHES = GenerationTables(index_signature)


def warm_path_caches(index: MemoryIndex) -> frozenset[str] | None:
    """The per-path caches filled for *index*'s files, once per index generation.

    Returns their exact-path forms (None: not known yet, or too many files).
    """
    found: frozenset[str] | None = PATH_CACHES.get(index, _warm_paths)
    return found


@dataclass(frozen=True, slots=True)
class Clock:
    """Where timestamps come from: the search time, the workspace, the index's mtimes."""

    now_ms: int
    workspace: Path | None
    index_mtimes: dict[str, float | None]


def _timestamp(c: MemoryCandidate, clock: Clock) -> tuple[float | None, TimeFrom]:
    h = c.hit
    return timestamp(h.source, h.path, h.source_mtime, clock)


def timestamp(
    source: str, path: str, source_mtime: float | None, clock: Clock
) -> tuple[float | None, TimeFrom]:
    """``extractTimestamp`` of a hit (whole milliseconds, as a JavaScript Date)."""
    if source == "sessions":
        m = source_mtime
        return (
            (math.trunc(m), "session-mtime")
            if m is not None and math.isfinite(m)
            else (None, "none")
        )
    dated = memory_date_ms(path)
    if dated is not None:
        return float(dated), "path-date"
    if source == "memory" and is_evergreen(path):
        return None, "evergreen"
    if clock.workspace is None:
        # OpenClaw stats the workspace file; without a workspace the indexed mtime stands in.
        m = clock.index_mtimes.get(path)
        return (math.trunc(m), "index-mtime") if m is not None else (None, "none")
    target = Path(path) if os.path.isabs(path) else clock.workspace / path
    try:
        return float(target.stat().st_mtime_ns // 1_000_000), "file-mtime"
    except OSError:
        return None, "none"


_DECAY_RATE = -(math.log(2) / HALF_LIFE_DAYS)
"""``-(Math.LN2 / halfLifeDays)``: the same float as computed per candidate."""


def apply_decay(cands: list[MemoryCandidate], clock: Clock) -> None:
    """``applyTemporalDecayToHybridResults``: ``score * exp(-ln2/30 * ageDays)``."""
    for c in cands:
        c.pre_decay = c.score
        ts, origin = _timestamp(c, clock)
        c.time_from = origin
        if ts is None:
            continue
        c.time_ms = ts
        c.age_days, decay = decay_at(ts, clock.now_ms)
        if decay is None:
            continue
        c.decay = decay
        c.score = c.score * decay


def decay_at(ts: float, now_ms: int) -> tuple[float, float | None]:
    """The age in days of a time *ts* and its decay factor (None: an age of no number)."""
    age = max(0.0, (now_ms - ts) / DAY_MS)
    if not math.isfinite(age):
        return age, None
    return age, math.exp(_DECAY_RATE * age)


def importance_multiplier(importance: int | None) -> float:
    """``importanceMultiplier``: 0.75 + 0.05 per importance point (1..10)."""
    if importance is None:
        return 1.0
    return 0.75 + max(1, min(10, math.floor(importance))) * 0.05


def apply_importance(cands: list[MemoryCandidate]) -> list[MemoryCandidate]:
    """Importance, then OpenClaw's project step (drops invalid project annotations)."""
    out = []
    for c in cands:
        h = c.hit
        if h.importance is not None:
            c.importance_multiplier = importance_multiplier(h.importance)
            c.score = c.score * c.importance_multiplier
        else:  # a multiplier of 1.0: the same score
            c.importance_multiplier = 1.0
        if project_ok(h.project_key):
            out.append(c)
    return out


def project_ok(key: str | None) -> bool:
    """Whether a hit of this project key stays (OpenClaw drops invalid annotations)."""
    return not key or INVALID_PROJECT_KEY not in [k.strip() for k in key.split(";")]


def exact_tie(content: float) -> float:
    """``scoreExactPathTieForTemporalDecay``."""
    return (1 + max(0.0, min(1.0, content))) / 2


# -- hybrid ---------------------------------------------------------------------------


def finalize_keyword_only(
    hits: list[MemoryHit], clock: Clock, max_results: int, min_score: float
) -> tuple[list[MemoryCandidate], list[MemoryCandidate]]:
    """``finalizeKeywordOnlyResults``: decay, importance, sort, minScore (relaxed to 0)."""
    cands = []
    for h in hits:  # positional (the fields' order): half the time of keywords, per hit
        c = MemoryCandidate(
            h, 0.0, h.text_score, h.score, h.path_score, h.exact, False, True, h.has_body
        )
        c.content_score = h.score if h.has_body else 0.0
        c.score = exact_tie(c.content_score) if h.exact > 0 else h.score
        cands.append(c)
    apply_decay(cands, clock)
    ranked = apply_importance(cands)

    for c in ranked:
        c.hit.score = c.score  # compareKeywordSearchHits reads the decayed score

    order = {id(h): i for i, h in enumerate(sort_keyword_hits([c.hit for c in ranked], False))}
    ranked.sort(key=lambda c: order[id(c.hit)])
    for c in ranked:
        c.ranking_score = c.score
        if c.exact > 0:
            c.score = 1.0
    strict = [c for c in ranked if c.score >= min_score]
    chosen = strict[:max_results] if strict else [c for c in ranked if c.score >= 0][:max_results]
    return ranked, chosen
