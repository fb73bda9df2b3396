// Oracle for bench/compaction_vs_pi.py: pi 0.73.1's own prepareCompaction and buildSessionContext.
// Needs `npm install @mariozechner/pi-coding-agent@0.73.1` in the directory given by KOMPAKT_PI_DIR.
// Reads a JSON list of {file, leafId, keepRecentTokens, reserveTokens}; for each session file (pi JSONL)
// prints what prepareCompaction returns for the path to leafId (null when it returns undefined), the
// per-entry estimates of its range, and the roles, estimates and size of the context buildSessionContext builds.
import fs from "node:fs";
const dist = process.env.KOMPAKT_PI_DIR + "/node_modules/@mariozechner/pi-coding-agent/dist/core/";
const { prepareCompaction, estimateTokens, estimateContextTokens, calculateContextTokens } = await import(
  dist + "compaction/compaction.js"
);
const { buildSessionContext } = await import(dist + "session-manager.js");
const { convertToLlm, createBranchSummaryMessage, createCustomMessage } = await import(dist + "messages.js");

// compaction.js's getMessageFromEntryForCompaction is not exported: the same three cases.
function compactionInput(entry) {
  if (entry.type === "message") return entry.message;
  if (entry.type === "custom_message") {
    return createCustomMessage(entry.customType, entry.content, entry.display, entry.details, entry.timestamp);
  }
  if (entry.type === "branch_summary") return createBranchSummaryMessage(entry.summary, entry.fromId, entry.timestamp);
  return undefined;
}

// AgentSession.getContextUsage's rule: unknown (null) until a reply after the latest compaction reports usage.
function contextUsage(path, messages) {
  let compaction = -1;
  for (let i = path.length - 1; i >= 0; i--) if (path[i].type === "compaction") { compaction = i; break; }
  if (compaction >= 0) {
    let fresh = false;
    for (let i = path.length - 1; i > compaction; i--) {
      const e = path[i];
      if (e.type === "message" && e.message.role === "assistant") {
        if (e.message.stopReason !== "aborted" && e.message.stopReason !== "error") {
          fresh = calculateContextTokens(e.message.usage) > 0;
          break;
        }
      }
    }
    if (!fresh) return null;
  }
  return estimateContextTokens(messages).tokens;
}

const results = [];
for (const spec of JSON.parse(fs.readFileSync(process.argv[2], "utf8"))) {
  const entries = fs
    .readFileSync(spec.file, "utf8")
    .split("\n")
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line))
    .filter((e) => e.type !== "session");
  const byId = new Map(entries.map((e) => [e.id, e]));
  const path = [];
  for (let e = byId.get(spec.leafId); e; e = e.parentId ? byId.get(e.parentId) : undefined) path.unshift(e);
  const settings = { enabled: true, reserveTokens: spec.reserveTokens, keepRecentTokens: spec.keepRecentTokens };
  const prep = prepareCompaction(path, settings);
  let plan = null;
  if (prep) {
    let prev = -1;
    for (let i = path.length - 1; i >= 0; i--) if (path[i].type === "compaction") { prev = i; break; }
    let start = 0;
    if (prev >= 0) {
      const kept = path.findIndex((e) => e.id === path[prev].firstKeptEntryId);
      start = kept >= 0 ? kept : prev + 1;
    }
    const entryTokens = {};
    for (const e of path.slice(start)) {
      const m = e.type === "compaction" ? undefined : compactionInput(e);
      entryTokens[e.id] = m ? estimateTokens(m) : 0;
    }
    plan = {
      firstKeptEntryId: prep.firstKeptEntryId,
      isSplitTurn: prep.isSplitTurn,
      summarize: prep.messagesToSummarize.length,
      turnPrefix: prep.turnPrefixMessages.length,
      tokensBefore: prep.tokensBefore,
      previousSummary: prep.previousSummary ?? null,
      boundaryStart: start,
      entryTokens,
    };
  }
  const context = buildSessionContext(entries, spec.leafId, byId);
  results.push({
    plan,
    context: {
      roles: context.messages.map((m) => m.role),
      llmRoles: convertToLlm(context.messages).map((m) => m.role),
      tokens: context.messages.map((m) => estimateTokens(m)),
      size: contextUsage(path, context.messages),
      estimate: estimateContextTokens(context.messages).tokens,
      thinkingLevel: context.thinkingLevel,
      model: context.model,
    },
  });
}
console.log(JSON.stringify(results));
