"""Durability under kill -9 and a fuzzed parser: nothing fsynced is lost, nothing raises but the documented error."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tui.session.errors import SessionError
from tui.session.store import SessionStore

WRITER = r"""
import sys
from tui.session.store import SessionStore
path, big = sys.argv[1], int(sys.argv[2])
store = SessionStore.open(path)
payload = "x" * big
i = 0
while True:
    entry = store.append_message({"role": "user", "content": payload + str(i), "timestamp": i})
    # Only now is the entry fsynced: report it.
    sys.stdout.write(entry["id"] + "\n")
    sys.stdout.flush()
    i += 1
"""


def test_kill_9_mid_append_loses_nothing_fsynced(tmp_path: Path) -> None:
    path = tmp_path / "crash.jsonl"
    SessionStore.create(path).close()
    confirmed: list[str] = []
    rng = random.Random(7)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    for round_no in range(12):
        big = rng.choice([10, 5_000, 400_000])
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), str(big)], stdout=subprocess.PIPE, env=env, text=True
        )
        assert proc.stdout is not None
        first = proc.stdout.readline().strip()  # wait until it is really appending
        assert first, f"writer produced nothing in round {round_no}"
        confirmed.append(first)
        time.sleep(rng.uniform(0.0, 0.05))
        proc.send_signal(signal.SIGKILL)
        rest, _ = proc.communicate()
        confirmed.extend(line for line in rest.splitlines() if line)
        with SessionStore.open(path) as store:
            ids = {e["id"] for e in store.entries}
            missing = [i for i in confirmed if i not in ids]
            assert not missing, f"round {round_no}: lost fsynced entries {missing[:3]}"
            assert store.problems == []
    # Every line left in the file is whole JSON.
    for line in path.read_bytes().splitlines():
        orjson.loads(line)


lines_strategy = st.lists(
    st.one_of(
        st.binary(max_size=60),
        st.text(max_size=60).map(str.encode),
        st.sampled_from(
            [
                b"{}",
                b"[]",
                b"null",
                b'{"type":"message"}',
                b'{"type":"session"}',
                b'{"type":"message","id":"a","parentId":"a","timestamp":"x","message":{}}',
                b'{"type":"label","id":"b","parentId":null,"targetId":"zz"}',
                b"\xff\xfe",
                b'{"id":1}',
                b'{"type":"message","id":"c1","parentId":"c2","timestamp":"t","message":{"role":"user"}}',
                b'{"type":"message","id":"c2","parentId":"c1","timestamp":"t","message":{"role":"user"}}',
            ]
        ),
    ),
    max_size=12,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(header=st.booleans(), body=lines_strategy, newline=st.booleans())
def test_fuzzed_files_load_or_raise_the_documented_error(
    tmp_path: Path, header: bool, body: list[bytes], newline: bool
) -> None:
    path = tmp_path / "fuzz.jsonl"
    head = [b'{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}'] if header else []
    path.write_bytes(b"\n".join(head + body) + (b"\n" if newline else b""))
    try:
        with SessionStore.open(path, read_only=True) as store:
            store.build_context()
            store.get_branch()
            # Every entry of the tree sits in it exactly once, even with repeated ids and parent cycles.
            tree = store.tree
            reached = [i for root in tree.roots for i in (root, *tree.descendants(root))]
            assert sorted(reached) == sorted(set(reached)) and len(reached) == len(tree)
    except SessionError:
        pass
