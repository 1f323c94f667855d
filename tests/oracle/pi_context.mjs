// What pi itself makes of a transcript: its own parse, migration and buildSessionContext.
// node pi_context.mjs PI_PACKAGE_DIR TRANSCRIPT  ->  JSON on stdout
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [pkg, transcript] = process.argv.slice(2);
// The modules themselves, not dist/index.js: that loads the whole agent (seconds).
const mod = (p) => import(pathToFileURL(join(pkg, "dist", "core", ...p.split("/"))).href);
const pi = {
  ...(await mod("session-manager.js")),
  ...(await mod("compaction/compaction.js")),
  ...(await mod("messages.js")),
};
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
