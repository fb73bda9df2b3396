// Baseline for bench/session_open.py: pi's own SessionManager.open + buildSessionContext + prepareCompaction.
// Needs `npm install @mariozechner/pi-coding-agent@0.73.1` in the directory given by KOMPAKT_PI_DIR.
const { SessionManager } = await import(process.env.KOMPAKT_PI_DIR + "/node_modules/@mariozechner/pi-coding-agent/dist/index.js");
const { prepareCompaction } = await import(process.env.KOMPAKT_PI_DIR + "/node_modules/@mariozechner/pi-coding-agent/dist/core/compaction/compaction.js");
const file = process.argv[2];
const runs = Number(process.argv[3] || 5);
const times = [];
for (let i = 0; i < runs; i++) {
  const t0 = performance.now();
  const sm = SessionManager.open(file);
  const ctx = sm.buildSessionContext();
  const prep = prepareCompaction(sm.getBranch(), { enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 });
  times.push(performance.now() - t0);
  if (i === 0) console.error(JSON.stringify({ messages: ctx.messages.length, firstKept: prep && prep.firstKeptEntryId }));
}
times.sort((a, b) => a - b);
console.log(JSON.stringify({ median_ms: times[Math.floor(times.length / 2)], min_ms: times[0] }));
