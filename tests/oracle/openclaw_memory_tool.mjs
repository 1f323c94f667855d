// OpenClaw's own memory_search and memory_get TOOLS, called as an agent run calls them.
// node openclaw_memory_tool.mjs OPENCLAW_PACKAGE_DIR < CALLS.json  ->  JSON on stdout
//
// CALLS.json: [{"tool": "memory_search" | "memory_get", "params": {...}}, ...]
// Output: {"schemas": {memory_search, memory_get}, "answers": [parsed JSON | {"thrown": msg}]}
//
// The home is the one OpenClaw's CLI uses (HOME / OPENCLAW_STATE_DIR in the environment);
// its config is read by OpenClaw's own loadConfig. The tools are made by
// createMemorySearchTool / createMemoryGetTool (extensions/memory-core/src/tools.ts,
// bundled in dist/tools-*.mjs, found by content, never by hashed name) with the options
// an agent run passes: the config, the agent id, no session key (a direct chat, so
// citations "auto" are included) and oneShotCliRun (an `openclaw agent --local` run:
// the memory manager is closed after each call instead of watching the workspace).
// Each tool's execute(toolCallId, params) returns a jsonResult whose first text block is
// the JSON the model reads; it is parsed and printed as is.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [pkg] = process.argv.slice(2);
const dist = join(pkg, "dist");
const files = readdirSync(dist).filter((f) => f.endsWith(".mjs")).map((f) => join(dist, f));
const texts = new Map();
const read = (p) => texts.get(p) ?? texts.set(p, readFileSync(p, "utf8")).get(p);

async function exported(name) {
  for (const p of files) {
    const text = read(p);
    if (!text.includes(`function ${name}(`) && !text.includes(`const ${name} =`)) continue;
    const tail = text.slice(text.lastIndexOf("export {"));
    const m = new RegExp(`\\b${name}(?: as ([\\w$]+))?\\s*[,}]`).exec(tail);
    if (m) return (await import(pathToFileURL(p).href))[m[1] ?? name];
  }
  throw new Error(`${name} is not exported by any dist file`);
}

const calls = JSON.parse(readFileSync(0, "utf8"));
const loadConfig = await exported("loadConfig");
const createMemorySearchTool = await exported("createMemorySearchTool");
const createMemoryGetTool = await exported("createMemoryGetTool");

const config = loadConfig();
const options = { config, agentId: "main", oneShotCliRun: true };
const tools = {
  memory_search: createMemorySearchTool(options),
  memory_get: createMemoryGetTool(options),
};
for (const [name, tool] of Object.entries(tools)) {
  if (!tool) throw new Error(`${name}: OpenClaw made no tool (memory disabled for main?)`);
}

const answers = [];
let n = 0;
for (const call of calls) {
  try {
    const result = await tools[call.tool].execute(`call-${++n}`, call.params);
    const text = result.content.find((block) => block.type === "text").text;
    answers.push(JSON.parse(text));
  } catch (error) {
    answers.push({ thrown: String(error?.message ?? error) });
  }
}
const schemas = Object.fromEntries(Object.entries(tools).map(([k, t]) => [k, t.parameters]));
process.stdout.write(JSON.stringify({ schemas, answers }));
process.exit(0);
