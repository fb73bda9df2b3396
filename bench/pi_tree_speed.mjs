// Baseline for bench/tree_speed.py: pi 0.73.1 opens a session file and renders its /tree selector.
// Prints JSON {openMs, treeMs, lines}: SessionManager.open, then getTree + TreeSelectorComponent + one
// render of the list (what pi does between the /tree command and its first frame). KOMPAKT_PI_DIR as in
// bench/pi_tree.mjs. The whole process (Node start-up and imports included) is timed by the caller.
const base = process.env.KOMPAKT_PI_DIR + "/node_modules/@mariozechner/";
const { SessionManager, TreeSelectorComponent, initTheme } = await import(base + "pi-coding-agent/dist/index.js");
const { KeybindingsManager } = await import(base + "pi-coding-agent/dist/core/keybindings.js");
const { setKeybindings } = await import(base + "pi-tui/dist/index.js");
initTheme("dark");
setKeybindings(new KeybindingsManager({}));
const t0 = performance.now();
const manager = SessionManager.open(process.argv[2]);
const t1 = performance.now();
const noop = () => {};
const selector = new TreeSelectorComponent(manager.getTree(), manager.getLeafId(), 50, noop, noop, noop);
const lines = selector.render(160);
const t2 = performance.now();
console.log(JSON.stringify({ openMs: t1 - t0, treeMs: t2 - t1, lines: lines.length }));
