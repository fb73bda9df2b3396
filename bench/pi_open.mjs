// Oracle for tests/test_branching.py: opens session files with pi 0.73.1's own SessionManager and
// prints what pi sees in each: header, entry count, leaf, branch ids, labels with their label times,
// session name and the roles of the context it would send. Needs KOMPAKT_PI_DIR as bench/pi_tree.mjs.
import fs from "node:fs";
const base = process.env.KOMPAKT_PI_DIR + "/node_modules/@mariozechner/";
const { SessionManager } = await import(base + "pi-coding-agent/dist/index.js");
const results = [];
for (const file of JSON.parse(fs.readFileSync(process.argv[2], "utf8"))) {
  const manager = SessionManager.open(file);
  const labels = {};
  const walk = [...manager.getTree()];
  while (walk.length > 0) {
    const node = walk.pop();
    if (node.label !== undefined) labels[node.entry.id] = [node.label, node.labelTimestamp ?? null];
    walk.push(...node.children);
  }
  results.push({
    header: manager.getHeader(),
    sessionId: manager.getSessionId(),
    entries: manager.getEntries().length,
    leafId: manager.getLeafId(),
    branch: manager.getBranch().map((e) => e.id),
    labels,
    name: manager.getSessionName() ?? null,
    context: manager.buildSessionContext().messages.map((m) => m.role),
  });
}
console.log(JSON.stringify(results));
