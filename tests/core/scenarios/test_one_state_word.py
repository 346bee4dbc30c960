"""One state word, from one function, wherever a person reads it (issue 38, item 2).

On one project `memento status` said IDLE, `memento report` RUNNING, and `status
--json` had `"state": "RUNNING"` beside `"pipeline": {"state": "IDLE"}`. Now the
human status line, `status --json` (``state`` and ``pipeline.state``), `memento
report` (human and --json), `memento tasks` (human and --json), `.memento_alert`
and a notification all say state_word.pipeline_word's word. Each situation is
made the way a person makes it (real CLI, real ticks, real git); the dashboard's
header says the same (tests/tui/scenarios/test_truth.py).
"""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.core.notifyhelp import Receiver
from tests.first_project import first_plan, memento, tick, write_plan


@pytest.fixture
def greeter(tmp_path, git_identity):
    root = tmp_path / "greeter"
    root.mkdir()
    assert memento(root, "init").returncode == 0
    write_plan(root)
    assert memento(root, "resume").returncode == 0
    subprocess.run(["git", "commit", "-qam", "resume"], cwd=root, check=True)
    env = {"MEMENTO_CRONTAB_FILE": str(tmp_path / "crontab"), "MEMENTO_PROC_DIR": str(tmp_path / "proc")}
    (tmp_path / "proc").mkdir()
    return root, env


def words(root, env) -> dict[str, str]:
    """The state word each surface shows, read from what it prints or writes."""
    import os

    env = {**os.environ, **env}
    status = memento(root, "status", env=env).stdout.splitlines()[0]
    doc = json.loads(memento(root, "status", "--json", env=env).stdout)
    report = memento(root, "report", env=env).stdout.splitlines()[0]
    tasks = memento(root, "tasks", env=env).stdout.splitlines()[0]
    out = {
        "status": status.split(": ", 1)[1].split()[0],
        "status --json": doc["state"],
        "status --json pipeline": doc["pipeline"]["state"],
        "report": report.rsplit("(", 1)[1].rstrip(")"),
        "report --json": json.loads(memento(root, "report", "--json", env=env).stdout)["state"],
        "tasks": tasks.split(": ", 1)[1].split(";")[0].split(" — ")[0],
        "tasks --json": json.loads(memento(root, "tasks", "--json", env=env).stdout)["state"],
    }
    alert = root / ".memento_alert"
    if alert.exists():
        line = next(ln for ln in alert.read_text().splitlines() if ln.startswith("state: "))
        out["alert"] = line.removeprefix("state: ").split(" — ")[0]
    return out


def test_every_surface_says_the_same_word(greeter):
    root, env = greeter
    import os

    run_env = {**os.environ, **env}
    # Runnable, nothing will tick: IDLE everywhere (report used to say RUNNING).
    assert set(words(root, env).values()) == {"IDLE"}
    # A person's uncommitted edit refused by a tick: REFUSED everywhere, the alert too.
    (root / "greeting.txt").write_text("mine\n")
    subprocess.run(["git", "add", "greeting.txt"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "mine"], cwd=root, check=True)
    (root / "greeting.txt").write_text("mine, edited\n")
    assert tick(root, run_env).returncode == 1
    seen = words(root, env)
    assert set(seen.values()) == {"REFUSED"} and "alert" in seen, seen
    subprocess.run(["git", "checkout", "greeting.txt"], cwd=root, check=True)
    # A broken memento.toml: INVALID everywhere.
    good = (root / "memento.toml").read_text()
    (root / "memento.toml").write_text("[agent\n")
    assert tick(root, run_env).returncode == 2
    seen = words(root, env)
    assert set(seen.values()) == {"INVALID"} and "alert" in seen, seen
    (root / "memento.toml").write_text(good)
    # Paused by a person: PAUSED.
    memento(root, "pause", env=run_env)
    assert set(words(root, env).values()) == {"PAUSED"}


def test_a_notification_says_the_word_status_says(greeter):
    root, env = greeter
    import os

    run_env = {**os.environ, **env}
    receiver = Receiver()
    receiver.start()
    try:
        plan = first_plan().replace("tick_mode: paused", "tick_mode: auto").replace("max_retries: 3", "max_retries: 1")
        write_plan(root, plan.replace("grep -qx hello greeting.txt", "grep -qx bye greeting.txt"))
        text = (root / "memento.toml").read_text().replace("urls = []", f'urls = ["{receiver.url()}"]', 1)
        (root / "memento.toml").write_text(text)
        subprocess.run(["git", "commit", "-qam", "notify"], cwd=root, check=True)
        assert tick(root, run_env).returncode == 1  # T-101 blocks (max_retries 1)
        said = words(root, env)
        assert len(set(said.values())) == 1, said
        (word,) = set(said.values())
        bodies = [m["message"] for m in receiver.received]
        assert bodies and all(b.startswith(f"Pipeline: {word}\n") for b in bodies), bodies
    finally:
        receiver.close()
