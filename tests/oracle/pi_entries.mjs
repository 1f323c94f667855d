// What pi itself makes of a transcript, entry by entry, in one process.
// node pi_entries.mjs PI_PACKAGE_DIR TRANSCRIPT [contexts|leaf|messages]  ->  JSON on stdout
//
// contexts (default): pi's parse + migration, then for EVERY entry id
//   buildSessionContext(entries, id): per message its role, text, tool call ids,
//   toolCallId, estimateTokens; also the leaf's context through convertToLlm.
// leaf: only the leaf's context (for long files, where every entry's is too much).
// messages: every message an entry puts in context (message, custom_message,
//   branch_summary, compaction), in file order, with estimateTokens; no replay.
import { readFileSync } from "node:fs";
import { loadPi } from "./pi_modules.mjs";

const [pkg, transcript, mode = "contexts"] = process.argv.slice(2);
const pi = await loadPi(pkg);
const entries = pi.parseSessionEntries(readFileSync(transcript, "utf8"));
const header = entries.find((e) => e.type === "session") ?? null;
pi.migrateSessionEntries(entries);
const body = entries.filter((e) => e.type !== "session");

// The text memlens's Message.text() gives: text blocks joined by newlines, empties skipped.
function texts(content) {
  if (typeof content === "string") return content ? [content] : [];
  if (!Array.isArray(content)) return [];
  return content
    .filter((b) => b && (b.type === "text" || b.type === "input_text" || b.type === "output_text"))
    .map((b) => (typeof b.text === "string" ? b.text : String(b.text ?? "")))
    .filter((t) => t);
}

// pi's estimate; null where pi itself throws (a message shape pi never writes).
function estimate(m) {
  try {
    return pi.estimateTokens(m);
  } catch {
    return null;
  }
}

function describe(m) {
  let text;
  if (m.role === "bashExecution") text = [m.command, m.output].filter((t) => t).join("\n");
  else if (m.role === "compactionSummary" || m.role === "branchSummary") text = m.summary ?? "";
  else text = texts(m.content).join("\n");
  const calls = Array.isArray(m.content)
    ? m.content.filter((b) => b && b.type === "toolCall").map((b) => b.id)
    : [];
  return {
    role: m.role,
    text,
    toolCalls: calls,
    toolCallId: m.toolCallId ?? null,
    isError: m.isError ?? null,
    timestamp: m.timestamp ?? null,
    tokens: estimate(m),
  };
}

function entryMessage(e) {
  // The message buildSessionContext makes of one entry (its appendMessage / summary).
  if (e.type === "message") return e.message;
  if (e.type === "custom_message")
    return { role: "custom", content: e.content, timestamp: new Date(e.timestamp).getTime() };
  if (e.type === "branch_summary" && e.summary)
    return { role: "branchSummary", summary: e.summary, timestamp: new Date(e.timestamp).getTime() };
  if (e.type === "compaction")
    return { role: "compactionSummary", summary: e.summary, timestamp: new Date(e.timestamp).getTime() };
  return null;
}

const out = {
  header,
  entries: body.map((e) => ({ id: e.id, parentId: e.parentId ?? null, type: e.type })),
  leaf: body.length ? body[body.length - 1].id : null,
};
if (mode === "messages") {
  out.messages = [];
  for (const e of body) {
    const m = entryMessage(e);
    if (m) out.messages.push({ entry: e.id, entryTimestamp: e.timestamp, ...describe(m) });
  }
} else if (mode === "leaf") {
  out.leafContext = pi.buildSessionContext(body).messages.map(describe);
} else {
  const byId = new Map(body.map((e) => [e.id, e]));
  out.contexts = {};
  for (const e of body) {
    out.contexts[e.id] = pi.buildSessionContext(body, e.id, byId).messages.map(describe);
  }
  const leafContext = pi.buildSessionContext(body, out.leaf ?? undefined, byId);
  out.llm = pi.convertToLlm(leafContext.messages).map((m) => ({
    role: m.role,
    text: texts(m.content).join("\n"),
  }));
  out.model = leafContext.model;
  out.thinkingLevel = leafContext.thinkingLevel;
}
console.log(JSON.stringify(out));
