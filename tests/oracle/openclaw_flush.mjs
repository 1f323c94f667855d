// OpenClaw's own memory-flush gate, run on the cases memlens is checked with.
// node openclaw_flush.mjs OPENCLAW_PACKAGE_DIR CASES.json  ->  JSON on stdout
//
// The gate (shouldRunMemoryFlush, hasAlreadyFlushedForCurrentCompaction,
// resolveCompactionThreshold in dist/agent-runner-memory-*.mjs) and the plan
// (buildMemoryFlushPlan in dist/extensions/memory-core/index.js) are not exported, so
// their source text is read from dist/ (found by content, never by hashed name) and
// evaluated as is, with the exported helpers they call imported through their
// `export { x as y }` aliases. Only the plan's prompt text helpers are stubbed: they
// shape the flush prompt, never a number. The glue is runMemoryFlushIfNeeded's own
// lines, copied below.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [pkg, casesFile] = process.argv.slice(2);
const dist = join(pkg, "dist");
const files = readdirSync(dist).filter((f) => f.endsWith(".mjs")).map((f) => join(dist, f));
const texts = new Map();
const read = (p) => texts.get(p) ?? texts.set(p, readFileSync(p, "utf8")).get(p);

function fileWith(marker, list = files) {
  for (const p of list) if (read(p).includes(marker)) return p;
  throw new Error(`no dist file holds ${marker}`);
}

async function exported(name) {
  for (const p of files) {
    const text = read(p);
    if (!text.includes(`function ${name}(`) && !text.includes(`const ${name} =`)) continue;
    const m = new RegExp(`\\b${name} as ([\\w$]+)`).exec(text.slice(text.lastIndexOf("export {")));
    if (m) return (await import(pathToFileURL(p).href))[m[1]];
  }
  throw new Error(`${name} is not exported by any dist file`);
}

function declaration(text, name) {
  const starts = [`\nfunction ${name}(`, `\nconst ${name} =`];
  const at = starts.map((s) => text.indexOf(s)).filter((i) => i >= 0)[0];
  if (at === undefined) throw new Error(`no declaration of ${name}`);
  const rest = text.slice(at + 1);
  const end = rest.slice(1).search(/\n[A-Za-z/]/);
  return rest.slice(0, end < 0 ? undefined : end + 1);
}

function evaluate(text, names, deps) {
  const source = names.map((n) => declaration(text, n)).join("\n");
  return new Function(...Object.keys(deps), `${source}\nreturn { ${names.join(", ")} };`)(
    ...Object.values(deps));
}

const gate = evaluate(read(fileWith("function shouldRunMemoryFlush(")), [
  "resolvePositiveTokenCount",
  "resolveCompactionThreshold",
  "shouldRunMemoryFlush",
  "shouldRunPreflightCompaction",
  "hasAlreadyFlushedForCurrentCompaction",
], { resolveFreshSessionTotalTokens: await exported("resolveFreshSessionTotalTokens") });

const core = join(dist, "extensions", "memory-core", "index.js");
const plan = evaluate(read(fileWith("function buildMemoryFlushPlan(", [core])), [
  "DEFAULT_MEMORY_FLUSH_SOFT_TOKENS",
  "DEFAULT_MEMORY_FLUSH_FORCE_TRANSCRIPT_BYTES",
  "normalizeNonNegativeInt",
  "buildMemoryFlushPlan",
], {
  parseNonNegativeByteSize: await exported("parseNonNegativeByteSize"),
  resolveEffectiveCompactionReserveTokens: await exported("resolveEffectiveCompactionReserveTokens"),
  DEFAULT_AGENT_COMPACTION_RESERVE_TOKENS_FLOOR: await exported("DEFAULT_AGENT_COMPACTION_RESERVE_TOKENS_FLOOR"),
  // prompt text only
  resolveMemoryCoreNowMs: (now) => now ?? 0,
  resolveCronStyleNow: () => ({ timeLine: "", userTimezone: "UTC" }),
  formatDateStampInTimezone: () => "1970-01-01",
  ensureNoReplyHint: (t) => t,
  ensureMemoryFlushSafetyHints: (t) => t,
  appendCurrentTimeLine: (t) => t,
  DEFAULT_MEMORY_FLUSH_PROMPT: "",
  DEFAULT_MEMORY_FLUSH_SYSTEM_PROMPT: "",
});
const normalizeEntry = await exported("projectCanonicalSessionEntryShape");

const out = JSON.parse(readFileSync(casesFile, "utf8")).map((c) => {
  const cfg = { agents: { defaults: { compaction: { memoryFlush: c.memoryFlush } } } };
  const entry = c.entry ? normalizeEntry(c.entry) : undefined;
  // runMemoryFlushIfNeeded, in order
  if (entry?.incognito === true) return { fires: false, threshold: null, skipped: "incognito" };
  if (!(true && !c.isHeartbeat && !c.isCli)) return { fires: false, threshold: null, skipped: "runtime" };
  const contextWindowTokens = c.window;
  const memoryFlushPlan = plan.buildMemoryFlushPlan({ cfg, contextWindowTokens });
  if (!memoryFlushPlan) return { fires: false, threshold: null, skipped: "disabled" };
  const flushThreshold = Math.max(0, gate.resolveCompactionThreshold({
    contextWindowTokens,
    reserveTokensFloor: memoryFlushPlan.reserveTokensFloor,
  }) - Math.max(0, Math.floor(memoryFlushPlan.softThresholdTokens)));
  const forceFlushTranscriptBytes = memoryFlushPlan.forceFlushTranscriptBytes;
  const shouldCheckTranscriptSizeForForcedFlush = Boolean(entry && Number.isFinite(forceFlushTranscriptBytes) && forceFlushTranscriptBytes > 0);
  const transcriptByteSize = shouldCheckTranscriptSizeForForcedFlush ? c.transcriptBytes : undefined;
  const shouldForceFlushByTranscriptSize = typeof transcriptByteSize === "number" && transcriptByteSize >= forceFlushTranscriptBytes;
  const tokenCountForFlush = typeof c.tokens === "number" && Number.isFinite(c.tokens) && c.tokens > 0 ? c.tokens : undefined;
  const fires = gate.shouldRunMemoryFlush({ entry, tokenCount: tokenCountForFlush, threshold: flushThreshold })
    || shouldForceFlushByTranscriptSize && entry != null && !gate.hasAlreadyFlushedForCurrentCompaction(entry);
  return {
    fires,
    threshold: flushThreshold,
    reserveTokensFloor: memoryFlushPlan.reserveTokensFloor,
    softThresholdTokens: memoryFlushPlan.softThresholdTokens,
    forceFlushTranscriptBytes,
    flushCompactionCount: entry?.memoryFlush?.compactionCount ?? null,
  };
});
console.log(JSON.stringify(out));
