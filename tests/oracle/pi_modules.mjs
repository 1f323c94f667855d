// pi's own modules for the oracle scripts: its session manager, compaction and messages.
// The modules themselves, not dist/index.js: that loads the whole agent (seconds).
import { pathToFileURL } from "node:url";
import { join } from "node:path";

export const piModule = (pkg, path) =>
  import(pathToFileURL(join(pkg, "dist", "core", ...path.split("/"))).href);

export async function loadPi(pkg) {
  return {
    ...(await piModule(pkg, "session-manager.js")),
    ...(await piModule(pkg, "compaction/compaction.js")),
    ...(await piModule(pkg, "messages.js")),
  };
}
