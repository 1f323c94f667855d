// What OpenClaw 2026.9.6 itself makes of a session stored in its per-agent SQLite database:
// the model context (the messages a model run starts from), computed by OpenClaw's own code.
//
//   node openclaw_context.mjs [OPENCLAW_PACKAGE_DIR] STATE_DIR AGENT_ID SESSION_ID [ENTRY_ID|all]
//     -> JSON on stdout (see `out` at the end); `all` adds `contexts`, the context at every
//        entry of the session in seq order (one snapshot per entry, ~0.2 s each)
//   MEMLENS_OPENCLAW_CONTEXT_TOKENS overrides the runner's token budget (default: the session
//   entry's contextTokens, as the run resolves it for a model without a configured cap)
//   node openclaw_context.mjs [OPENCLAW_PACKAGE_DIR] --jobs < JOBS.json
//     -> a JSON list, one output per job: JOBS = [{"state", "agent", "session", "entry"?,
//        "contextTokens"?}, ...] (entry and budget as above). Loading OpenClaw's bundle is
//        most of a run: one run reads several databases, each job on its own copy.
//
// OPENCLAW_PACKAGE_DIR may be left out (then $MEMLENS_OPENCLAW_PKG or the oracle cache's
// openclaw-2026.9.6 is used); tests pass it first, as OpenClaw.run does.
//
// The database is never touched: STATE_DIR/agents/AGENT_ID/agent/openclaw-agent.sqlite (with
// its -wal) is copied into a temp state dir, OPENCLAW_STATE_DIR points there, and OpenClaw
// opens the copy read-only (withOpenClawAgentDatabaseReadOnly) the way its readers do.
//
// Three readers of OpenClaw's, all on the copy (docs/notes/openclaw-context.md):
// * "runner": the embedded agent run (`agent --local`, the gateway's openclaw harness):
//   SessionManager.openBounded(target, {...resolveEmbeddedSessionContextLimits(budget),
//   readOnly}) = the bounded active-branch read (session_transcript_active_events, newest
//   first within maxBytes/maxEvents), then buildSessionContext(getBranch()). This is
//   `messages` without ENTRY_ID. (The run itself goes through openAsync -> openBoundedAsync,
//   the same core in the history worker.)
// * "model": SessionManager.openModelContext(target) = readSessionTranscriptModelContext, the
//   tree scan over every transcript row (leaf controls, resets, boundaries) with the model
//   projection of each payload (cloud-worker turns, experience review). It equals "runner"
//   except for toolResult `details` (`readerDifferences`) unless the bound cut something
//   (then `notes` says so).
// * with ENTRY_ID: the body of readSessionTranscriptModelContext's snapshot (its
//   `through` form: rows with seq <= the entry's seq, the entry as leaf), run here for any
//   entry because `through` itself only accepts an anchor on the current active branch.
//   Without ENTRY_ID the same code runs at the leaf and must equal "model" (`notes`).
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { DatabaseSync } from "node:sqlite";

const argv = process.argv.slice(2);
const isPackage = (dir) => existsSync(join(dir, "dist")) && existsSync(join(dir, "openclaw.mjs"));
const pkg = argv.length && isPackage(argv[0])
  ? argv.shift()
  : process.env.MEMLENS_OPENCLAW_PKG ??
    join(homedir(), ".cache", "memlens-oracle", "openclaw-2026.9.6", "node_modules", "openclaw");
const batch = argv[0] === "--jobs";
const jobs = batch
  ? JSON.parse(readFileSync(0, "utf8"))
  : [{ state: argv[0], agent: argv[1], session: argv[2], entry: argv[3] }];
if (!jobs.every((job) => job.state && job.agent && job.session)) {
  console.error("usage: node openclaw_context.mjs [PKG] STATE_DIR AGENT_ID SESSION_ID [ENTRY_ID]");
  console.error("       node openclaw_context.mjs [PKG] --jobs < JOBS.json");
  process.exit(2);
}
const dist = join(pkg, "dist");

// ---- the copies (one a job) --------------------------------------------------------------
const tmp = mkdtempSync(join(tmpdir(), "memlens-occtx-"));
for (const [k, job] of jobs.entries()) {
  const source = join(job.state, "agents", job.agent, "agent", "openclaw-agent.sqlite");
  if (!existsSync(source)) throw new Error(`${source}: no such database`);
  job.copyState = join(tmp, `state-${k}`);
  const copyDir = join(job.copyState, "agents", job.agent, "agent");
  mkdirSync(copyDir, { recursive: true });
  job.dbPath = join(copyDir, "openclaw-agent.sqlite");
  copyFileSync(source, job.dbPath);
  if (existsSync(`${source}-wal`)) copyFileSync(`${source}-wal`, `${job.dbPath}-wal`);
}
process.env.OPENCLAW_STATE_DIR = jobs[0].copyState;

// ---- OpenClaw's modules, found by their exports (never by hashed file names) --------------
async function bundled(pattern, wanted) {
  for (const f of readdirSync(dist).filter((n) => pattern.test(n)).sort()) {
    const line = readFileSync(join(dist, f), "utf8").match(/export \{([^}]*)\};?\s*$/m);
    if (!line) continue;
    const names = Object.fromEntries(
      line[1].split(",").map((p) => p.trim().split(/\s+as\s+/)).map(([n, as]) => [n, as ?? n]),
    );
    if (!wanted.every((n) => n in names)) continue;
    const m = await import(pathToFileURL(join(dist, f)).href);
    return Object.fromEntries(wanted.map((n) => [n, m[names[n]]]));
  }
  throw new Error(`no ${pattern} in ${dist} exports ${wanted.join(", ")}`);
}
const { SessionManager } = await bundled(/^session-manager-.*\.mjs$/, ["SessionManager"]);
const { buildSessionContext, convertToLlm, iterateSessionContextEntries, iterateSessionContextMessages } =
  await bundled(/^session-[A-Za-z0-9_-]+\.mjs$/, [
    "buildSessionContext", "convertToLlm", "iterateSessionContextEntries", "iterateSessionContextMessages",
  ]);
const { resolveEmbeddedSessionContextLimits } =
  await bundled(/^builtin-openclaw-.*\.mjs$/, ["resolveEmbeddedSessionContextLimits"]);
const { withOpenClawAgentDatabaseReadOnly } =
  await bundled(/^openclaw-agent-db-readonly-.*\.mjs$/, ["withOpenClawAgentDatabaseReadOnly", "retainOpenClawAgentDatabaseReadOnly"]);
const { runSqliteDeferredTransactionSync } =
  await bundled(/^sqlite-transaction-.*\.mjs$/, ["runSqliteDeferredTransactionSync"]);
const { iterateSqliteQuerySync, executeSqliteQueryTakeFirstSync, sql } =
  await bundled(/^kysely-sync-.*\.mjs$/, ["iterateSqliteQuerySync", "executeSqliteQueryTakeFirstSync", "sql"]);
const { getSessionKysely } = await bundled(/^session-accessor\.sqlite-scope-.*\.mjs$/, ["getSessionKysely"]);
const { transcriptEventJsonSql, transcriptEventNavigationSql, transcriptEventModelNavigationSql, projectModelContextEventSql } =
  await bundled(/^transcript-payload-.*\.mjs$/, [
    "transcriptEventJsonSql", "transcriptEventNavigationSql", "transcriptEventModelNavigationSql", "projectModelContextEventSql",
  ]);
const { scanSessionTranscriptTree, selectSessionTranscriptTreePathNodes } =
  await bundled(/^transcript-tree-.*\.mjs$/, ["scanSessionTranscriptTree", "selectSessionTranscriptTreePathNodes"]);
const { normalizeSessionContextEntryBoundaries } =
  await bundled(/^session-entry-navigation-.*\.mjs$/, ["normalizeSessionContextEntryBoundaries"]);
const transports = join(pkg, "..", "@openclaw", "ai", "dist", "transports.mjs");
const { isCompactionReplayCheckpoint } = await import(pathToFileURL(
  existsSync(transports) ? transports : join(pkg, "node_modules", "@openclaw", "ai", "dist", "transports.mjs"),
).href);

// ---- one job: what OpenClaw's readers make of one database's session ----------------------
function readJob(job) {
  const { agent: agentId, session: sessionId, entry: entryId, dbPath } = job;
  process.env.OPENCLAW_STATE_DIR = job.copyState;
  // ---- the session's key and budget (plain lookups; OpenClaw's target wants the key) ---------
  const lookup = new DatabaseSync(dbPath, { readOnly: true });
  const window = lookup.prepare("SELECT session_key FROM session_windows WHERE session_id = ?").get(sessionId);
  if (!window) throw new Error(`${sessionId}: no session_windows row`);
  const node = lookup.prepare("SELECT entry_json FROM session_nodes WHERE session_key = ?").get(window.session_key);
  const sessionEntry = node ? JSON.parse(node.entry_json) : {};
  lookup.close();
  const budgetEnv = Number(job.contextTokens ?? process.env.MEMLENS_OPENCLAW_CONTEXT_TOKENS);
  const contextTokens = Number.isFinite(budgetEnv) && budgetEnv > 0 ? budgetEnv : sessionEntry.contextTokens;
  const target = { agentId, sessionId, sessionKey: window.session_key, storePath: dbPath };

  // ---- output helpers ---------------------------------------------------------------------
  const PRELUDE = Symbol.for("openclaw.sessionHistoryPrelude");
  // the messages of buildSessionContext(path), each with the entry it came from (found by running
  // OpenClaw's own iterateSessionContextMessages with a reader that notes the entry it reads)
  function contextOf(path) {
    let current;
    const sources = [];
    for (const message of iterateSessionContextMessages(path, (entry) => ((current = entry), entry))) {
      sources.push({ entryId: current.id, type: current.type, prelude: message[PRELUDE] === true });
    }
    const context = buildSessionContext(path);
    if (context.messages.length !== sources.length) throw new Error("context and its sources disagree");
    return { ...context, sources };
  }
  const ids = (entries) => entries.map((e) => e.id);

  // ---- 1. the embedded runner's read (bounded active branch) ------------------------------------
  const limits = resolveEmbeddedSessionContextLimits(contextTokens);
  // readOnly, as prepareSessionTranscriptHydration reads (dist/session-manager-*.mjs:139-143)
  let truncated = false;
  const notes = [];
  let runner;
  try {
    runner = SessionManager.openBounded(target, { ...limits, readOnly: true, onTruncated: () => (truncated = true) });
  } catch (error) {
    // a stale projection (session_transcript_index_state behind transcript_events): the run
    // would wait for OpenClaw's reconcile; here the model-context read stands in
    notes.push(`runner: ${error?.name ?? "error"}: ${error?.message ?? error}`);
  }

  // ---- 2. the model-context read (full tree scan) -----------------------------------------------
  const model = SessionManager.openModelContext(target);
  const modelBranch = model.getBranch();
  const modelContext = contextOf(modelBranch);
  runner ??= model;
  const runnerBranch = runner.getBranch();
  const runnerContext = contextOf(runnerBranch);

  // ---- 3. readSessionTranscriptModelContext's snapshot, at ENTRY_ID (or the leaf) ---------------
  function hydrateContextEntry(eventJson, entry) {
    return {
      ...JSON.parse(eventJson),
      parentId: entry.parentId,
      ...(entry.type === "compaction" || entry.type === "reset") && entry.firstKeptEntryId !== undefined
        ? { firstKeptEntryId: entry.firstKeptEntryId } : {},
    };
  }
  function snapshotAt(leafId) {
    const result = withOpenClawAgentDatabaseReadOnly((database) => runSqliteDeferredTransactionSync(database.db, () => {
      const db = getSessionKysely(database.db);
      const at = leafId === undefined ? undefined : executeSqliteQueryTakeFirstSync(database.db, db
        .selectFrom("transcript_event_identities").select("seq")
        .where("session_id", "=", sessionId).where("event_id", "=", leafId));
      if (leafId !== undefined && !at) throw new Error(`${leafId}: not an event of ${sessionId}`);
      const base = db.selectFrom("transcript_events").where("session_id", "=", sessionId)
        .$if(at !== undefined, (q) => q.where("seq", "<=", at.seq));
      const header = executeSqliteQueryTakeFirstSync(database.db, base.select(transcriptEventJsonSql(database.db).as("event_json"))
        .where(sql`json_extract(${transcriptEventNavigationSql()}, '$.type')`, "=", "session").orderBy("seq", "asc").limit(1));
      const tree = scanSessionTranscriptTree((function* () {
        for (const row of iterateSqliteQuerySync(database.db, base.select(["seq", transcriptEventModelNavigationSql().as("navigation_json")]).orderBy("seq", "asc"))) {
          yield { ...JSON.parse(row.navigation_json), seq: row.seq };
        }
      })());
      const entries = normalizeSessionContextEntryBoundaries(
        selectSessionTranscriptTreePathNodes(tree, leafId ?? tree.leafId).map(({ entry, parentId }) => {
          entry.parentId = parentId;
          return entry;
        }),
        tree.nodes,
      );
      // readModelEntries, unbounded: the selected entries' payloads in the model projection
      const payloads = new Map();
      for (const { entry, context } of iterateSessionContextEntries(entries)) {
        const omit = context !== "current" && entry.type === "message" && entry.message.role === "assistant" &&
          isCompactionReplayCheckpoint(entry.message.providerReplay);
        const row = executeSqliteQueryTakeFirstSync(database.db, base.select(() => [
          projectModelContextEventSql(transcriptEventJsonSql(database.db), sql.val(omit ? 1 : 0), undefined).as("event_json"),
        ]).where("seq", "=", entry.seq));
        payloads.set(entry, hydrateContextEntry(row.event_json, entry));
      }
      return {
        treeLeafId: tree.leafId,
        events: [...header ? [JSON.parse(header.event_json)] : [], ...entries.map((e) => payloads.get(e) ?? e)],
      };
    }, { operationLabel: "memlens oracle context read" }), { agentId, env: process.env });
    if (!result.found) throw new Error(`${dbPath}: OpenClaw found no database`);
    const manager = SessionManager.fromSelectedEntries(result.value.events);
    return { treeLeafId: result.value.treeLeafId, manager };
  }
  const snap = snapshotAt(entryId && entryId !== "all" ? entryId : undefined);
  const snapBranch = snap.manager.getBranch();
  const snapContext = contextOf(snapBranch);

  // ---- output ----------------------------------------------------------------------------
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  if (truncated) notes.push(`runner: bounded read truncated (maxBytes ${limits.maxBytes}, maxEvents ${limits.maxEvents})`);
  // where two readers' messages differ: index and the top-level (and message.*) keys
  function differences(a, b) {
    const out = [];
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      if (same(a[i], b[i])) continue;
      const keys = [...new Set([...Object.keys(a[i] ?? {}), ...Object.keys(b[i] ?? {})])];
      out.push({ index: i, keys: keys.filter((k) => !same(a[i]?.[k], b[i]?.[k])) });
    }
    return out;
  }
  const runnerVsModel = differences(runnerContext.messages, modelContext.messages);
  // expected: the model projection drops a toolResult's `details` (projectModelContextEventSql);
  // the runner strips it later, at the LLM boundary (stripToolResultDetails)
  const onlyDetails = runnerVsModel.every(({ index, keys }) =>
    runnerContext.messages[index]?.role === "toolResult" && same(keys, ["details"]));
  if (!onlyDetails) notes.push(`runner and model-context reads differ: ${JSON.stringify(runnerVsModel)}`);
  const at = entryId && entryId !== "all" ? entryId : undefined;
  if (!at && !same(snapContext.messages, modelContext.messages)) notes.push("snapshot at leaf differs from readSessionTranscriptModelContext");
  const chosen = at ? snapContext : runnerContext;
  const chosenBranch = at ? snapBranch : runnerBranch;
  // ENTRY_ID "all": the snapshot at every entry of the session, in seq order
  let contexts;
  if (entryId === "all") {
    const lookupAll = new DatabaseSync(dbPath, { readOnly: true });
    const rows = lookupAll.prepare(
      "SELECT event_id, seq, event_type FROM transcript_event_identities WHERE session_id = ? ORDER BY seq",
    ).all(sessionId);
    lookupAll.close();
    contexts = rows.map(({ event_id: id, seq, event_type: type }) => {
      const one = snapshotAt(id);
      const branch = one.manager.getBranch();
      const context = contextOf(branch);
      return {
        entryId: id, seq, type, leafId: one.manager.getLeafId(), activeEntryIds: ids(branch),
        sources: context.sources, messages: context.messages, llm: convertToLlm(context.messages),
      };
    });
  }
  const out = {
    package: JSON.parse(readFileSync(join(pkg, "package.json"), "utf8")).version,
    sessionKey: window.session_key,
    header: (at ? snap.manager : runner).getHeader() ?? null,
    leafId: at ? snap.manager.getLeafId() : runner.getLeafId(),
    treeLeafId: snap.treeLeafId,
    activeEntryIds: ids(chosenBranch),
    activeEntryTypes: chosenBranch.map((e) => e.type),
    messages: chosen.messages,
    sources: chosen.sources,
    llm: convertToLlm(chosen.messages),
    thinkingLevel: chosen.thinkingLevel,
    model: chosen.model,
    limits: { contextTokens: contextTokens ?? null, ...limits, truncated },
    readers: {
      runner: { leafId: runner.getLeafId(), activeEntryIds: ids(runnerBranch), sources: runnerContext.sources },
      model: { leafId: model.getLeafId(), activeEntryIds: ids(modelBranch), sources: modelContext.sources },
      snapshot: { leafId: snap.manager.getLeafId(), activeEntryIds: ids(snapBranch), sources: snapContext.sources },
    },
    readerDifferences: runnerVsModel,
    ...contexts ? { contexts } : {},
    notes,
  };
  return out;
}

const outs = jobs.map(readJob);
process.stdout.write(JSON.stringify(batch ? outs : outs[0]));
// last, so it runs after OpenClaw's own exit hooks (they create state/openclaw-quarantine.sqlite)
process.on("exit", () => rmSync(tmp, { recursive: true, force: true }));
