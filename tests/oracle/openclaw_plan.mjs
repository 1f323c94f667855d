// OpenClaw's own compaction planning (dist/compaction-planning-*.mjs) on given messages,
// in the order and shape its compaction safeguard (dist/builtin-openclaw-*.mjs) uses it.
// node openclaw_plan.mjs OPENCLAW_PACKAGE_DIR < cases.json  ->  JSON on stdout
// node openclaw_plan.mjs OPENCLAW_PACKAGE_DIR --tokens-before PI_PACKAGE_DIR TRANSCRIPT [#N]
//   -> prepareCompaction's tokensBefore (estimateContextTokens of buildSessionContext)
// Each case: {window, share, tokensBefore, summarize: [AgentMessage], turnPrefix: [...],
// previousSummary, droppedSummary}. Messages are tagged with __memlens (their index in
// summarize, "p<k>" in turnPrefix, "prev" for the re-distilled previous summary) so the
// results can name them; a message OpenClaw made up comes back as {synthetic: toolCallId}.
import { readFileSync, readdirSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [pkg, mode, ...rest] = process.argv.slice(2);
const dist = join(pkg, "dist");

// A bundled module (hashed file name) and its exports by their source names.
async function bundled(pattern, wanted) {
  for (const f of readdirSync(dist).filter((n) => pattern.test(n))) {
    const line = readFileSync(join(dist, f), "utf8").match(/export \{([^}]*)\};?\s*$/m);
    if (!line) continue;
    const names = Object.fromEntries(
      line[1].split(",").map((p) => p.trim().split(/\s+as\s+/)).map(([n, as]) => [n, as ?? n]),
    );
    if (!wanted.every((n) => n in names)) continue;
    const m = await import(pathToFileURL(join(dist, f)).href);
    return Object.fromEntries(wanted.map((n) => [n, m[names[n]]]));
  }
  throw new Error(`no ${pattern} exports ${wanted.join(", ")}`);
}

if (mode === "--tokens-before") {
  // pi parses and migrates the file (v1 included); OpenClaw builds the context and sizes it
  const [piPkg, transcript, at] = rest;
  const pi = await import(pathToFileURL(join(piPkg, "dist", "index.js")).href);
  const { buildSessionContext } = await bundled(/^session-.*\.mjs$/, ["buildSessionContext"]);
  const { estimateContextTokens } = await bundled(/^compaction-.*\.mjs$/, ["estimateContextTokens"]);
  const entries = pi.parseSessionEntries(readFileSync(transcript, "utf8"));
  pi.migrateSessionEntries(entries);
  const body = entries.filter((e) => e.type !== "session");
  const byId = new Map(body.map((e) => [e.id, e]));
  const path = [];
  for (let e = at ? body[Number(at.slice(1)) - 1] : body.at(-1); e; e = byId.get(e.parentId)) path.unshift(e);
  process.stdout.write(JSON.stringify(estimateContextTokens(buildSessionContext(path).messages)));
  process.exit(0);
}
const file = readdirSync(dist).find((f) => /^compaction-planning-.*\.mjs$/.test(f));
const source = readFileSync(join(dist, file), "utf8");
const exportLine = source.match(/export \{([^}]*)\};?\s*$/m)[1];
const alias = Object.fromEntries(
  exportLine.split(",").map((p) => p.trim().split(/\s+as\s+/)).map(([name, as]) => [name, as ?? name]),
);
const mod = await import(pathToFileURL(join(dist, file)).href);
const fn = (name) => {
  const f = mod[alias[name]];
  if (f === undefined) throw new Error(`${file} does not export ${name}`);
  return f;
};
const buildHistoryPrunePlan = fn("buildHistoryPrunePlan");
const buildStageSplitPlan = fn("buildStageSplitPlan");
const buildSummaryChunks = fn("buildSummaryChunks");
const computeAdaptiveChunkRatio = fn("computeAdaptiveChunkRatio");
const estimateMessagesTokens = fn("estimateMessagesTokens");
const sanitize = fn("sanitizeCompactionMessages");
const project = fn("projectCompactionMessagesForPlanning");
const OVERHEAD = fn("SUMMARIZATION_OVERHEAD_TOKENS");

// prependPreviousSummaryForRedistill's prefix, read from the safeguard's bundle
const PREFIX = JSON.parse(
  readdirSync(dist)
    .filter((f) => /^builtin-openclaw-.*\.mjs$/.test(f))
    .map((f) => readFileSync(join(dist, f), "utf8").match(/const PREVIOUS_SUMMARY_REDISTILL_PREFIX = ("[^"]*");/))
    .find(Boolean)[1],
);
const WORKER_MIN_MESSAGES = 64; // COMPACTION_PLANNING_WORKER_MIN_MESSAGES

// runCompactionPlan: under 64 sanitized messages the helper runs on the messages as
// given; from 64 the worker runs it on the sanitized, projected messages.
function planned(messages, run) {
  const safe = sanitize(messages);
  if (safe.length < WORKER_MIN_MESSAGES) return run(messages, (m) => m);
  const projected = project(safe);
  const back = new Map(projected.map((m, i) => [m, safe[i]]));
  return run(projected, (m) => back.get(m));
}
const ratioOf = (messages, window) => planned(messages, (ms) => computeAdaptiveChunkRatio(ms, window));
const splitOf = (messages, maxChunkTokens) =>
  planned(messages, (ms, back) => {
    const plan = buildStageSplitPlan({ messages: ms, maxChunkTokens });
    return plan.mode === "split" ? plan.chunks.map((c) => c.map(back)) : null;
  });
const chunksOf = (messages, maxChunkTokens) =>
  planned(messages, (ms, back) => buildSummaryChunks({ messages: ms, maxChunkTokens }).map((c) => c.map(back)));

const name = (m) => (m.__memlens !== undefined ? m.__memlens : { synthetic: m.toolCallId });
const names = (list) => list.map(name).filter((n) => n !== "prev");

// summarizeViaLLM -> summarizeInStages -> summarizeWithFallback -> summarizeChunks
function stages(messages, maxChunkTokens, previousSummary) {
  const prev = previousSummary?.trim();
  const seq = prev
    ? [{
        role: "user",
        content: [{ type: "text", text: `<previous-compaction-summary>\n${PREFIX}\n\n${prev}\n</previous-compaction-summary>` }],
        timestamp: 0,
        __memlens: "prev",
      }, ...messages]
    : messages;
  if (seq.length === 0) return { parts: [], chunks: [], calls: 0 };
  const parts = splitOf(seq, maxChunkTokens) ?? [seq];
  const chunks = parts.flatMap((part) => chunksOf(part, maxChunkTokens));
  return {
    parts: parts.map(names).filter((p) => p.length),
    chunks: chunks.map(names).filter((c) => c.length),
    calls: chunks.length + (parts.length > 1 ? 1 : 0),
  };
}

const input = [];
for await (const chunk of process.stdin) input.push(chunk); // readFileSync(0) may hit EAGAIN
const cases = JSON.parse(Buffer.concat(input).toString("utf8"));
const out = cases.map((c) => {
  const summarize = c.summarize.map((m, i) => ({ ...m, __memlens: i }));
  const turnPrefix = c.turnPrefix.map((m, i) => ({ ...m, __memlens: `p${i}` }));
  const prune = buildHistoryPrunePlan({
    messagesToSummarize: summarize,
    turnPrefixMessages: turnPrefix,
    tokensBefore: c.tokensBefore,
    contextWindowTokens: c.window,
    maxHistoryShare: c.share,
    parts: 2,
  });
  const result = {
    perMessage: summarize.map((m) => estimateMessagesTokens([m])),
    // what the planning worker sees of them (projected), from 64 messages
    workerPerMessage: sanitize(summarize).length >= WORKER_MIN_MESSAGES
      ? project(sanitize(summarize)).map((m) => estimateMessagesTokens([m]))
      : null,
    summarizableTokens: prune.summarizableTokens,
    newContentTokens: prune.newContentTokens,
    maxHistoryTokens: prune.maxHistoryTokens,
    pruned: null,
  };
  let messages = summarize;
  let previous = c.previousSummary;
  if (prune.newContentTokens > prune.maxHistoryTokens && prune.pruned) {
    const p = prune.pruned;
    result.pruned = {
      droppedChunks: p.droppedChunks,
      budgetTokens: p.budgetTokens,
      kept: names(p.messages),
      dropped: names(p.droppedMessagesList),
    };
    if (p.droppedChunks > 0) {
      messages = p.messages;
      const ratio = ratioOf(p.droppedMessagesList, c.window);
      const max = Math.max(1, Math.floor(c.window * ratio) - OVERHEAD);
      Object.assign(result.pruned, { ratio, maxChunkTokens: max }, stages(p.droppedMessagesList, max, previous));
      previous = c.droppedSummary; // the dropped history's summary (its text stands in)
    }
  }
  const ratio = ratioOf([...messages, ...turnPrefix], c.window);
  const maxChunkTokens = Math.max(1, Math.floor(c.window * ratio) - OVERHEAD);
  result.summarize = names(messages);
  result.ratio = ratio;
  result.maxChunkTokens = maxChunkTokens;
  Object.assign(result, stages(messages, maxChunkTokens, previous));
  result.prefix = turnPrefix.length ? stages(turnPrefix, maxChunkTokens, undefined) : { parts: [], chunks: [], calls: 0 };
  return result;
});
process.stdout.write(JSON.stringify(out));
