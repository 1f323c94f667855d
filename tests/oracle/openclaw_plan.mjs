// OpenClaw's own compaction planning (dist/compaction-planning-*.mjs) on given messages.
// node openclaw_plan.mjs OPENCLAW_PACKAGE_DIR < cases.json  ->  JSON on stdout
// Each case: {window, share, tokensBefore, summarize: [AgentMessage], turnPrefix: [...]}.
// Messages are tagged with __memlens (their index in summarize) so results can name them;
// a message OpenClaw made up (a synthetic tool result) comes back as {synthetic: toolCallId}.
import { readFileSync, readdirSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [pkg] = process.argv.slice(2);
const dist = join(pkg, "dist");
const file = readdirSync(dist).find((f) => /^compaction-planning-.*\.mjs$/.test(f));
const source = readFileSync(join(dist, file), "utf8");
const exportLine = source.match(/export \{([^}]*)\};?\s*$/m)[1];
const alias = Object.fromEntries(
  exportLine.split(",").map((p) => p.trim().split(/\s+as\s+/)).map(([name, as]) => [name, as]),
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
const OVERHEAD = fn("SUMMARIZATION_OVERHEAD_TOKENS");

const name = (m) => (m.__memlens !== undefined ? m.__memlens : { synthetic: m.toolCallId });
const names = (list) => list.map(name);

function stages(messages, maxChunkTokens) {
  // summarizeInStages: a split into parts, then buildSummaryChunks per part
  const plan = buildStageSplitPlan({ messages, maxChunkTokens });
  const parts = plan.mode === "split" ? plan.chunks : messages.length ? [messages] : [];
  return {
    parts: parts.map(names),
    chunks: parts.flatMap((part) => buildSummaryChunks({ messages: part, maxChunkTokens }).map(names)),
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
    summarizableTokens: prune.summarizableTokens,
    newContentTokens: prune.newContentTokens,
    maxHistoryTokens: prune.maxHistoryTokens,
    pruned: null,
  };
  let messages = summarize;
  // the compaction safeguard (dist/builtin-openclaw-*.mjs, "buildHistoryPrunePlan({")
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
      const ratio = computeAdaptiveChunkRatio(p.droppedMessagesList, c.window);
      const max = Math.max(1, Math.floor(c.window * ratio) - OVERHEAD);
      result.pruned.ratio = ratio;
      result.pruned.maxChunkTokens = max;
      result.pruned.chunks = buildSummaryChunks({ messages: p.droppedMessagesList, maxChunkTokens: max }).map(names);
    }
  }
  const ratio = computeAdaptiveChunkRatio([...messages, ...turnPrefix], c.window);
  const maxChunkTokens = Math.max(1, Math.floor(c.window * ratio) - OVERHEAD);
  result.summarize = names(messages);
  result.ratio = ratio;
  result.maxChunkTokens = maxChunkTokens;
  Object.assign(result, stages(messages, maxChunkTokens));
  return result;
});
process.stdout.write(JSON.stringify(out));
