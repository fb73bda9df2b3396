"""Shared set-up for the end-to-end tests of the real app: an isolated home, settings, sessions, polling.

:func:`isolated_home` points ``KOMPAKT_HOME``, ``KOMPAKT_CONFIG_DIR`` and ``KOMPAKT_PI_SESSIONS`` at a temporary
directory, removes every other ``KOMPAKT_`` variable and the provider keys, and makes the directory the working
directory (so no project ``.kompakt/settings.toml`` is read). :func:`make_app` builds a
:class:`RecordingApp` (the real :class:`~tui.app.KompaktApp`, recording its notifications) from the user
settings file only, never the user's real configuration. :func:`wait_until` polls a condition between
frames; its long limit only keeps a broken test from hanging the suite and is never a timing assertion.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests import factories as f
from tests.fake_openai import FakeOpenAI
from tests.pages import MainPage, rendered_text, wait_until
from tui.agent.offline import DEFAULT_MODELS
from tui.app import KompaktApp
from tui.config.loader import load_settings
from tui.launch import Launch
from tui.screens.main import MainScreen
from tui.session.catalog import new_session_path
from tui.session.store import SessionStore

MODEL = "openai/fake"
CONTEXT_WINDOW = 32000
SETTINGS_COMMENT = "# kept across saves"


@dataclass
class Home:
    """The isolated directories of one test."""

    root: Path
    config_dir: Path

    @property
    def settings_file(self) -> Path:
        return self.config_dir / "settings.toml"


def isolated_home(tmp_path: Path, monkeypatch: Any) -> Home:
    """No setting, key or session of the machine running the tests can reach the app."""
    for name in list(os.environ):
        if name.upper().startswith("KOMPAKT_"):
            monkeypatch.delenv(name)
    for name, _model in DEFAULT_MODELS:
        monkeypatch.delenv(name, raising=False)
    home = Home(tmp_path, tmp_path / "config")
    home.config_dir.mkdir()
    monkeypatch.setenv("KOMPAKT_HOME", str(tmp_path / "kompakt"))
    monkeypatch.setenv("KOMPAKT_CONFIG_DIR", str(home.config_dir))
    monkeypatch.setenv("KOMPAKT_PI_SESSIONS", str(tmp_path / "pi-sessions"))
    monkeypatch.chdir(tmp_path)
    return home


def settings_toml(
    server: FakeOpenAI | None,
    *,
    keep_recent_tokens: int = 20000,
    reserve_tokens: int = 16384,
    skip_prompt: bool = False,
) -> str:
    """A commented user settings file for ``openai/fake`` on the loopback server (no model without one)."""
    lines = [SETTINGS_COMMENT]
    if server is not None:
        lines += [f'model = "{MODEL}"', ""]
    lines += [
        "[compaction]",
        f"keepRecentTokens = {keep_recent_tokens}  # small, so short sessions compact",
        f"reserveTokens = {reserve_tokens}",
        "",
        "[branchSummary]",
        f"skipPrompt = {'true' if skip_prompt else 'false'}",
        "",
        "[retry]",
        "baseDelayMs = 1",
        "",
        "[retry.provider]",
        "maxRetryDelayMs = 5",
        "",
        "[tools.approval]",
        'bash = "auto"',
        'write = "auto"',
        'edit = "auto"',
    ]
    if server is not None:
        lines += [
            "",
            f'[models."{MODEL}"]',
            f'apiBase = "{server.api_base}"',
            f"contextWindow = {CONTEXT_WINDOW}",
        ]
    return "\n".join(lines) + "\n"


class RecordingApp(KompaktApp):
    """The real app; it also keeps every notification so tests can read them after they expire."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.notes: list[tuple[str, str, str]] = []  # (title, message, severity)

    def notify(self, message: str, *, title: str = "", severity: Any = "information", **kwargs: Any) -> None:
        self.notes.append((title, str(message), severity))
        super().notify(message, title=title, severity=severity, **kwargs)


def make_app(home: Home, launch: Launch, *, start_background: bool = False) -> RecordingApp:
    """The app on ``launch`` with the settings of ``home``'s user file alone (no project file, no env)."""
    result = load_settings(home.settings_file, None, env={})
    return RecordingApp(launch, load_result=result, start_background=start_background)


def loopback_app(tmp_path: Path, monkeypatch: Any, server: FakeOpenAI) -> RecordingApp:
    """A new session in an isolated home whose settings point ``openai/fake`` at the loopback server."""
    home = isolated_home(tmp_path, monkeypatch)
    home.settings_file.write_text(settings_toml(server))
    return make_app(home, Launch("new", cwd=tmp_path))


def offline_app_on(tmp_path: Path, monkeypatch: Any, path: Path) -> RecordingApp:
    """The app opening the session file ``path`` in an isolated home with no model set (the offline one)."""
    home = isolated_home(tmp_path, monkeypatch)
    home.settings_file.write_text(settings_toml(None))
    return make_app(home, Launch("open", path, tmp_path))


async def submit(pilot: Any, text: str) -> None:
    """Put ``text`` in the prompt and press Enter, as a user sends a message or a slash command."""
    screen = main_screen(pilot.app)
    screen.prompt.focus()
    screen.prompt.text = text
    await pilot.press("enter")


def main_screen(app: KompaktApp) -> MainScreen:
    return next(screen for screen in app.screen_stack if isinstance(screen, MainScreen))


async def ready(pilot: Any, app: KompaktApp) -> MainScreen:
    """The main screen once start-up has finished (the agent and the timeline exist after the first frame)."""
    # A question about the session's cwd may stand on it from the first frame on.
    await wait_until(
        pilot, lambda: any(isinstance(shown, MainScreen) for shown in app.screen_stack), "the screen"
    )
    screen = main_screen(app)
    await wait_until(
        pilot, lambda: screen.agent is not None and screen.timeline.timeline is not None, "the start-up"
    )
    return screen


async def wait_idle(pilot: Any, app: KompaktApp, done: Callable[[], Any], what: str) -> None:
    """Until ``done`` holds and the agent is idle with its worker finished (see :meth:`MainPage.wait_idle`)."""
    await MainPage(pilot).wait_idle(done, what)


def screen_text(app: KompaktApp) -> str:
    """Every character the screen shows, line by line."""
    return rendered_text(app)


def message(entry: dict) -> dict:
    return entry["message"]


def new_session(cwd: Path, turns: list[tuple[str, str]], *, chars: int = 0) -> tuple[SessionStore, list[str]]:
    """A kompakt session in the catalog with one user/assistant pair per turn; the ids in order.

    ``chars`` pads every message to at least that many characters (about chars/4 tokens each).
    """
    store = SessionStore.create(new_session_path(str(cwd)), cwd=str(cwd))
    ids = []
    for question, answer in turns:
        ids.append(store.append_message(message(f.user(question.ljust(chars, "q"))))["id"])
        ids.append(store.append_message(message(f.assistant(answer.ljust(chars, "a"))))["id"])
    return store, ids


def branched_session(cwd: Path) -> tuple[Path, dict[str, str]]:
    """``u1 a1 ─┬─ u2 a2`` (an older branch) and ``└─ u3 a3`` (the active one, leaf a3); closed, by name."""
    store, (u1, a1, u2, a2) = new_session(
        cwd, [("first question", "first answer"), ("old idea", "old reply")]
    )
    store.branch(a1)
    u3 = store.append_message(message(f.user("new idea")))["id"]
    a3 = store.append_message(message(f.assistant("new reply")))["id"]
    path = store.path
    store.close()
    return path, {"u1": u1, "a1": a1, "u2": u2, "a2": a2, "u3": u3, "a3": a3}


def saved_session_app(
    tmp_path: Path,
    monkeypatch: Any,
    server: FakeOpenAI,
    turns: list[tuple[str, str]],
    *,
    chars: int = 0,
    **settings: Any,
) -> tuple[RecordingApp, Home, list[str]]:
    """The app opened on a saved session of ``turns`` (see :func:`new_session`), in an isolated home whose
    settings point ``openai/fake`` at ``server`` (``settings`` go to :func:`settings_toml`); the entry ids.
    The session's path is ``app.launch.path``."""
    home = isolated_home(tmp_path, monkeypatch)
    home.settings_file.write_text(settings_toml(server, **settings))
    store, ids = new_session(tmp_path, turns, chars=chars)
    store.close()
    return make_app(home, Launch("open", store.path, tmp_path)), home, ids


def branched_session_app(
    tmp_path: Path, monkeypatch: Any, server: FakeOpenAI
) -> tuple[RecordingApp, dict[str, str]]:
    """The app opened on :func:`branched_session`, in an isolated home pointed at ``server``; its ids."""
    home = isolated_home(tmp_path, monkeypatch)
    home.settings_file.write_text(settings_toml(server))
    path, ids = branched_session(tmp_path)
    return make_app(home, Launch("open", path, tmp_path)), ids
