"""Vocabulary and text templates for the demo OpenClaw home (see :mod:`core.demo.build`).

Four fictional projects, each with its files, functions, failing tests,
decisions, TODOs, constraints and facts; generators that turn them into code,
tool output, prompts, replies and compaction summaries. Everything is drawn
from a ``random.Random`` passed in, so the demo is reproducible.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import random


@dataclass(frozen=True, slots=True)
class Project:
    """One fictional project the demo agents work on."""

    name: str
    lang: str
    """``py``, ``rs``, ``ts`` or ``go``."""
    files: tuple[str, ...]
    tests: tuple[str, ...]
    functions: tuple[str, ...]
    test_cmd: str
    lint_cmd: str
    failures: tuple[tuple[str, str], ...]
    """``(test name, error text)`` of tests that fail before a fix."""
    asks: tuple[str, ...]
    decisions: tuple[str, ...]
    todos: tuple[str, ...]
    constraints: tuple[str, ...]
    identifiers: tuple[str, ...]
    architecture: tuple[str, ...]
    implementation: tuple[str, ...]
    config: tuple[str, ...]
    chain: tuple[str, ...]
    """Successive versions of one fact (each supersedes the previous)."""


PROJECTS: tuple[Project, ...] = (
    Project(
        name="invoice-api",
        lang="py",
        files=(
            "app/services/pricing.py",
            "app/routes/invoices.py",
            "app/models.py",
            "app/schemas.py",
            "app/db.py",
            "app/pdf/render.py",
        ),
        tests=("tests/test_pricing.py", "tests/test_invoices.py"),
        functions=(
            "apply_discount",
            "quantize_cents",
            "compute_tax",
            "create_invoice",
            "next_invoice_number",
            "render_invoice_pdf",
            "list_invoices",
        ),
        test_cmd="uv run pytest -q",
        lint_cmd="uv run ruff check app tests",
        failures=(
            (
                "tests/test_pricing.py::test_discount_rounding",
                "E       AssertionError: assert Decimal('12.99') == Decimal('13.00')\n"
                "E        +  where Decimal('12.99') = apply_discount(Decimal('14.43'), pct=10)",
            ),
            (
                "tests/test_invoices.py::test_create_invoice_twice",
                "E       sqlalchemy.exc.IntegrityError: (sqlite3.IntegrityError) "
                "UNIQUE constraint failed: invoices.number",
            ),
            (
                "tests/test_invoices.py::test_currency_validation",
                "E       pydantic_core._pydantic_core.ValidationError: 1 validation error for "
                "InvoiceCreate\nE       currency\nE         Input should be 'EUR', 'USD' or 'GBP' "
                "[type=enum, input_value='eur', input_type=str]",
            ),
            ("tests/test_pricing.py::test_tax_by_region", "E       KeyError: 'tax_rate'"),
        ),
        asks=(
            "make apply_discount return a Decimal quantized to cents",
            "add a test for a 100% discount",
            "expose discount_pct in InvoiceSchema",
            "move the invoice number sequence into its own table",
            "render the PDF in a background task instead of the request",
            "reject float amounts at the schema boundary",
            "add an alembic migration for the discount column",
        ),
        decisions=(
            "Money is Decimal end to end; floats are rejected at the schema boundary",
            "Invoice numbers come from a per-year sequence table, not MAX(number)+1",
            "Currency codes are upper-cased by the schema before validation",
            "PDF rendering runs in a background task; the route returns 202",
        ),
        todos=(
            "add an alembic migration for invoices.discount_pct",
            "backfill invoice numbers for the 2025 drafts",
            "document the rounding rule in docs/pricing.md",
            "remove the float fallback in compute_tax",
        ),
        constraints=(
            "do not change the public JSON shape of /v1/invoices",
            "keep Python 3.11 compatibility",
            "no new runtime dependencies without asking first",
            "`uv run pytest -q` must pass before every commit",
        ),
        identifiers=(
            "ROUND_HALF_EVEN",
            "invoices.number",
            "InvoiceCreate",
            "DISCOUNT_MAX_PCT = 50",
            "alembic revision 0007_add_discount",
            "/v1/invoices/{id}/pdf",
        ),
        architecture=(
            "invoice-api: FastAPI routes call services; services own the "
            "SQLAlchemy session, routes never touch models directly",
            "invoice-api: PDFs are rendered by a worker reading the "
            "pdf_jobs table, the API only enqueues",
        ),
        implementation=(
            "invoice-api: apply_discount() in app/services/pricing.py quantizes "
            "with Decimal('0.01') after applying the percentage",
            "invoice-api: next_invoice_number() locks the year row of "
            "invoice_sequences with SELECT ... FOR UPDATE",
        ),
        config=(
            "invoice-api: DISCOUNT_MAX_PCT is 50 (settings.py), larger discounts need "
            "an admin override",
            "invoice-api: tests run against SQLite in memory; "
            "CI also runs them against Postgres 16",
        ),
        chain=(
            "invoice-api rounding: ROUND_HALF_UP on every line item",
            "invoice-api rounding: ROUND_HALF_EVEN on every line item",
            "invoice-api rounding: ROUND_HALF_EVEN on the invoice total only; line "
            "items keep 4 decimal places",
        ),
    ),
    Project(
        name="tilecache",
        lang="rs",
        files=(
            "src/cache.rs",
            "src/render.rs",
            "src/http.rs",
            "src/metrics.rs",
            "src/config.rs",
            "src/lib.rs",
        ),
        tests=("tests/cache_eviction.rs", "tests/http_smoke.rs"),
        functions=(
            "insert",
            "evict_oldest",
            "from_path",
            "render_tile",
            "serve_tile",
            "record_hit",
            "byte_size",
        ),
        test_cmd="cargo test",
        lint_cmd="cargo clippy --all-targets -- -D warnings",
        failures=(
            (
                "cache::tests::evicts_least_recent",
                "thread 'cache::tests::evicts_least_recent' panicked at src/cache.rs:88:9:\n"
                "assertion `left == right` failed\n  left: 3\n right: 2",
            ),
            (
                "cache_eviction",
                "error[E0502]: cannot borrow `self.entries` as mutable because "
                "it is also borrowed as immutable\n  --> src/cache.rs:61:13",
            ),
            (
                "http::tests::rejects_bad_zoom",
                "thread 'http::tests::rejects_bad_zoom' panicked at src/http.rs:142:5:\n"
                "expected 400 Bad Request, got 500 Internal Server Error",
            ),
        ),
        asks=(
            "make the cache capacity a byte budget instead of a tile count",
            "add hit/miss counters to /metrics",
            "reject zoom levels above 22 with a 400",
            "stop caching tiles above zoom 18",
            "fix the clippy warnings in render.rs",
            "add an eviction test with mixed tile sizes",
        ),
        decisions=(
            "Cache capacity is a byte budget (256 MiB default), not a tile count",
            "Eviction uses a VecDeque of keys plus a HashMap, no linked list",
            "Tiles above zoom 18 are rendered on demand and never cached",
            "Metrics are exported as Prometheus text on /metrics",
        ),
        todos=(
            "benchmark eviction with 1M keys",
            "expose cache_bytes in /metrics",
            "handle If-None-Match with tile ETags",
            "add a fuzz target for TileKey::from_path",
        ),
        constraints=(
            "no unsafe code",
            "MSRV stays at Rust 1.75",
            "clippy must pass with -D warnings",
            "keep the HTTP API backward compatible",
        ),
        identifiers=(
            "TileKey { z, x, y }",
            "CACHE_BYTES_DEFAULT = 256 * 1024 * 1024",
            "LruCache::evict_oldest",
            "tilecache_hits_total",
            "MAX_ZOOM = 22",
        ),
        architecture=(
            "tilecache: axum handlers -> LruCache -> renderer; the cache sits behind a tokio Mutex",
            "tilecache: rendering runs on a blocking thread pool so the async handlers never block",
        ),
        implementation=(
            "tilecache: LruCache::insert() evicts from the front of the "
            "VecDeque until the byte budget fits",
            "tilecache: TileKey::from_path() parses /{z}/{x}/{y}.png and validates x, y < 2^z",
        ),
        config=(
            "tilecache: TILECACHE_BYTES overrides the cache budget; default 256 MiB",
            "tilecache: listens on 0.0.0.0:8080, /metrics on the same port",
        ),
        chain=("tilecache capacity: 10,000 tiles", "tilecache capacity: 256 MiB byte budget"),
    ),
    Project(
        name="web-dashboard",
        lang="ts",
        files=(
            "src/components/UsageChart.tsx",
            "src/api/client.ts",
            "src/hooks/useSessions.ts",
            "src/utils/format.ts",
            "src/pages/Sessions.tsx",
        ),
        tests=("src/components/UsageChart.test.tsx", "src/utils/format.test.ts"),
        functions=(
            "fetchSessions",
            "formatTokens",
            "useSessions",
            "buildSeries",
            "UsageChart",
            "SessionsPage",
        ),
        test_cmd="npm test -- --run",
        lint_cmd="npx tsc --noEmit",
        failures=(
            (
                "src/utils/format.test.ts > formatTokens > abbreviates thousands",
                "AssertionError: expected '1.2k' to be '1.2K' // Object.is equality",
            ),
            (
                "src/components/UsageChart.test.tsx > renders the empty state",
                "TypeError: Cannot read properties of undefined (reading 'map')\n"
                " \u276f buildSeries src/components/UsageChart.tsx:27:18",
            ),
            (
                "tsc",
                "src/api/client.ts(42,7): error TS2322: Type 'string | undefined' is not "
                "assignable to type 'string'.",
            ),
        ),
        asks=(
            "show input and output tokens as a stacked area chart",
            "add an empty state to UsageChart",
            "format token counts as 1.2K / 3.4M",
            "retry fetchSessions once on a 502",
            "add a date range picker to the sessions page",
            "fix the strict-mode type errors in the API client",
        ),
        decisions=(
            "Server state lives in TanStack Query; no global store",
            "Charts use uPlot, recharts was too slow above 10k points",
            "Token counts are formatted with an uppercase K/M suffix",
            "The API client throws typed ApiError objects, never raw Response",
        ),
        todos=(
            "add a loading skeleton to SessionsPage",
            "virtualise the sessions table",
            "move the API base URL into VITE_API_URL",
            "add a Playwright smoke test",
        ),
        constraints=(
            "TypeScript strict mode stays on",
            "no default exports",
            "keep the bundle under 300 kB gzipped",
            "tests use vitest, not jest",
        ),
        identifiers=(
            "ApiError",
            "VITE_API_URL",
            "useSessions({ range })",
            "formatTokens(1234) === '1.2K'",
            "/api/v2/sessions?from=&to=",
        ),
        architecture=(
            "web-dashboard: pages -> hooks (TanStack Query) -> api/client.ts; "
            "components get data through props only",
            "web-dashboard: the app is a Vite SPA served by nginx next to the API",
        ),
        implementation=(
            "web-dashboard: buildSeries() turns sessions into uPlot columns, "
            "one column per token kind",
            "web-dashboard: fetchSessions() retries once on 502/503 with a 300 ms delay",
        ),
        config=(
            "web-dashboard: VITE_API_URL defaults to /api in production and "
            "http://localhost:8000 in dev",
            "web-dashboard: vitest runs in jsdom with globals: false",
        ),
        chain=("web-dashboard: global state lives in Redux",),
    ),
    Project(
        name="ingest-worker",
        lang="go",
        files=(
            "internal/queue/consumer.go",
            "internal/queue/backoff.go",
            "internal/store/postgres.go",
            "internal/config/config.go",
            "cmd/worker/main.go",
        ),
        tests=("internal/queue/consumer_test.go", "internal/store/postgres_test.go"),
        functions=(
            "Run",
            "handleBatch",
            "retryWithBackoff",
            "UpsertEvents",
            "parseConfig",
            "NewConsumer",
        ),
        test_cmd="go test ./...",
        lint_cmd="go vet ./...",
        failures=(
            (
                "TestConsumerRetries",
                "--- FAIL: TestConsumerRetries (0.02s)\n"
                "    consumer_test.go:57: expected 3 attempts, got 4",
            ),
            (
                "TestUpsertEvents",
                "--- FAIL: TestUpsertEvents (0.31s)\n    postgres_test.go:88: "
                'ERROR: duplicate key value violates unique constraint "events_pkey" '
                "(SQLSTATE 23505)",
            ),
            (
                "TestHandleBatch",
                "panic: runtime error: invalid memory address or nil pointer "
                "dereference\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x18]",
            ),
        ),
        asks=(
            "add exponential backoff with jitter to retryWithBackoff",
            "make UpsertEvents idempotent on the event id",
            "stop the consumer cleanly on SIGTERM",
            "batch inserts in groups of 500",
            "read the queue URL from INGEST_QUEUE_URL",
            "fix the flaky TestConsumerRetries",
        ),
        decisions=(
            "Upserts use ON CONFLICT (event_id) DO NOTHING; duplicates are expected",
            "Batches are 500 events or 2 seconds, whichever comes first",
            "The consumer acks only after the batch is committed",
            "Context cancellation is the only shutdown signal inside the worker",
        ),
        todos=(
            "add a dead-letter queue for poison messages",
            "export lag as a gauge",
            "test the SIGTERM path with a real queue",
            "drop the legacy events_v1 table",
        ),
        constraints=(
            "Go 1.22, standard library first",
            "no global state outside main.go",
            "`go vet ./...` and `go test ./...` must pass",
            "never log event payloads (PII)",
        ),
        identifiers=(
            "events_pkey",
            "INGEST_QUEUE_URL",
            "maxAttempts = 3",
            "batchSize = 500",
            "retryWithBackoff(ctx, op, 200*time.Millisecond)",
        ),
        architecture=(
            "ingest-worker: queue consumer -> batcher -> Postgres store; one "
            "goroutine per partition",
            "ingest-worker: the store is an interface so tests use an in-memory fake",
        ),
        implementation=(
            "ingest-worker: handleBatch() commits one transaction per batch and acks after commit",
            "ingest-worker: retryWithBackoff() doubles the "
            "delay from 200 ms with full jitter, capped at 5 s",
        ),
        config=(
            "ingest-worker: INGEST_QUEUE_URL and DATABASE_URL are required; the worker "
            "exits with code 2 without them",
            "ingest-worker: BATCH_SIZE (default 500) and BATCH_WAIT (default 2s)",
        ),
        chain=(
            "ingest-worker retries: 5 attempts with a fixed 1 s delay",
            "ingest-worker retries: 3 attempts, exponential backoff from 200 ms with jitter",
        ),
    ),
)

_VARS = (
    "total",
    "items",
    "entry",
    "key",
    "cursor",
    "batch",
    "rate",
    "amount",
    "limit",
    "offset",
    "payload",
    "retries",
    "deadline",
    "buf",
    "row",
    "series",
    "result",
)
_FIELDS = ("id", "count", "size", "created_at", "updated_at", "status", "name", "value")
_WORDS = (
    "cache",
    "budget",
    "request",
    "invoice",
    "event",
    "window",
    "series",
    "tile",
    "attempt",
    "session",
    "record",
    "config",
)


def _pick(rng: random.Random, seq: tuple[str, ...]) -> str:
    return seq[rng.randrange(len(seq))]


def ident(name: str) -> str:
    """A function name as it appears in code (``Type::method`` -> ``method``)."""
    return name.split("::")[-1].split(".")[-1]


_BLOCKS = {
    "py": (
        "def {fn}({a}: {T}, {b}: int = {n}) -> {T}:\n"
        '    """Return the {w} for {a} (see {w2})."""\n'
        '    if {a} is None:\n        raise ValueError("{fn}: {a} is required")\n'
        "    {v} = {a}.{f}\n    for {v2} in range({b}):\n        {v} += {v2}\n"
        '    logger.debug("{fn} %s -> %s", {a}, {v})\n    return {v}\n',
        "class {C}({B}):\n    {f}: {T}\n    {f2}: int = {n}\n\n"
        "    def {fn}(self) -> bool:\n        return self.{f2} > {n}\n",
    ),
    "rs": (
        "pub fn {fn}(&mut self, {a}: {T}) -> Result<{T}, Error> {{\n"
        "    let {v} = self.{f}.get(&{a}).copied().unwrap_or_default();\n"
        "    if {v} > {n} {{\n        return Err(Error::{C}({a}));\n    }}\n"
        "    self.{f2} += {v};\n    Ok({v})\n}}\n",
        "#[derive(Debug, Clone, PartialEq)]\npub struct {C} {{\n    pub {f}: {T},\n"
        "    pub {f2}: usize,\n}}\n\nimpl {C} {{\n    pub fn {fn}(&self) -> usize {{\n"
        "        self.{f2}.saturating_sub({n})\n    }}\n}}\n",
    ),
    "ts": (
        "export function {fn}({a}: {T}, {b} = {n}): {T} {{\n"
        "  if (!{a}) {{\n    throw new Error(`{fn}: missing {a}`);\n  }}\n"
        "  const {v} = {a}.{f} ?? {b};\n  return {{ ...{a}, {f2}: {v} }};\n}}\n",
        "export interface {C} {{\n  {f}: {T};\n  {f2}?: number;\n}}\n\n"
        "export const {fn} = ({a}: {C}): number => {a}.{f2} ?? {n};\n",
    ),
    "go": (
        "func (c *{C}) {fn}(ctx context.Context, {a} {T}) error {{\n"
        '\tif {a} == nil {{\n\t\treturn fmt.Errorf("{fn}: nil {a}")\n\t}}\n'
        "\t{v} := c.{F}\n\tfor i := 0; i < {n}; i++ {{\n\t\tif err := ctx.Err(); err != nil "
        "{{\n\t\t\treturn err\n\t\t}}\n\t\t{v} += i\n\t}}\n\tc.{F2} = {v}\n\treturn nil\n}}\n",
        "type {C} struct {{\n\t{F} {T}\n\t{F2} int\n}}\n",
    ),
}
_HEADERS = {
    "py": "from __future__ import annotations\n\nimport logging\nfrom decimal import Decimal\n\n"
    "logger = logging.getLogger(__name__)\n",
    "rs": "use std::collections::{HashMap, VecDeque};\n\nuse crate::error::Error;\n",
    "ts": "import { ApiError } from '../api/errors';\nimport type { Session } from '../types';\n",
    "go": 'package queue\n\nimport (\n\t"context"\n\t"fmt"\n\t"time"\n)\n',
}
_TYPES = {
    "py": ("Decimal", "Invoice", "dict[str, int]"),
    "rs": ("u64", "TileKey", "usize"),
    "ts": ("Session", "SeriesPoint", "number"),
    "go": ("*Event", "*Batch", "Config"),
}
_COMMENT = {"py": "# ", "rs": "// ", "ts": "// ", "go": "// "}


def _camel(name: str) -> str:
    return "".join(w.capitalize() for w in name.split("_"))


def code_block(rng: random.Random, project: Project) -> str:
    """One function or type definition in the project's language."""
    lang = project.lang
    a, b = rng.sample(_VARS, 2)
    f, f2 = rng.sample(_FIELDS, 2)
    if lang == "ts":
        f, f2 = (x[0] + _camel(x)[1:] for x in (f, f2))
    if rng.random() < 0.5:
        fn = ident(_pick(rng, project.functions))
    elif lang in ("py", "rs"):
        fn = f"{_pick(rng, _WORDS)}_{_pick(rng, _VARS)}"
    else:
        fn = _pick(rng, _WORDS) + _camel(_pick(rng, _VARS))
    text = _pick(rng, _BLOCKS[lang]).format(
        fn=fn,
        a=a,
        b=b,
        v=_pick(rng, ("acc", "out", "seen", "sum", "next")),
        v2="i",
        T=_pick(rng, _TYPES[lang]),
        n=rng.randint(2, 512),
        f=f,
        f2=f2,
        F=_camel(f),
        F2=_camel(f2),
        C=_camel(_pick(rng, _WORDS)) + _camel(_pick(rng, _WORDS)),
        B="BaseModel",
        w=_pick(rng, _WORDS),
        w2=_pick(rng, _WORDS),
    )
    if rng.random() < 0.3:
        text = f"{_COMMENT[lang]}{_pick(rng, project.decisions)}.\n{text}"
    return text


def code_file(rng: random.Random, project: Project, chars: int) -> str:
    """A source file of about *chars* characters."""
    parts = [_HEADERS[project.lang]]
    size = len(parts[0])
    while size < chars:
        block = code_block(rng, project)
        parts.append(block)
        size += len(block) + 1
    return "\n".join(parts)


def snippet(rng: random.Random, project: Project) -> tuple[str, str]:
    """An ``(oldText, newText)`` pair for an edit."""
    old = code_block(rng, project)
    lines = old.splitlines()
    i = rng.randrange(len(lines))
    changed = f"{_COMMENT[project.lang]}{_pick(rng, project.decisions)}"
    new_lines = [*lines[:i], changed, *lines[i:]]
    if rng.random() < 0.5 and len(lines) > 3:
        new_lines[-2] = new_lines[-2].replace(lines[-2].strip(), lines[-2].strip() + "  ")
    return old, "\n".join(new_lines) + "\n"


def test_output(rng: random.Random, project: Project, failure: tuple[str, str] | None) -> str:
    """What the project's test command prints (passing when *failure* is None)."""
    n = rng.randint(18, 140)
    lang = project.lang
    if lang == "py":
        head = "." * min(n - 1, 60) + ("F" if failure else ".") + " [100%]"
        if failure:
            return (
                f"{head}\n=================================== FAILURES ====================="
                f"==============\n_____ {failure[0].split('::')[-1]} _____\n\n{failure[1]}\n"
                f"=========================== short test summary info ===================="
                f"=======\nFAILED {failure[0]}\n1 failed, {n - 1} passed in "
                f"{rng.uniform(0.8, 4):.2f}s"
            )
        return f"{head}\n{n} passed in {rng.uniform(0.8, 4):.2f}s"
    if lang == "rs":
        ok = "FAILED" if failure else "ok"
        body = f"\nfailures:\n\n---- {failure[0]} stdout ----\n{failure[1]}\n" if failure else ""
        return (
            f"   Compiling tilecache v0.4.2 (/home/dev/projects/tilecache)\n    Finished `test`"
            f" profile [unoptimized + debuginfo] target(s) in {rng.uniform(2, 30):.2f}s\n"
            f"     Running unittests src/lib.rs\n\nrunning {n} tests\n{body}\n"
            f"test result: {ok}. {n - (1 if failure else 0)} passed; "
            f"{1 if failure else 0} failed; 0 ignored; finished in {rng.uniform(0.1, 3):.2f}s"
        )
    if lang == "ts":
        if failure:
            return (
                f" FAIL  {failure[0]}\n{failure[1]}\n\n Test Files  1 failed | 4 passed (5)\n"
                f"      Tests  1 failed | {n - 1} passed ({n})\n   Duration  "
                f"{rng.uniform(1, 6):.2f}s"
            )
        return (
            f" ✓ src/utils/format.test.ts (9 tests) {rng.randint(3, 40)}ms\n ✓ "
            f"src/components/UsageChart.test.tsx (6 tests) {rng.randint(30, 200)}ms\n\n"
            f" Test Files  5 passed (5)\n      Tests  {n} passed ({n})\n   Duration  "
            f"{rng.uniform(1, 6):.2f}s"
        )
    pkg = "github.com/acme/ingest-worker"
    if failure:
        return (
            f"{failure[1]}\nFAIL\nFAIL\t{pkg}/internal/queue\t{rng.uniform(0.1, 2):.3f}s\n"
            f"ok  \t{pkg}/internal/store\t{rng.uniform(0.1, 2):.3f}s\nFAIL"
        )
    return (
        f"ok  \t{pkg}/internal/queue\t{rng.uniform(0.1, 2):.3f}s\nok  \t{pkg}/internal/store"
        f"\t{rng.uniform(0.1, 2):.3f}s\n?   \t{pkg}/cmd/worker\t[no test files]"
    )


def grep_output(rng: random.Random, project: Project, fn: str) -> str:
    """``rg -n`` output for *fn* in the project."""
    lines = []
    for path in rng.sample(project.files + project.tests, 3):
        for _ in range(rng.randint(1, 3)):
            lines.append(f"{path}:{rng.randint(5, 400)}:    {fn}({_pick(rng, _VARS)})")
    return "\n".join(lines)


USER_OPENERS = (
    "We're working on {project} today. Task: {task}. Start by reading {file} and {file2}, "
    "then tell me your plan before changing anything.",
    "{task} — that's the goal for {project}. Have a look at {file} first.",
)
USER_PROMPTS = (
    "ok, now {ask}",
    "looks good. next: {ask}",
    "can you look at {fn} in {file}? I think we should {ask}",
    "`{test_cmd}` fails on my machine with `{error}`. can you fix it?",
    "hmm, that broke {test}. please check",
    "before you go further: {constraint}",
    "let's also {ask}",
    "why did you touch {file}? keep the change minimal and {ask}",
    "nice. {ask}, and run the tests afterwards",
    "please {ask}",
    "what's left on the list? if nothing urgent, {ask}",
    "commit what we have with a sensible message, then {ask}",
)
REVIEW_OPENERS = (
    'Review PR #{pr} on {project}: "{task}". Focus on correctness and tests; post the '
    "review with gh when done.",
    "Please review PR #{pr} ({project}): {task}. Check it against our rules: {constraint}.",
)
STEP_TEXTS: dict[str, tuple[str, ...]] = {
    "read": (
        "Let me read {file} to see how {fn} works.",
        "Reading {file} first.",
        "I'll look at the current code before changing anything.",
    ),
    "grep": ("Searching for other callers of {fn}.", "Let me check where {fn} is used."),
    "test": ("Running the tests first to see where we stand.", "Let me reproduce the failure."),
    "edit": (
        "Now I'll update {fn} in {file}.",
        "The failure comes from {fn}; fixing it in {file}.",
    ),
    "reread": ("The edit did not apply: {file} changed since I read it. Re-reading it.",),
    "verify": ("Re-running the tests.", "Running the tests again to confirm the fix."),
    "write": ("Adding a regression test in {test}.",),
    "check": ("Running the linter and checking the working tree.",),
    "diff": ("Let me look at the diff of PR #{pr}.", "Fetching the PR diff."),
}
THINKING = (
    "The user wants me to {ask}. {fn} lives in {file}; I need to see how it is called before "
    "changing its signature. Constraint to respect: {constraint}.",
    "The test fails with {error}. That points at {fn}. The simplest fix keeps the public "
    "API unchanged.",
    "Plan: read {file}, change {fn}, add a test in {test}, run "
    "`{test_cmd}`. {decision} — keep that in mind.",
)
FINAL_TEXTS = (
    "Implemented: {ask}.\n\n- `{file}`: `{fn}` changed accordingly\n- `{test}`: new test\n\n"
    "`{test_cmd}` is green.",
    "Done. {decision}.\n\n- `{file}`: updated `{fn}`\n- `{test}`: added a regression test\n\n"
    "`{test_cmd}` passes. Next I would {todo}.",
    "Fixed: {fn} now behaves as agreed ({decision}). All tests pass.\n\nOpen point: {todo}.",
    "I changed `{fn}` in `{file}` and ran `{test_cmd}`: green. Note that {constraint}, so I "
    "left the public interface alone.",
    "Summary of this step:\n1. {decision}\n2. Updated `{file}`\n3. Tests pass\n\nShall I {todo}?",
)
EXPLAIN_TEXTS = (
    "I had a look at `{file}`: `{fn}` is the place to change. Plan: {ask}, then run "
    "`{test_cmd}`. Note that {constraint}. Shall I go ahead?",
    "`{fn}` is called from `{file}` and `{file2}`. Changing it is safe as long as we keep "
    "this rule: {constraint}. Proceed?",
    "Nothing to change in `{file}` for this: the behaviour comes from `{fn}`, which already "
    'follows the decision "{decision}". Still open: {todo}.',
)
REVIEW_PROMPTS = (
    "the author pushed a fix for {fn}; please re-review {file}",
    'does {file} respect our rule "{constraint}"?',
    "is the test in {test} enough, or should we ask for more?",
    "CI is red on PR #{pr}. find out why and tell the author what to change",
    "add a comment asking them to {ask}",
    "compare {file} with main: anything risky?",
)
REVIEW_TEXTS = (
    "Re-reviewed `{file}` on PR #{pr}: the fix for `{fn}` is correct. Remaining: {todo}.",
    "Posted a comment on PR #{pr} asking the author to {ask}.",
    "CI on PR #{pr} fails in `{test}`: {error}. I left a comment with the fix.",
    "Review posted on PR #{pr}.\n\n**Blocking**\n- `{file}`: {fn} ignores the error path "
    "({error}).\n\n**Nits**\n- {constraint}\n- missing test in `{test}`\n\nOtherwise it "
    "matches what we agreed: {decision}.",
    "PR #{pr} looks good to me; approved with two nits:\n- rename the helper next to `{fn}`\n"
    '- add a test in `{test}` for the edge case\n\nIt respects "{decision}".',
)
FLUSH_PROMPT = (
    "Pre-compaction memory flush. Store durable memories now (use "
    "memory/{date}.md; create memory/ if needed). If nothing to store, reply "
    "with NO_REPLY."
)


LINT_OUTPUT = {
    "py": "All checks passed!",
    "rs": "    Checking tilecache v0.4.2 (/home/dev/"
    "projects/tilecache)\n    Finished `dev` profile [unoptimized + debuginfo] "
    "target(s) in 3.12s",
    "ts": "(no output)",
    "go": "(no output)",
}


def fill(rng: random.Random, template: str, project: Project, task: str, **extra: str) -> str:
    """Fill a template with vocabulary from *project*."""
    fail = _pick_failure(rng, project)
    values = {
        "project": project.name,
        "task": task,
        "file": _pick(rng, project.files),
        "file2": _pick(rng, project.files + project.tests),
        "fn": ident(_pick(rng, project.functions)),
        "ask": _pick(rng, project.asks),
        "test_cmd": project.test_cmd,
        "test": _pick(rng, project.tests),
        "error": fail[1].splitlines()[0].lstrip("E ").strip(),
        "constraint": _pick(rng, project.constraints),
        "decision": _pick(rng, project.decisions),
        "todo": _pick(rng, project.todos),
        "pr": str(rng.randint(96, 180)),
    }
    values.update(extra)
    return template.format(**values)


def _pick_failure(rng: random.Random, project: Project) -> tuple[str, str]:
    return project.failures[rng.randrange(len(project.failures))]


def compaction_summary(
    rng: random.Random, project: Project, task: str, read: list[str], modified: list[str], n: int
) -> str:
    """A compaction summary with OpenClaw's safeguard headings."""

    def bullets(items: tuple[str, ...], k: int, prefix: str = "- ") -> str:
        return "\n".join(prefix + s for s in rng.sample(items, min(k, len(items))))

    files = ", ".join(f"`{p}`" for p in dict.fromkeys(reversed(modified))) or "none yet"
    return (
        f"## Goal\n{task} ({project.name}, checkpoint {n}).\n\n## Progress\nModified: {files}."
        f" Read {len(read)} files so far.\n\n## Decisions\n{bullets(project.decisions, 3)}\n\n"
        f"## Open TODOs\n{bullets(project.todos, 2, '- [ ] ')}\n\n## Constraints/Rules\n"
        f"{bullets(project.constraints, 3)}\n\n## Pending user asks\n"
        f"{bullets(project.asks, 2)}\n\n## Exact identifiers\n"
        + "\n".join(f"- `{s}`" for s in rng.sample(project.identifiers, 4))
    )


def memory_note(
    rng: random.Random, project: Project, task: str, date: str, modified: list[str]
) -> str:
    """The section a memory flush writes to ``memory/<date>.md``."""
    files = ", ".join(f"`{m}`" for m in dict.fromkeys(reversed(modified))) or "nothing yet"
    return (
        f"## {project.name}: {task}\n\nWorking in /home/dev/projects/{project.name} "
        f"({date}). Changed so far: {files}.\n\n### Decisions\n"
        + "".join(f"- {d}\n" for d in rng.sample(project.decisions, 3))
        + "\n### Open\n"
        + "".join(f"- [ ] {t}\n" for t in rng.sample(project.todos, 3))
        + "\n### Rules\n"
        + "".join(f"- {c}\n" for c in rng.sample(project.constraints, 2))
        + "\n### Identifiers\n"
        + "".join(f"- `{i}`\n" for i in rng.sample(project.identifiers, 3))
    )


def generated_exchange(rng: random.Random, project: Project) -> tuple[str, str]:
    """A user request and the agent's answer, for older archived segments."""
    task = _pick(rng, project.asks)
    user = fill(rng, _pick(rng, USER_PROMPTS), project, task)
    reply = fill(rng, _pick(rng, FINAL_TEXTS), project, task)
    return user, reply
