"""The session tree as a collapsible HTML outline, shaped like pi's ``/tree``.

It lists the entries that the tree view's default filter shows (tool-call-only turns and bookkeeping
hidden). A chain of single children stays one flat list; only at a branch point does each child open
a nested ``<details>``, the one on the active path expanded. Rows link to the entries the page
renders; rows of branches the page leaves out are plain text.
"""

from __future__ import annotations

from html import escape

from tui.export.common import ExportView, anchor
from tui.session.tree_view import TreeSelector, row_kind


def _row(view: ExportView, entry_id: str, active: set[str], forks: set[str]) -> str:
    entry = view.tree.by_id[entry_id]
    on_path = entry_id in active
    parts = ['<span class="line">']
    if on_path:
        parts.append('<span class="dot">•</span>')
    label = view.label(entry_id)
    if label:
        parts.append(f'<span class="badge">{escape(label)}</span>')
    classes = f"row kind-{row_kind(entry)}" + (" on-path" if on_path else "")
    text = escape(view.row_text(entry_id))
    if entry_id in view.rendered:
        parts.append(f'<a class="{classes}" href="#{anchor(entry_id)}">{text}</a>')
    else:
        parts.append(f'<span class="{classes} off" title="not in this export">{text}</span>')
    if entry_id in forks:
        parts.append('<span class="fork">branch point</span>')
    if entry_id == view.leaf_id:
        parts.append('<span class="here">← active</span>')
    parts.append("</span>")
    return "".join(parts)


def outline_html(view: ExportView) -> str:
    """The nested ``<ul>`` outline of the whole tree, with the active path marked."""
    forest = TreeSelector(view.tree, view.leaf_id).forest
    active = set(view.tree.path_ids(view.leaf_id))
    forks = {node for node, kids in forest.children.items() if len(kids) > 1}
    out = ['<ul class="tree">']
    # Iterative, because a long session is a chain thousands of entries deep.
    stack: list[tuple[str, str]] = [("html", "</ul>")]

    def push_children(kids: list[str]) -> None:
        if len(kids) == 1:
            stack.append(("row", kids[0]))
            return
        for kid in reversed(kids):
            stack.append(("html", "</ul></details></li>"))
            stack.append(("branch", kid))

    push_children(forest.roots())
    while stack:
        kind, value = stack.pop()
        if kind == "html":
            out.append(value)
            continue
        if kind == "row":
            out.append(f"<li>{_row(view, value, active, forks)}</li>")
        else:
            opened = " open" if value in active else ""
            out.append(f"<li><details{opened}><summary>{_row(view, value, active, forks)}</summary><ul>")
        push_children(forest.children.get(value, []))
    return "".join(out)
