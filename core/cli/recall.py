"""The recall commands of the CLI: ``recall``, ``knowledge`` and ``eval``."""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import platformdirs

from core.cli.output import CliError
from core.dataset.discovery import discover
from core.embed import load_embedder
from core.io.problems import FormatError
from core.io.timefmt import utc_minute_ms
from core.openclaw.config import MemoryContextConfig, load_openclaw_config
from core.openclaw.memory_home import parse_now
from core.recall.block import BLOCK_ESTIMATOR, hard_cap, search_limit
from core.recall.engine import RecallSettings, recall
from core.recall.evaluate import load_labels
from core.recall.hybrid import SearchConfig
from core.recall.knowledge_search import KnowledgeIndex
from core.recall.lab import run_lab
from core.recall.rankings import DEFAULT_RANKING, SEED, Ranking, get_ranking
from core.recall.warm_store import StoreSettings, WarmStore
from core.store.knowledge import load_knowledge

if TYPE_CHECKING:
    import argparse

    from core.io.problems import Problem
    from core.recall.lab import LabReport


class RecallCliError(CliError):
    """A user-facing error of the recall commands."""


@dataclass(slots=True)
class Opened:
    """A store opened for recall, with the settings read from the agent's config."""

    store: WarmStore | None
    knowledge: KnowledgeIndex | None
    config: MemoryContextConfig
    window: int
    notes: list[str]
    now_ms: int
    evict: bool


def open_for_recall(args: argparse.Namespace) -> Opened:
    """Open DATA's memory-context store and knowledge log for searching."""
    found = discover(args.data)
    if found.memory_context is None:
        raise RecallCliError(f"{args.data}: no memory-context store found")
    mc = MemoryContextConfig()
    window = 200_000
    notes: list[str] = []
    if found.config is not None:
        try:
            cfg = load_openclaw_config(found.config)
        except FormatError as exc:  # recall still works, with the agent's defaults
            notes.append(f"{exc}; recall uses the default memoryContext settings")
        else:
            mc = cfg.memory_context
            window, _source = cfg.context_window_for(None)
    if getattr(args, "window", None):
        window = args.window
    name = getattr(args, "embedder", None) or mc.embedding_model
    if name not in ("hash", "transformer"):
        name = "hash"
    embedder, note = load_embedder(name)
    if note:
        notes.append(note)
    evict = not getattr(args, "no_evict", False)
    now_ms = parse_now(getattr(args, "now", None))
    settings = StoreSettings(
        max_segments=mc.max_segments if evict else -1,
        eviction_days=float(mc.eviction_days) if evict else 0.0,
        redaction=mc.redaction,
        agent_embedder=mc.embedding_model,
    )
    folder = found.memory_context
    store = None
    if (folder / "segments.jsonl").exists():
        cache = Path(platformdirs.user_cache_dir("memlens"))
        store = WarmStore.open(folder, embedder, settings, cache_dir=cache, now_ms=now_ms)
        missing = len(store.missing_vector_slots())
        if missing:
            if missing > 200:
                print(
                    f"memlens: embedding {missing} segments with {embedder.name}…", file=sys.stderr
                )
            store.embed_missing()
    knowledge = None
    if (folder / "knowledge.jsonl").exists():
        try:
            knowledge = KnowledgeIndex(load_knowledge(folder / "knowledge.jsonl"))
        except FormatError as exc:  # segments are searched all the same
            notes.append(f"{exc}; no knowledge facts searched")
    return Opened(store, knowledge, mc, window, notes, now_ms, evict)


def chosen_ranking(args: argparse.Namespace) -> Ranking:
    """``--ranking NAME`` (default: the recommended ranking)."""
    try:
        return get_ranking(getattr(args, "ranking", None) or DEFAULT_RANKING)
    except ValueError as exc:
        raise RecallCliError(f"--ranking: {exc}") from None


def search_config(
    args: argparse.Namespace, mc: MemoryContextConfig, ranking: Ranking = SEED
) -> SearchConfig:
    """The search knobs: the agent's config and the ranking's weights, then the flags."""
    cfg = ranking.search_config(
        SearchConfig(min_score=mc.auto_recall_min_score, cross_session=mc.cross_session)
    )
    overrides: dict[str, Any] = {}
    for flag, field_name in (
        ("vector_weight", "vector_weight"),
        ("bm25_weight", "bm25_weight"),
        ("min_score", "min_score"),
        ("decay", "decay"),
        ("limit", "limit"),
    ):
        value = getattr(args, flag, None)
        if value is not None:
            overrides[field_name] = value
    if getattr(args, "cross_session", False):
        overrides["cross_session"] = True
    return cfg.with_(**overrides) if overrides else cfg


def _when(ms: int) -> str:
    return utc_minute_ms(ms)


def cmd_recall(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """``memlens recall DATA QUERY``: hits with every component, and the block."""
    opened = open_for_recall(args)
    ranking = chosen_ranking(args)
    cfg = search_config(args, opened.config, ranking)
    settings = RecallSettings(
        hard_cap_tokens=opened.config.hard_cap_tokens,
        window=opened.window,
        search=cfg,
        limit_from_cap=args.limit is None,
        ranking=ranking.name,
    )
    if args.session is None and not cfg.cross_session:
        cfg = cfg.with_(cross_session=True)
        settings = replace(settings, search=cfg)
        opened.notes.append("no --session given: searching every session")
    preview = recall(
        args.query,
        store=opened.store,
        knowledge=opened.knowledge,
        settings=settings,
        session_id=args.session,
        now_ms=opened.now_ms,
    )
    block = preview.block
    hits = preview.search.hits if preview.search else []
    payload: dict[str, Any] = {
        "query": args.query,
        "session": args.session,
        "skipped": preview.skipped,
        "hard_cap": preview.hard_cap,
        "config": {
            "ranking": ranking.name,
            "limit": preview.search.config.limit if preview.search else None,
            "min_score": cfg.min_score,
            "vector_weight": cfg.vector_weight,
            "bm25_weight": cfg.bm25_weight,
            "decay": cfg.decay,
            "cross_session": cfg.cross_session,
            "embedder": opened.store.embedder.name if opened.store else None,
        },
        "knowledge": [
            {
                "id": h.fact.id,
                "type": h.fact.type,
                "content": h.fact.content,
                "score": h.score,
                "matched": list(h.matched),
                "missing": list(h.missing),
            }
            for h in preview.knowledge
        ],
        "hits": [
            {
                "id": h.segment.id,
                "session": h.segment.session_id,
                "role": h.segment.role,
                "timestamp": h.segment.timestamp,
                "content": h.segment.content,
                "vector": h.vector_score,
                "bm25_raw": h.bm25_raw,
                "bm25_norm": h.bm25_norm,
                "decay": h.decay,
                "score": h.score,
                "effective": h.effective,
                "vector_rank": h.vector_rank,
                "bm25_rank": h.bm25_rank,
                "rank": h.rank,
            }
            for h in hits
        ],
        "candidates": len(preview.search.candidates) if preview.search else 0,
        "block": block.text if block else "",
        "block_tokens": block.tokens if block else 0,
        "block_tokens_estimator": BLOCK_ESTIMATOR,
        "cut": [{"kind": "detail", "id": d.segment.id, "why": why} for d, why in block.cut_details]
        + [
            {"kind": "knowledge", "content": f.content, "why": why}
            for f, why in block.cut_knowledge
        ]
        if block
        else [],
        "notes": opened.notes,
    }

    def text() -> str:
        out = [
            f"query: {args.query!r}  hard cap: {preview.hard_cap} tokens  ranking: {ranking.name}"
        ]
        out.extend(f"note: {n}" for n in opened.notes)
        if preview.skipped:
            out.append(preview.skipped)
            return "\n".join(out)
        out.append(f"knowledge hits: {len(preview.knowledge)}")
        for k in preview.knowledge:
            out.append(f"  {k.score:.3f} [{k.fact.type}] {k.fact.content[:90]}")
        out.append(f"detail hits: {len(hits)} of {payload['candidates']} candidates")
        out.append("  rank  score  eff.   vec  (rank)  bm25n (rank)  decay  when             role")
        for h in hits:
            out.append(
                f"  {h.rank:>4} {h.score:.3f}  {h.effective:.3f}  {h.vector_score:.3f} "
                f"({h.vector_rank or '-':>4})  {h.bm25_norm:.3f} ({h.bm25_rank or '-':>4})  "
                f"{h.decay:.3f}  {_when(h.segment.timestamp)} {h.segment.role}: "
                f"{' '.join(h.segment.content.split())[:60]}"
            )
        out.append(f"block ({payload['block_tokens']} tokens, {BLOCK_ESTIMATOR}):")
        out.append(payload["block"] or "  (nothing would be injected)")
        for c in payload["cut"]:
            out.append(f"cut {c['kind']}: {c.get('id') or c.get('content', '')[:40]}: {c['why']}")
        return "\n".join(out)

    return payload, text()


def cmd_knowledge(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """``memlens knowledge DATA QUERY``: knowledge hits with matched tokens and idf."""
    found = discover(args.data)
    if found.memory_context is None or not (found.memory_context / "knowledge.jsonl").exists():
        raise RecallCliError(f"{args.data}: no knowledge.jsonl found")
    index = KnowledgeIndex(load_knowledge(found.memory_context / "knowledge.jsonl"))
    hits = index.search(args.query, limit=args.limit, min_score=args.min_score, mode=args.mode)
    payload = {
        "query": args.query,
        "mode": args.mode,
        "hits": [h.to_json() for h in hits],
    }
    lines = [f"{len(hits)} fact(s) for {args.query!r} ({args.mode})"]
    for h in hits:
        lines.append(f"{h.score:.3f} {h.fact.id[:8]} [{h.fact.type}] {h.fact.content[:90]}")
        lines.append(
            f"      matched {', '.join(h.matched) or '-'}; missing {', '.join(h.missing) or '-'}"
        )
    return payload, "\n".join(lines)


def cmd_eval(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """``memlens eval DATA --labels FILE``: recall@k, MRR, nDCG@10, row by row."""
    try:
        ks = tuple(sorted({int(k) for k in args.k.split(",") if k.strip()}))
    except ValueError:
        raise RecallCliError(f"--k {args.k!r}: give whole numbers, e.g. 1,5,10") from None
    if not ks or min(ks) < 1:
        raise RecallCliError("--k needs numbers of 1 or more")
    ranking = chosen_ranking(args)
    labels, problems = load_labels(args.labels)
    opened = open_for_recall(args)
    if opened.store is None:
        raise RecallCliError(f"{args.data}: no segments.jsonl to evaluate against")
    mc = opened.config
    agent_limit = search_limit(hard_cap(mc.hard_cap_tokens, opened.window))
    agent = SearchConfig(
        limit=agent_limit, min_score=mc.auto_recall_min_score, cross_session=mc.cross_session
    )
    cfg = search_config(args, mc, ranking)
    # The ranking row measures ranking: no minScore and no decay unless asked for.
    cfg = cfg.with_(
        limit=args.limit if args.limit is not None else agent_limit,
        min_score=args.min_score if args.min_score is not None else 0.0,
        decay=args.decay if args.decay is not None else 1.0,
    )
    lab = run_lab(
        opened.store,
        labels,
        ks,
        ranking=ranking,
        ranking_config=cfg,
        agent_config=None if args.no_agent_row else agent,
        now_ms=opened.now_ms,
    )
    lab.rows[0].problems.extend(problems)
    load = opened.store.stats.load
    lab.run = {
        "labels": str(args.labels),
        "labels_read": len(labels),
        "now_ms": opened.now_ms,
        "now": _when(opened.now_ms),
        "evict": opened.evict,
        "eviction_days": mc.eviction_days if opened.evict else None,
        "max_segments": mc.max_segments if opened.evict else None,
        "segments": len(opened.store),
        "evicted_age": load.evicted_age if load is not None else 0,
        "evicted_count": load.evicted_count if load is not None else 0,
        "embedder": opened.store.embedder.name,
    }
    payload = lab.to_json()
    payload["notes"] = opened.notes
    return payload, _eval_text(lab, payload, ks, problems)


def _eval_text(
    lab: LabReport, payload: dict[str, Any], ks: tuple[int, ...], problems: list[Problem]
) -> str:
    run = lab.run
    first = lab.rows[0]
    evict = (
        f"eviction on (evictionDays {run['eviction_days']}, maxSegments {run['max_segments']})"
        if run["evict"]
        else "eviction off (--no-evict)"
    )
    if run["evicted_age"] or run["evicted_count"]:
        evict += (
            f": {run['evicted_age']} segments older than evictionDays and "
            f"{run['evicted_count']} over maxSegments left out before ranking"
        )
    lines = [
        f"{run['labels_read']} labelled queries, {run['segments']} segments in the store, "
        f"embedder {run['embedder']}, now {run['now']}, {evict}"
    ]
    lines.extend(f"note: {n}" for n in payload["notes"])
    head = "  ".join(f"R@{k:<3}" for k in ks)
    lines.append(f"{'row':<10} {head}  MRR    nDCG@10  p50 ms  n    skipped")
    for row in lab.rows:
        m = row.metrics()
        figures = "  ".join(f"{m[f'recall@{k}']:.3f}" for k in ks)
        lines.append(
            f"{row.name:<10} {figures}  {m['mrr']:.3f}  {m['ndcg@10']:.3f}    "
            f"{m['p50_ms']:<7.2f} {m['n']:<4} {m['skipped']['count']}"
        )
    for row in lab.rows:
        c = row.config
        lines.append(
            f"  {row.name}: {row.title or row.ranking}; limit {c.limit}, ranked {row.depth} deep, "
            f"minScore {c.min_score}, decay {c.decay}, weights {c.vector_weight}/{c.bm25_weight}"
            if row.ranking != "rank-bm25"
            else f"  {row.name}: {row.title}; ranked {row.depth} deep"
        )
    for reason, count in first.skipped_reasons().items():
        lines.append(f"skipped {count}: {reason}")
    if not first.skipped_reasons():
        lines.append("skipped 0")
    lines.append(f"queries ({first.name} row):")
    for q in first.queries:
        if q.skipped:
            lines.append(f"  line {q.label.line}: skipped: {q.skipped} {q.label.query[:50]!r}")
            continue
        lines.append(
            f"  line {q.label.line}: rr {q.reciprocal_rank:.2f} ndcg {q.ndcg10:.2f} "
            f"{q.label.query[:50]!r}"
            + (f"\n      miss: {q.miss_explanation}" if q.miss_explanation else "")
        )
    lines.extend(f"  {p}" for p in problems)
    return "\n".join(lines)


__all__ = [
    "FormatError",
    "RecallCliError",
    "cmd_eval",
    "cmd_knowledge",
    "cmd_recall",
]
