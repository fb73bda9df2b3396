"""Write the hostile settings corpus (tests/corpus/hostile_settings/*.toml): files kompakt must refuse
with one clear error (``reject_*``) or accept (``accept_*``). Run ``python -m tests.corpus.make_hostile_settings``."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).parent / "hostile_settings"

FILES: dict[str, bytes] = {
    "reject_deep_inline_tables_3000.toml": b"x = " + b"{a = " * 3000 + b"1" + b"}" * 3000 + b"\n",
    "reject_deep_arrays_3000.toml": b"x = " + b"[" * 3000 + b"]" * 3000 + b"\n",
    "reject_keymap_unknown_id.toml": b'[keymap]\n"app.quitt" = "ctrl+x"\n',
    "reject_keymap_unparsable_key.toml": b'[keymap]\n"app.quit" = "ctrl+"\n',
    "reject_keymap_bad_modifier.toml": b'[keymap]\n"main.compact" = "control+k"\n',
    "reject_keymap_empty_key.toml": b'[keymap]\n"app.quit" = ""\n',
    "reject_keymap_garbage_key.toml": b'[keymap]\n"app.quit" = "not a key"\n',
    "reject_keymap_two_ids_one_key.toml": b'[keymap]\n"main.compact" = "ctrl+k"\n"main.model" = "ctrl+l,Ctrl+k"\n',
    "reject_approval_unknown_tool.toml": b'[tools.approval]\nrm_rf = "auto"\n',
    "reject_theme_unknown.toml": b'[ui]\ntheme = "hotdog-stand"\n',
    "reject_bool_yes.toml": b'[compaction]\nenabled = "yes"\n',
    "reject_bool_int.toml": b"[compaction]\nautoContinue = 1\n",
    "reject_bool_on.toml": b'[branchSummary]\nskipPrompt = "on"\n',
    "reject_reserve_huge.toml": b"[compaction]\nreserveTokens = 1_000_000_000_000\n",
    "reject_keep_recent_huge.toml": b"[compaction]\nkeepRecentTokens = 99_999_999_999\n",
    "reject_retry_delay_huge.toml": b"[retry]\nmaxDelayMs = 100_000_000_000\n",
    "reject_iterations_huge.toml": b"[agent]\nmaxIterations = 10_000_000\n",
    "reject_context_window_huge.toml": b'[models."openai/x"]\ncontextWindow = 1e30\n',
    "reject_moa_timeout_huge.toml": b"[moa]\ntimeoutS = 1e300\n",
    "reject_invalid_utf8.toml": b'[ui]\ntheme = "\xff\xfe"\n',
    "reject_binary_garbage.toml": bytes(range(256)),
    "reject_unknown_key.toml": b"[compaction]\nkeepRecentTokenz = 100\n",
    "reject_negative_budget.toml": b"[compaction]\nreserveTokens = -1\n",
    "accept_bom.toml": b'\xef\xbb\xbf# saved by an editor that writes a BOM\n[ui]\ntheme = "nord"\n',
    "accept_valid_keymap.toml": b'[keymap]\n"main.compact" = "ctrl+k,f10"\n"tree.label" = "shift+question_mark"\n',
    "accept_bool_true_false.toml": b"[compaction]\nenabled = false\nautoContinue = true\n",
    "accept_empty.toml": b"",
}


def main() -> None:
    HERE.mkdir(parents=True, exist_ok=True)
    for old in HERE.glob("*.toml"):
        old.unlink()
    for name, data in FILES.items():
        (HERE / name).write_bytes(data)
    print(f"{len(FILES)} files in {HERE}")


if __name__ == "__main__":
    main()
