"""The recall commands of the CLI: ``recall``, ``knowledge`` and ``eval``."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import platformdirs

from core.cli.output import CliError
from core.dataset.discovery import discover
from core.embed import load_embedder
from core.io.problems import FormatError
from core.io.timefmt import utc_minute_ms
from core.openclaw.config import MemoryContextConfig, load_openclaw_config
from core.recall.block import BLOCK_ESTIMATOR, hard_cap, search_limit
from core.recall.engine import RecallSettings, recall
from core.recall.evaluate import evaluate, load_labels
from core.recall.hybrid import SearchConfig
from core.recall.knowledge_search import KnowledgeIndex
from core.recall.warm_store import StoreSettings, WarmStore
from core.store.knowledge import load_knowledge

if TYPE_CHECKING:
    import argparse


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
    settings = StoreSettings(
        max_segments=mc.max_segments,
        eviction_days=float(mc.eviction_days),
        redaction=mc.redaction,
        agent_embedder=mc.embedding_model,
    )
    folder = found.memory_context
    store = None
    if (folder / "segments.jsonl").exists():
        cache = Path(platformdirs.user_cache_dir("memlens"))
        store = WarmStore.open(folder, embedder, settings, cache_dir=cache)
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
    return Opened(store, knowledge, mc, window, notes)


def search_config(args: argparse.Namespace, mc: MemoryContextConfig) -> SearchConfig:
    """The search knobs: the agent's config, overridden on the command line."""
    cfg = SearchConfig(min_score=mc.auto_recall_min_score, cross_session=mc.cross_session)
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
    cfg = search_config(args, opened.config)
    settings = RecallSettings(
        hard_cap_tokens=opened.config.hard_cap_tokens,
        window=opened.window,
        search=cfg,
        limit_from_cap=args.limit is None,
    )
    if args.session is None and not cfg.cross_session:
        cfg = cfg.with_(cross_session=True)
        settings = RecallSettings(
            settings.hard_cap_tokens,
            settings.window,
            search=cfg,
            limit_from_cap=settings.limit_from_cap,
        )
        opened.notes.append("no --session given: searching every session")
    preview = recall(
        args.query,
        store=opened.store,
        knowledge=opened.knowledge,
        settings=settings,
        session_id=args.session,
    )
    block = preview.block
    hits = preview.search.hits if preview.search else []
    payload: dict[str, Any] = {
        "query": args.query,
        "session": args.session,
        "skipped": preview.skipped,
        "hard_cap": preview.hard_cap,
        "config": {
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
        out = [f"query: {args.query!r}  hard cap: {preview.hard_cap} tokens"]
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
    """``memlens eval DATA --labels FILE``: recall@k, MRR, nDCG@10."""
    try:
        ks = tuple(sorted({int(k) for k in args.k.split(",") if k.strip()}))
    except ValueError:
        raise RecallCliError(f"--k {args.k!r}: give whole numbers, e.g. 1,5,10") from None
    if not ks or min(ks) < 1:
        raise RecallCliError("--k needs numbers of 1 or more")
    labels, problems = load_labels(args.labels)
    opened = open_for_recall(args)
    if opened.store is None:
        raise RecallCliError(f"{args.data}: no segments.jsonl to evaluate against")
    cfg = search_config(args, opened.config)
    if getattr(args, "limit", None) is None:  # the agent's limit, as recall and the app use
        cfg = cfg.with_(limit=search_limit(hard_cap(opened.config.hard_cap_tokens, opened.window)))
    report = evaluate(opened.store, labels, cfg, ks)
    report.problems.extend(problems)
    payload = report.to_json()
    payload["notes"] = opened.notes
    lines = [
        f"{payload['n']} queries, embedder {report.embedder}, "
        f"limit {cfg.limit}, min_score {cfg.min_score}, decay {cfg.decay}, "
        f"weights {cfg.vector_weight}/{cfg.bm25_weight}"
    ]
    lines.append(
        "  ".join(f"recall@{k} {payload[f'recall@{k}']:.3f}" for k in ks)
        + f"  MRR {payload['mrr']:.3f}  nDCG@10 {payload['ndcg@10']:.3f}"
    )
    for q in report.queries:
        lines.append(
            f"  line {q.label.line}: rr {q.reciprocal_rank:.2f} ndcg {q.ndcg10:.2f} "
            f"{q.label.query[:50]!r}"
            + (f"\n      miss: {q.miss_explanation}" if q.miss_explanation else "")
        )
    lines.extend(f"  {p}" for p in problems)
    return payload, "\n".join(lines)


__all__ = ["FormatError", "RecallCliError", "cmd_eval", "cmd_knowledge", "cmd_recall"]
