"""The inline stylesheet and script of the HTML export (no external assets: the page must work offline).

The colours follow the reader's light or dark preference. The script is small and optional: it only
expands or collapses every section and opens the collapsed sections around a linked entry; without it
the page still reads and every link still works.
"""

from __future__ import annotations

import base64
import hashlib

STYLE = """
:root {
  --bg: #fbfbfa; --fg: #1d1f21; --muted: #6a6f76; --line: #dcdfe3; --panel: #ffffff; --code: #f3f4f6;
  --user: #0b6bcb; --assistant: #a05a00; --tool: #5b6470; --error: #c62828; --summary: #8e24aa;
  --compaction: #6a1b9a; --active: #2e7d32; --label: #8d6e00; --label-bg: #fff3c4; --target: #fff8d6;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #15171a; --fg: #e4e6e9; --muted: #9aa1aa; --line: #30343a; --panel: #1c1f23; --code: #23272d;
    --user: #64b5f6; --assistant: #ffb74d; --tool: #a7b0bb; --error: #ef5350; --summary: #ce93d8;
    --compaction: #ba68c8; --active: #81c784; --label: #ffe082; --label-bg: #4a3f12; --target: #2c2a1a;
  }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
code, pre, .mono { font-family: ui-monospace, "SF Mono", Menlo, Consolas, monospace; font-size: 13px; }
a { color: inherit; }
body > header { padding: 18px 24px 12px; border-bottom: 1px solid var(--line); background: var(--panel); }
h1 { margin: 0 0 8px; font-size: 22px; }
h2 { font-size: 17px; margin: 28px 0 10px; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 0; font-size: 13px; }
dl.meta dt { color: var(--muted); }
dl.meta dd { margin: 0; overflow-wrap: anywhere; }
.tools { margin-top: 10px; }
.tools button { font: inherit; font-size: 12px; padding: 2px 10px; border: 1px solid var(--line);
  border-radius: 4px; background: var(--code); color: var(--fg); cursor: pointer; }
.layout { display: grid; grid-template-columns: minmax(260px, 420px) 1fr; align-items: start; }
nav.outline { position: sticky; top: 0; max-height: 100vh; overflow: auto; padding: 12px 10px 24px 16px;
  border-right: 1px solid var(--line); font-size: 12.5px; }
nav.outline h2 { margin-top: 4px; }
nav ul { list-style: none; margin: 0; padding: 0; }
nav ul ul { margin-left: 9px; padding-left: 9px; border-left: 1px solid var(--line); }
nav li { white-space: nowrap; }
nav details > summary { cursor: pointer; }
nav .line { display: inline-flex; gap: 5px; align-items: baseline; max-width: calc(100% - 16px);
  vertical-align: top; }
nav li > .line { max-width: 100%; }
nav .row { text-decoration: none; overflow: hidden; text-overflow: ellipsis; min-width: 0; }
nav .line > :not(.row) { flex: none; }
nav a.row:hover { text-decoration: underline; }
nav .row.off { opacity: .55; }
nav .row:not(.on-path) { opacity: .75; }
nav .dot { color: var(--active); font-weight: 700; }
nav .fork { color: var(--muted); font-size: 11px; }
nav .here { color: var(--active); font-weight: 700; }
.kind-user { color: var(--user); }
.kind-assistant { color: var(--assistant); }
.kind-tool, .kind-meta { color: var(--tool); }
.kind-summary { color: var(--summary); }
.kind-compaction { color: var(--compaction); font-weight: 600; }
.badge { display: inline-block; padding: 0 6px; border-radius: 8px; font-size: 11px; font-weight: 600;
  background: var(--label-bg); color: var(--label); vertical-align: 1px; }
.badge.mark { background: var(--code); color: var(--muted); }
main { padding: 8px 28px 60px; min-width: 0; }
.entry { margin: 12px 0; padding: 10px 14px; border: 1px solid var(--line); border-left-width: 4px;
  border-radius: 6px; background: var(--panel); }
.entry:target { background: var(--target); }
.entry > header { display: flex; flex-wrap: wrap; gap: 4px 10px; align-items: baseline; margin-bottom: 4px; }
.entry .role { font-weight: 700; }
.entry .when { color: var(--muted); font-size: 12px; margin-left: auto; }
.entry.user { border-left-color: var(--user); } .entry.user .role { color: var(--user); }
.entry.assistant { border-left-color: var(--assistant); } .entry.assistant .role { color: var(--assistant); }
.entry.tool { border-left-color: var(--tool); } .entry.tool .role { color: var(--tool); }
.entry.error { border-left-color: var(--error); } .entry.error .role { color: var(--error); }
.entry.summary { border-left-color: var(--summary); } .entry.summary .role { color: var(--summary); }
.entry.compaction { border: 2px dashed var(--compaction); border-left-width: 6px; }
.entry.compaction .role { color: var(--compaction); }
.entry.compacted { opacity: .72; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; }
pre { margin: 6px 0; padding: 8px 10px; background: var(--code); border-radius: 4px; overflow: auto;
  max-height: 480px; white-space: pre-wrap; overflow-wrap: anywhere; }
details.part { margin: 6px 0; }
details.part > summary { cursor: pointer; color: var(--muted); }
details.part > summary code { color: var(--fg); }
.note { color: var(--muted); font-size: 12px; font-style: italic; }
.meta-line { color: var(--muted); font-size: 12px; margin: 6px 2px; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0 12px; font-size: 13px; margin: 4px 0 8px; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; overflow-wrap: anywhere; }
img.attached { max-width: 100%; max-height: 420px; border: 1px solid var(--line); border-radius: 4px; }
section.branch { margin-top: 36px; padding-top: 4px; border-top: 3px double var(--line); }
@media (max-width: 860px) {
  .layout { display: block; }
  nav.outline { position: static; max-height: 50vh; border-right: 0; border-bottom: 1px solid var(--line); }
}
@media print { nav.outline, .tools { display: none; } .layout { display: block; } }
"""

SCRIPT = """
(function () {
  function setAll(scope, open) {
    document.querySelectorAll(scope + ' details').forEach(function (d) { d.open = open; });
  }
  document.querySelectorAll('[data-details]').forEach(function (button) {
    button.hidden = false;
    button.addEventListener('click', function () {
      setAll(button.dataset.details, button.dataset.open === 'true');
    });
  });
  function reveal() {
    var target = document.getElementById(decodeURIComponent(location.hash.slice(1)));
    for (var node = target; node; node = node.parentElement) {
      if (node.tagName === 'DETAILS') node.open = true;
    }
  }
  window.addEventListener('hashchange', reveal);
  reveal();
})();
"""


def script_hash() -> str:
    """The CSP source that allows exactly :data:`SCRIPT` and no other inline script."""
    digest = hashlib.sha256(SCRIPT.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"
