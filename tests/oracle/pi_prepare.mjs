// What pi's own prepareCompaction decides at entries of a transcript, for several keepRecentTokens.
// node pi_prepare.mjs PI_PACKAGE_DIR TRANSCRIPT KEEP[,KEEP...] [ENTRY_ID...]  ->  JSON on stdout
// Without entry ids: every entry. Per entry and keep value: null (pi would not compact)
// or {firstKeptEntryId, isSplitTurn, summarize, turnPrefix, tokensBefore, readFiles,
// modifiedFiles, previousSummary}.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [pkg, transcript, keeps, ...ids] = process.argv.slice(2);
const mod = (p) => import(pathToFileURL(join(pkg, "dist", "core", ...p.split("/"))).href);
const sm = await mod("session-manager.js");
const comp = await mod("compaction/compaction.js");
const entries = sm.parseSessionEntries(readFileSync(transcript, "utf8"));
sm.migrateSessionEntries(entries);
const body = entries.filter((e) => e.type !== "session");
const byId = new Map(body.map((e) => [e.id, e]));

function pathTo(id) {
  const path = [];
  let cur = byId.get(id);
  while (cur) {
    path.unshift(cur);
    cur = cur.parentId ? byId.get(cur.parentId) : undefined;
  }
  return path;
}

const out = {};
for (const id of ids.length ? ids : body.map((e) => e.id)) {
  out[id] = {};
  for (const keep of keeps.split(",").map(Number)) {
    const settings = { ...comp.DEFAULT_COMPACTION_SETTINGS, keepRecentTokens: keep };
    const prep = comp.prepareCompaction(pathTo(id), settings);
    if (!prep) {
      out[id][keep] = null;
      continue;
    }
    // As pi's compaction details: read = read - modified; modified = written + edited.
    const modified = new Set([...prep.fileOps.written, ...prep.fileOps.edited]);
    const read = [...prep.fileOps.read].filter((f) => !modified.has(f));
    out[id][keep] = {
      firstKeptEntryId: prep.firstKeptEntryId,
      isSplitTurn: prep.isSplitTurn,
      summarize: prep.messagesToSummarize.length,
      turnPrefix: prep.turnPrefixMessages.length,
      tokensBefore: prep.tokensBefore,
      readFiles: read.sort(),
      modifiedFiles: [...modified].sort(),
      previousSummary: prep.previousSummary ?? null,
    };
  }
}
console.log(JSON.stringify(out));
