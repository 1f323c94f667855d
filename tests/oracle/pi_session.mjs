// Write a session with pi's own SessionManager, one call after another.
// node pi_session.mjs PI_PACKAGE_DIR OPS_JSON  ->  JSON on stdout
//
// OPS_JSON: {"open": PATH} or {"create": {"cwd": DIR, "sessionDir": DIR}}, and
// "ops": [{"call": METHOD, "args": [...]}, ...]. An argument "$N" is the result
// of op N (an entry id), so a later op can name an entry an earlier one wrote.
// Prints {"file": the session file, "results": [...], "leaf": the leaf id}.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [pkg, opsFile] = process.argv.slice(2);
const pi = await import(pathToFileURL(join(pkg, "dist", "core", "session-manager.js")).href);
const spec = JSON.parse(readFileSync(opsFile, "utf8"));
const sm = spec.open
  ? pi.SessionManager.open(spec.open)
  : pi.SessionManager.create(spec.create.cwd, spec.create.sessionDir);
const results = [];
const resolve = (a) => {
  if (typeof a === "string" && /^\$\d+$/.test(a)) return results[Number(a.slice(1))];
  if (Array.isArray(a)) return a.map(resolve);
  return a;
};
for (const op of spec.ops ?? []) {
  const value = sm[op.call](...(op.args ?? []).map(resolve));
  results.push(value === undefined ? null : value);
}
console.log(JSON.stringify({ file: sm.getSessionFile() ?? null, results, leaf: sm.getLeafId() }));
