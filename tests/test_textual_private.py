"""The few private Textual names kompakt relies on still mean what kompakt takes them to mean.

Textual is pinned (8.2.8), but an upgrade must fail here, by name, rather than as a frame that never
shows or a reply written into a removed widget. Each name has no public equivalent:
- ``App._display``, ``App._end_batch`` and ``App._batch_count``: tui/app.py repaints a frame a batch dropped
  and tells a screen when a whole frame reached the terminal;
- ``textual._compositor.LayoutUpdate``: that whole frame;
- ``App._keymap``: widgets/session_tree_pane.py builds its key hints from the keymap in effect (Textual
  has ``set_keymap`` but no getter);
- ``DOMNode._pruning``: widgets/assistant_stream.py and tui/screens/agent_view.py stop writing into a
  reply widget Textual is removing (it is still attached until the removal ends);
- ``textual._xterm_parser.XTermParser`` and the Linux drivers' module-level name for it: tui/paste_parser.py
  subclasses the parser (its ``parse`` generator) and makes the drivers' input threads create the subclass.
"""

from __future__ import annotations

import inspect

from textual.app import App, ComposeResult
from textual.widgets import Static

from tests.pages import wait_until


def test_the_batch_and_display_hooks_exist_with_the_signatures_kompakt_overrides() -> None:
    from textual._compositor import LayoutUpdate

    assert list(inspect.signature(App._display).parameters) == ["self", "screen", "renderable"]
    assert list(inspect.signature(App._end_batch).parameters) == ["self"]
    assert inspect.isclass(LayoutUpdate)


async def test_batch_count_counts_nested_batches() -> None:
    app = App()
    async with app.run_test():
        assert app._batch_count == 0
        with app.batch_update(), app.batch_update():
            assert app._batch_count == 2
        assert app._batch_count == 0


class _Host(App[None]):
    def compose(self) -> ComposeResult:
        yield Static("reply", id="reply")


async def test_pruning_marks_a_widget_being_removed_while_it_is_still_attached() -> None:
    app = _Host()
    async with app.run_test() as pilot:
        widget = app.query_one("#reply")
        assert widget._pruning is False
        removal = widget.remove()
        assert widget._pruning is True and widget.is_attached
        await removal
        await wait_until(pilot, lambda: not widget.is_attached, "the removal")


def test_set_keymap_keeps_the_keymap_where_the_tree_pane_reads_it() -> None:
    app = App()
    app.set_keymap({"tree.label": "ctrl+k"})
    assert app._keymap == {"tree.label": "ctrl+k"}


def test_the_linux_drivers_create_their_parser_by_the_module_name_paste_parser_replaces() -> None:
    from textual._xterm_parser import XTermParser
    from textual.drivers import linux_driver, linux_inline_driver

    for driver in (linux_driver.LinuxDriver, linux_inline_driver.LinuxInlineDriver):
        assert "XTermParser(" in inspect.getsource(driver.run_input_thread)
    assert list(inspect.signature(XTermParser.parse).parameters) == ["self", "token_callback"]
