"""Benchmark: knowledge search over a 5,000-fact knowledge.jsonl.

Prints one JSON object. Target (2 cores): query p50 <= 2 ms with the index built.
``query_ms_*`` are cold: the index's token cache is off, so every query token is
looked up from scratch. ``warm_query_ms_*`` repeat the queries with the cache on.

    python -m bench.bench_knowledge [--facts 5000] [--queries 200] [--mode idf]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import orjson

from core.recall.knowledge_search import KnowledgeIndex
from core.store.knowledge import FACT_TYPES, load_knowledge

LIBS = "orjson numpy pyqtgraph httpx rank-bm25 sqlite redis postgres vite pytest ruff mypy".split()
MODULES = (
    "src/core/agent-session.ts core/store/knowledge.py widgets/timeline/view.py app/main_window.py "
    "core/recall/bm25.py src/agents/compaction.ts core/transcript/loader.py packaging/spec.py"
).split()
KEYS = "port timeout max_tokens hardCap safeLimit retries cache_size log_level batch".split()
NOUNS = (
    "session cache token budget compaction summary fixture index vector segment recall trim "
    "parser loader timeline filter model worker thread queue retry embedding window"
).split()
VERBS = "crashes hangs leaks drops duplicates truncates misorders rejects".split()
ZH = [
    "决定使用",
    "缓存策略",
    "压缩摘要",
    "会话记录",
    "向量索引",
    "配置文件",
    "超时设置",
    "工作流程",
]
TEMPLATES = (
    ("decision", "Use {lib} for the {noun} {noun2} instead of {lib2} (see {ident})"),
    ("implementation", "{module} implements {noun} {noun2} in {ident}() with a {lib} backend"),
    ("config", "{key} is set to {num} in {module}:{line}"),
    ("issue", "{module} {verb} the {noun} when {ident} is empty; fixed by {sha}"),
    ("task_state", "Next: move {noun} {noun2} handling out of {module}, then test {ident}"),
    ("architecture", "{noun} goes through {noun2} before {module} sees it ({zh})"),
)


def _ident(rng: random.Random) -> str:
    verb = rng.choice(("load", "save", "parse", "build", "trim", "merge", "find", "apply"))
    return verb + "".join(w.capitalize() for w in rng.sample(NOUNS, rng.randint(1, 3)))


def make_facts(path: Path, n: int, seed: int = 1) -> None:
    """Write *n* templated facts (some superseded) as the agent would."""
    rng = random.Random(seed)
    ts = 1_760_000_000_000
    lines = []
    for i in range(n):
        ftype, template = TEMPLATES[i % len(TEMPLATES)]
        assert ftype in FACT_TYPES
        content = template.format(
            lib=rng.choice(LIBS),
            lib2=rng.choice(LIBS),
            noun=rng.choice(NOUNS),
            noun2=rng.choice(NOUNS),
            module=rng.choice(MODULES),
            key=rng.choice(KEYS),
            num=rng.randint(1, 65535),
            verb=rng.choice(VERBS),
            zh=rng.choice(ZH),
            ident=_ident(rng),
            sha=f"{rng.getrandbits(28):07x}",
            line=rng.randint(1, 2000),
        )
        ts += rng.randint(1_000, 600_000)
        fact = {
            "id": str(uuid.UUID(int=rng.getrandbits(128))),
            "type": ftype,
            "content": content,
            "context": f"while working on {rng.choice(NOUNS)} ({rng.choice(ZH)})",
            "timestamp": ts,
        }
        lines.append(orjson.dumps(fact))
        if i % 17 == 5:  # a later line supersedes this one
            lines.append(orjson.dumps({**fact, "supersededBy": str(uuid.uuid4())}))
    path.write_bytes(b"\n".join(lines) + b"\n")


def make_queries(n: int, seed: int = 2) -> list[str]:
    """Queries like a recall: a few words, a module, sometimes Chinese."""
    rng = random.Random(seed)
    pool = LIBS + MODULES + KEYS + NOUNS + VERBS + ZH + ["how", "the", "why", "a", "we"]
    return [
        " ".join(rng.sample(pool, rng.randint(2, 8)) + [_ident(rng)] * (rng.random() < 0.3))
        for _ in range(n)
    ]


def run(facts: int, queries: int, mode: str) -> dict[str, object]:
    """Build the index and time the queries; return the figures."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "knowledge.jsonl"
        make_facts(path, facts)
        t0 = time.perf_counter()
        log = load_knowledge(path)
        t1 = time.perf_counter()
        index = KnowledgeIndex(log, cache_size=0)
        t2 = time.perf_counter()
    texts = make_queries(queries)
    for q in texts[:5]:  # warm-up of the interpreter, not of a cache (there is none)
        index.search(q, mode=mode)  # type: ignore[arg-type]
    cold, hits = _time(index, texts, mode)
    index.cache_size = 1024
    _time(index, texts, mode)
    warm, _ = _time(index, texts, mode)
    return {
        "facts": facts,
        "active": index.active,
        "mode": mode,
        "queries": queries,
        "load_seconds": round(t1 - t0, 4),
        "build_seconds": round(t2 - t1, 4),
        "query_ms_p50": _pct(cold, 50),
        "query_ms_p95": _pct(cold, 95),
        "warm_query_ms_p50": _pct(warm, 50),
        "warm_query_ms_p95": _pct(warm, 95),
        "hits_mean": round(hits / max(queries, 1), 2),
        "target_p50_ms": 2,
    }


def _time(index: KnowledgeIndex, texts: list[str], mode: str) -> tuple[list[float], int]:
    times = []
    hits = 0
    for q in texts:
        s = time.perf_counter()
        hits += len(index.search(q, mode=mode))  # type: ignore[arg-type]
        times.append((time.perf_counter() - s) * 1000)
    return times, hits


def _pct(times: list[float], p: int) -> float:
    if p == 50:
        return round(statistics.median(times), 4)
    ordered = sorted(times)
    return round(ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))], 4)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: print the figures as JSON."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--facts", type=int, default=5000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--mode", choices=("idf", "adaptive"), default="idf")
    args = ap.parse_args(argv)
    result = run(args.facts, args.queries, args.mode)
    sys.stdout.buffer.write(orjson.dumps(result, option=orjson.OPT_INDENT_2) + b"\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
