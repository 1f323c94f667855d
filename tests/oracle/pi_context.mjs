// What pi itself makes of a transcript: its own parse, migration and buildSessionContext.
// node pi_context.mjs PI_PACKAGE_DIR TRANSCRIPT  ->  JSON on stdout
import { readFileSync } from "node:fs";
import { loadPi } from "./pi_modules.mjs";

const [pkg, transcript] = process.argv.slice(2);
const pi = await loadPi(pkg);
const entries = pi.parseSessionEntries(readFileSync(transcript, "utf8"));
pi.migrateSessionEntries(entries);
const body = entries.filter((e) => e.type !== "session");
const leaf = body[body.length - 1];
const context = pi.buildSessionContext(body, leaf ? leaf.id : undefined);
const messages = context.messages;
console.log(JSON.stringify({
  entries: body.length,
  leaf: leaf ? leaf.id : null,
  leafType: leaf ? leaf.type : null,
  messages: messages.length,
  roles: messages.map((m) => m.role),
  first: messages.length ? { role: messages[0].role, summary: messages[0].summary ?? null } : null,
  tokens: messages.reduce((n, m) => n + pi.estimateTokens(m), 0),
}));
