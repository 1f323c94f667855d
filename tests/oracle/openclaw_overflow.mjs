// OpenClaw's own overflow-recovery helpers on given cases.
// node openclaw_overflow.mjs OPENCLAW_PACKAGE_DIR < cases.json  ->  JSON on stdout
// {truncation: [{window, messages}], retries: [[Math.random() draws]]}
import { readFileSync, readdirSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [pkg] = process.argv.slice(2);
const dist = join(pkg, "dist");

// A bundled module (hashed file name) and its exports by their source names.
async function bundled(pattern, wanted) {
  for (const file of readdirSync(dist).filter((f) => pattern.test(f))) {
    const source = readFileSync(join(dist, file), "utf8");
    const line = source.match(/export \{([^}]*)\};?\s*$/m);
    if (!line) continue;
    const alias = Object.fromEntries(
      line[1].split(",").map((p) => p.trim().split(/\s+as\s+/)).map(([name, as]) => [name, as ?? name]),
    );
    if (!wanted.every((name) => name in alias)) continue;
    const mod = await import(pathToFileURL(join(dist, file)).href);
    return Object.fromEntries(wanted.map((name) => [name, mod[alias[name]]]));
  }
  throw new Error(`no ${pattern} exports ${wanted.join(", ")}`);
}

const trunc = await bundled(/^tool-result-truncation-.*\.mjs$/, [
  "resolveLiveToolResultMaxChars",
  "resolveLiveToolResultAggregateMaxChars",
  "sessionLikelyHasOversizedToolResults",
  "estimateToolResultReductionPotential",
  "truncateOversizedToolResultsInMessages",
]);
const { retryAsync } = await bundled(/^src-.*\.mjs$/, ["retryAsync"]);

const input = [];
for await (const chunk of process.stdin) input.push(chunk); // readFileSync(0) may hit EAGAIN
const cases = JSON.parse(Buffer.concat(input).toString("utf8"));
const truncation = cases.truncation.map(({ window, messages }) => {
  const maxChars = trunc.resolveLiveToolResultMaxChars({ contextWindowTokens: window });
  const params = { messages, contextWindowTokens: window, maxCharsOverride: maxChars };
  // the recovery's plan: buildRecoveryToolResultReplacementPlan, as in the run loop
  const done = trunc.truncateOversizedToolResultsInMessages(messages, window, maxChars);
  return {
    maxChars,
    aggregateChars: trunc.resolveLiveToolResultAggregateMaxChars({
      contextWindowTokens: window,
      perResultMaxChars: maxChars,
    }),
    likely: trunc.sessionLikelyHasOversizedToolResults(params),
    potential: trunc.estimateToolResultReductionPotential(params),
    truncatedCount: done.truncatedCount,
    messages: done.messages.map((m, i) => (m === messages[i] || JSON.stringify(m) === JSON.stringify(messages[i]) ? null : m)),
  };
});

// summarizeChunks: retryAsync(() => generateSummary(...), {attempts: 3, minDelayMs: 500, maxDelayMs: 5e3, jitter: .2})
const retries = [];
for (const draws of cases.retries) {
  const queue = [...draws];
  const sleeps = [];
  let calls = 0;
  try {
    await retryAsync(async () => {
      calls += 1;
      throw new Error("503 overloaded");
    }, {
      attempts: 3,
      minDelayMs: 500,
      maxDelayMs: 5e3,
      jitter: .2,
      label: "compaction/generateSummary",
      random: () => queue.shift(),
      sleep: async (ms) => { sleeps.push(ms); },
    });
  } catch {}
  retries.push({ calls, sleeps });
}
process.stdout.write(JSON.stringify({ truncation, retries }));
