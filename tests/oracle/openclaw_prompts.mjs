// OpenClaw's own compaction instruction builders, run on the cases memlens is checked with.
// node openclaw_prompts.mjs OPENCLAW_PACKAGE_DIR CASES.json  ->  JSON on stdout
//
// The builders (buildCompactionSummarizationInstructions, buildCompactionStructureInstructions
// and the constants and helpers they use) are not exported by the bundle, so their source
// text is read from dist/ (the file is found by content, never by its hashed name) and
// evaluated as is; the helpers that are exported (wrapUntrustedPromptDataBlock,
// resolveCompactionInstructions) are imported through their `export { x as y }` aliases.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [pkg, casesFile] = process.argv.slice(2);
const dist = join(pkg, "dist");
const files = readdirSync(dist).filter((f) => f.endsWith(".mjs"));

function fileWith(marker) {
  for (const f of files) {
    const text = readFileSync(join(dist, f), "utf8");
    if (text.includes(marker)) return { path: join(dist, f), text };
  }
  throw new Error(`no dist file holds ${marker}`);
}

async function exported(name) {
  const { path, text } = fileWith(`function ${name}(`);
  const m = new RegExp(`\\b${name} as ([\\w$]+)`).exec(text.slice(text.lastIndexOf("export {")));
  if (!m) throw new Error(`${name} is not exported from ${path}`);
  return (await import(pathToFileURL(path).href))[m[1]];
}

// One top-level declaration: from its first line to the next top-level statement or comment.
function declaration(text, name) {
  const starts = [`\nfunction ${name}(`, `\nasync function ${name}(`, `\nconst ${name} =`];
  const at = starts.map((s) => text.indexOf(s)).filter((i) => i >= 0)[0];
  if (at === undefined) throw new Error(`no declaration of ${name}`);
  const rest = text.slice(at + 1);
  const end = rest.slice(1).search(/\n[A-Za-z/]/);
  return rest.slice(0, end < 0 ? undefined : end + 1);
}

const { text } = fileWith("function buildCompactionStructureInstructions(");
const names = [
  "MERGE_SUMMARIES_INSTRUCTIONS",
  "IDENTIFIER_PRESERVATION_INSTRUCTIONS",
  "resolveIdentifierPreservationInstructions",
  "buildCompactionSummarizationInstructions",
  "MAX_UNTRUSTED_INSTRUCTION_CHARS",
  "REQUIRED_SUMMARY_SECTIONS",
  "STRICT_EXACT_IDENTIFIERS_INSTRUCTION",
  "POLICY_OFF_EXACT_IDENTIFIERS_INSTRUCTION",
  "wrapUntrustedInstructionBlock",
  "resolveExactIdentifierSectionInstruction",
  "buildCompactionStructureInstructions",
];
const source = names.map((n) => declaration(text, n)).join("\n");
const oc = new Function(
  "wrapUntrustedPromptDataBlock",
  `${source}\nreturn { ${names.join(", ")} };`,
)(await exported("wrapUntrustedPromptDataBlock"));
const resolveCompactionInstructions = await exported("resolveCompactionInstructions");

const out = JSON.parse(readFileSync(casesFile, "utf8")).map((c) => {
  const summarizationInstructions = {
    identifierPolicy: c.identifierPolicy ?? undefined,
    identifierInstructions: c.identifierInstructions ?? undefined,
  };
  // compaction-safeguard.ts: event (/compact focus) -> runtime (config) -> default
  const customInstructions = resolveCompactionInstructions(c.focus ?? undefined, c.customInstructions ?? undefined);
  const structured = oc.buildCompactionStructureInstructions(
    customInstructions, summarizationInstructions, c.latestRequest ?? undefined);
  const focus = (custom) => oc.buildCompactionSummarizationInstructions(custom, summarizationInstructions);
  // summarizeInStages: the merge call's customInstructions; the safeguard passes its
  // correctiveInstructions, "" on the first attempt
  const custom = "".trim();
  const mergeCustom = custom ? `${oc.MERGE_SUMMARIES_INSTRUCTIONS}\n\n${custom}` : oc.MERGE_SUMMARIES_INSTRUCTIONS;
  // the split turn: [splitTurnFocus, correctiveInstructions].filter(Boolean).join("\n\n")
  const splitTurnFocus = oc.wrapUntrustedInstructionBlock("Additional context from /compact", customInstructions);
  const prefixCustom = [splitTurnFocus, ""].filter(Boolean).join("\n\n");
  // runSummarizationCompletion: promptText += `\n\nAdditional focus: ${customInstructions}`
  const tail = (prompt, f) => (f ? `${prompt}\n\nAdditional focus: ${f}` : prompt);
  return {
    resolved: customInstructions,
    structured,
    summaryFocus: focus("") ?? null,
    summaryTail: tail(structured, focus("")),
    mergeTail: tail(structured, focus(mergeCustom)),
    turnPrefixTail: tail("", focus(prefixCustom)),
    exactIdentifiers: oc.resolveExactIdentifierSectionInstruction(summarizationInstructions),
    identifierPreservation: oc.resolveIdentifierPreservationInstructions(summarizationInstructions) ?? null,
  };
});
console.log(JSON.stringify(out));
