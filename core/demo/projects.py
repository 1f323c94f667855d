"""The four fictional projects the demo agents work on (see :mod:`core.demo.build`).

Each :class:`Project` has its files, functions, failing tests, decisions, TODOs,
constraints and facts: the vocabulary every demo text is drawn from.
"""

from __future__ import annotations

from dataclasses import dataclass


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
