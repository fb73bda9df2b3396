"""Issue 8 (H, secrets): a key a provider echoes in an error is redacted wherever kompakt puts that text.

The loopback server answers every request with an error that quotes the configured gateway key (no key
shape: known only as the key sent) and an OpenAI-shaped key. Checked as the user meets it: the output of
``kompakt compact`` (the table and ``--json``) and its stderr as a real process, the fallback summary it
writes (later sent to the model), and the TUI's screen and notifications after a failed reply.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from asyncio.subprocess import PIPE
from pathlib import Path

import pytest

from tests.app_e2e_helpers import (
    CONTEXT_WINDOW,
    MODEL,
    isolated_home,
    make_app,
    ready,
    screen_text,
    settings_toml,
    wait_idle,
    wait_until,
)
from tests.fake_openai import FakeOpenAI, Reply, fake_openai_fixture  # noqa: F401
from tests.test_cli_compact import write_session
from tui.agent.offline import DEFAULT_MODELS
from tui.launch import Launch

ROOT = Path(__file__).resolve().parent.parent
GATEWAY_KEY = "gw-0123456789abcdef"  # no provider's shape, and kept in a variable the scrubber does not know
OPENAI_SECRET = "sk-openai-real-secret-0123456789"
SECRETS = (GATEWAY_KEY, OPENAI_SECRET)


def echoing_error() -> Reply:
    text = f"Incorrect API key provided: {GATEWAY_KEY}. Also tried {OPENAI_SECRET}."
    return Reply.error(401, {"error": {"message": text, "type": "invalid_request_error"}})


def user_settings(home: Path, api_base: str) -> None:
    config = home / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.toml").write_text(
        "[compaction]\nkeepRecentTokens = 200\n\n[retry]\nenabled = false\n"
        f'\n[models."{MODEL}"]\napiBase = {json.dumps(api_base)}\napiKeyEnv = "MY_GATEWAY"\n'
    )


async def run_compact(home: Path, *argv: str) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {var for var, _ in DEFAULT_MODELS}}
    env = {k: v for k, v in env.items() if not k.startswith("KOMPAKT_")}
    env |= {
        "PYTHONPATH": str(ROOT),
        "KOMPAKT_HOME": str(home / "kompakt"),
        "KOMPAKT_CONFIG_DIR": str(home / "config"),
        "MY_GATEWAY": GATEWAY_KEY,
        "OPENAI_API_KEY": OPENAI_SECRET,
        "COLUMNS": "200",
    }
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tui", "compact", *argv, cwd=home, env=env, stdout=PIPE, stderr=PIPE
    )
    stdout, stderr = await asyncio.wait_for(child.communicate(), 120)
    return child.returncode or 0, stdout.decode(), stderr.decode()


@pytest.mark.parametrize("as_json", [True, False], ids=["json", "table"])
async def test_compact_output_and_its_fallback_summary_hold_no_echoed_key(
    tmp_path: Path, fake_openai: FakeOpenAI, as_json: bool
) -> None:
    fake_openai.default = echoing_error()
    user_settings(tmp_path, fake_openai.api_base)
    path = write_session(tmp_path / "s.jsonl", turns=4)

    rc, out, err = await run_compact(tmp_path, str(path), "--model", MODEL, *(["--json"] if as_json else []))

    assert rc == 0, err
    assert fake_openai.hits and fake_openai.hits[0].headers["Authorization"] == f"Bearer {GATEWAY_KEY}"
    assert "summarizer failed" in err and "[redacted]" in err
    if as_json:
        report = json.loads(out)
        assert report["summarySource"] == "fallback" and "[redacted]" in report["summaryError"]
    else:
        assert "[redacted]" in out
    entry = json.loads(path.read_bytes().splitlines()[-1])
    assert entry["type"] == "compaction"
    on_disk = path.read_text()
    for secret in SECRETS:
        assert secret not in out and secret not in err and secret not in on_disk
        assert secret not in entry["summary"]


async def test_an_echoed_key_never_reaches_the_screen(tmp_path, monkeypatch, fake_openai: FakeOpenAI) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    monkeypatch.setenv("MY_GATEWAY", GATEWAY_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_SECRET)
    text = settings_toml(fake_openai).replace(
        f"contextWindow = {CONTEXT_WINDOW}", f'contextWindow = {CONTEXT_WINDOW}\napiKeyEnv = "MY_GATEWAY"'
    )
    home.settings_file.write_text(text + "\n[retry]\n" if "[retry]" not in text else text)
    fake_openai.default = echoing_error()
    app = make_app(home, Launch("new", cwd=tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(pilot, app)
        screen.prompt.text = "hello"
        await pilot.press("enter")
        await wait_idle(pilot, app, lambda: fake_openai.hits, "the failed reply")
        await wait_until(pilot, lambda: "[redacted]" in screen_text(app), "the redacted error on screen")
        shown = screen_text(app) + " ".join(message for _title, message, _severity in app.notes)
        assert fake_openai.hits[-1].headers["Authorization"] == f"Bearer {GATEWAY_KEY}"
        for secret in SECRETS:
            assert secret not in shown
