// What pi sends: its buildSessionContext, convertToLlm and pi-ai's transformMessages.
// node pi_provider.mjs PI_PACKAGE_DIR TRANSCRIPT  ->  JSON on stdout
import { readFileSync } from "node:fs";
import { loadPi } from "./pi_modules.mjs";
import { pathToFileURL } from "node:url";
import { dirname, join } from "node:path";

const [pkg, transcript] = process.argv.slice(2);
const pi = await loadPi(pkg);
// pi-ai sits beside pi (npm hoists it); transformMessages is not exported from its index
const ai = join(dirname(pkg), "pi-ai", "dist", "providers", "transform-messages.js");
const { transformMessages } = await import(pathToFileURL(ai).href);
const entries = pi.parseSessionEntries(readFileSync(transcript, "utf8"));
pi.migrateSessionEntries(entries);
const body = entries.filter((e) => e.type !== "session");
const leaf = body[body.length - 1];
const context = pi.buildSessionContext(body, leaf ? leaf.id : undefined);
const model = { id: "oracle", provider: "oracle", api: "oracle", input: ["text", "image"] };
const sent = transformMessages(pi.convertToLlm(context.messages), model);
console.log(JSON.stringify(sent.map((m) => ({
  role: m.role,
  toolCallId: m.toolCallId ?? null,
  calls: m.role === "assistant" ? m.content.filter((b) => b.type === "toolCall").map((b) => b.id) : [],
  text: m.role === "toolResult" && Array.isArray(m.content) ? m.content.map((b) => b.text ?? "").join("") : null,
  isError: m.isError ?? null,
}))));
