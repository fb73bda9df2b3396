// Oracle for bench/tree_vs_pi.py: pi's own /tree component (TreeSelectorComponent) on given trees.
// Needs `npm install @mariozechner/pi-coding-agent@0.73.1` in the directory given by KOMPAKT_PI_DIR.
// Reads a JSON list of {entries, leafId, mode, selectedId, keys, height}; for each prints the selected
// id and the rendered list (ANSI stripped) after every key, then the final list.
import fs from "node:fs";
const base = process.env.KOMPAKT_PI_DIR + "/node_modules/@mariozechner/";
const { TreeSelectorComponent, initTheme } = await import(base + "pi-coding-agent/dist/index.js");
const { KeybindingsManager } = await import(base + "pi-coding-agent/dist/core/keybindings.js");
const { setKeybindings } = await import(base + "pi-tui/dist/index.js");
initTheme("dark");
setKeybindings(new KeybindingsManager({}));
const strip = (s) => s.replace(/\x1b\[[0-9;]*m/g, "");
const results = [];
for (const spec of JSON.parse(fs.readFileSync(process.argv[2], "utf8"))) {
  // The same tree pi's SessionManager.getTree() builds: resolved labels and label times, orphans as roots,
  // children in timestamp order.
  const labels = new Map();
  const labelTimes = new Map();
  for (const e of spec.entries) {
    if (e.type !== "label") continue;
    if (e.label) {
      labels.set(e.targetId, e.label);
      labelTimes.set(e.targetId, e.timestamp);
    } else {
      labels.delete(e.targetId);
      labelTimes.delete(e.targetId);
    }
  }
  const nodes = new Map(
    spec.entries.map((e) => [
      e.id,
      { entry: e, children: [], label: labels.get(e.id), labelTimestamp: labelTimes.get(e.id) },
    ]),
  );
  const roots = [];
  for (const e of spec.entries) {
    const parent = e.parentId == null || e.parentId === e.id ? undefined : nodes.get(e.parentId);
    (parent ? parent.children : roots).push(nodes.get(e.id));
  }
  for (const node of nodes.values()) {
    node.children.sort((a, b) => new Date(a.entry.timestamp) - new Date(b.entry.timestamp));
  }
  const noop = () => {};
  const selector = new TreeSelectorComponent(
    roots, spec.leafId, spec.height, noop, noop, noop, spec.selectedId ?? undefined, spec.mode,
  );
  const list = selector.getTreeList();
  const out = { steps: [] };
  for (const key of spec.keys) {
    selector.handleInput(key);
    out.steps.push({ selected: list.getSelectedNode()?.entry.id ?? null, lines: list.render(400).map(strip) });
  }
  out.lines = list.render(400).map(strip);
  results.push(out);
}
console.log(JSON.stringify(results));
