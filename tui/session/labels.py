"""One-line labels for tool calls from stored or streamed arguments: ``[read: src/app.py:10-29]``.

The label itself is pi's tree text (:func:`tui.session.display.tool_call_label`); this module accepts
the arguments as a provider may hand them over, a dict or its JSON text, for the tool registry, the
approval dialog and the exports.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from tui.session.display import ARGS_CAP, flat
from tui.session.display import tool_call_label as _label


def tool_call_label(name: str, args: Mapping[str, Any] | str | None) -> str:
    """The tree text of a call of tool ``name``; ``args`` may be a dict or its JSON text."""
    if isinstance(args, str):
        try:
            decoded = json.loads(args)
        except json.JSONDecodeError:
            decoded = None
        if not isinstance(decoded, Mapping):
            return f"[{name}: {flat(args, ARGS_CAP)}{'...' if len(args) > ARGS_CAP else ''}]"
        args = decoded
    return _label(name, args)
