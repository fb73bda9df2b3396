// Oracle for tests/test_head_copy.py: opens session files with pi 0.73.1's own SessionManager and prints,
// for each, the context pi would send (after convertToLlm: role, the text of every text part, tool calls
// with their ids and arguments, image parts) and, for every compaction entry, its stored tokensBefore next
// to the figure pi's prepareCompaction computes for the path it was appended to, and pi's estimate of the
// context right after it. Needs KOMPAKT_PI_DIR.
import fs from "node:fs";
const base = process.env.KOMPAKT_PI_DIR + "/node_modules/@mariozechner/pi-coding-agent/dist/";
const { SessionManager } = await import(base + "index.js");
const { buildSessionContext } = await import(base + "core/session-manager.js");
const { estimateContextTokens } = await import(base + "core/compaction/compaction.js");
const { convertToLlm } = await import(base + "core/messages.js");

function part(block) {
  if (block.type === "text") return { type: "text", text: block.text };
  if (block.type === "toolCall") return { type: "toolCall", id: block.id, name: block.name, arguments: block.arguments };
  if (block.type === "image") return { type: "image", mimeType: block.mimeType };
  return { type: block.type };
}

const results = [];
for (const file of JSON.parse(fs.readFileSync(process.argv[2], "utf8"))) {
  const manager = SessionManager.open(file);
  const entries = manager.getEntries();
  const byId = new Map(entries.map((e) => [e.id, e]));
  const messages = convertToLlm(manager.buildSessionContext().messages).map((m) => ({
    role: m.role,
    content: typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content.map(part),
  }));
  const compactions = entries
    .filter((e) => e.type === "compaction")
    .map((e) => {
      const path = [];
      for (let p = byId.get(e.parentId); p; p = p.parentId ? byId.get(p.parentId) : undefined) path.unshift(p);
      const before = estimateContextTokens(buildSessionContext(path).messages).tokens;
      const after = estimateContextTokens(buildSessionContext([...path, e]).messages).tokens;
      return { id: e.id, stored: e.tokensBefore, pi: before, after };
    });
  results.push({ leafId: manager.getLeafId(), messages, compactions });
}
console.log(JSON.stringify(results));
