"""The architect's gate (SPEC §13 "Either way", §16): Meta paths stay inside the project, and a
verify command it changes is told to a person until acknowledged. Hostile architects from
tests/agents/ through the real `command` preset; judged on disk, in git and at a receiver."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memento_core.cli.main import main as cli
from memento_core.plan.scan import parse_plan, parse_plan_text
from memento_core.tick.__main__ import run_tick
from memento_core.tick.architect.run import CHANGED, ROLLED_BACK, run_architect
from tests.core.cli.runs import status_json
from tests.core.scenarios import test_engine
from tests.core.tick.architect.test_run import agent, entries, git, history, make_ws

PY = sys.executable

# ---------------------------------------------------------------------------- 1. Meta paths

OUTSIDE = ("relative", "absolute", "link", "git")


def archive_value(how: str, tmp_path: Path, root: Path) -> str:
    """The hostile Meta value; ``link``: `vendor/` is a person's untracked link to the victim."""
    if how == "relative":
        return "../victim/archive/"
    if how == "absolute":
        return f"{tmp_path}/victim/archive/"
    if how == "link":
        (root / "vendor").symlink_to(tmp_path / "victim")
        return "vendor/archive/"
    return ".git/archive/"


@pytest.mark.parametrize("how", OUTSIDE)
def test_the_architect_may_not_point_the_archive_outside(tmp_path, how):
    ws = make_ws(tmp_path, "true")
    value = archive_value(how, tmp_path, ws.root)
    ws.config_path.write_text(ws.config_path.read_text().replace(
        'command = """true"""', f'command = """{agent("moves_archive_out.py", value)}"""'))
    git(ws.root, "commit", "-qam", "the hostile architect")
    plan_before, commits = ws.plan_path.read_text(), history(ws.root)
    result = run_architect(ws)
    assert result.outcome == ROLLED_BACK, result.message
    assert "status_archive_dir" in result.message
    # The plan put back (Memento's counters aside): no status_archive_dir line.
    assert "status_archive_dir" not in ws.plan_path.read_text()
    assert [t.line for t in parse_plan(ws.plan_path).tasks] == [t.line for t in parse_plan_text(plan_before).tasks]
    assert parse_plan(ws.plan_path).meta.status_archive_dir == "logs/status_archive/"
    assert history(ws.root)[1:] == commits and "rolled back" in history(ws.root)[0]
    assert not (tmp_path / "victim").exists() and not (ws.root / ".git" / "archive").exists()


@pytest.mark.parametrize("how", OUTSIDE)
def test_a_tick_never_rotates_the_history_outside_whoever_wrote_the_meta(tmp_path, how, git_identity, capsys):
    tasks = "".join(f"- [ ] `T-{n}` Write {n}\n  - verify: `grep -q done T-{n}.txt`\n  - context_files: [T-{n}.txt]\n"
                    for n in range(1, 5))
    ws = test_engine.make_ws(tmp_path, test_engine.agent("does_task.py", "{task_id}.txt", "done"), tasks)
    value = archive_value(how, tmp_path, ws.root)
    text = ws.plan_path.read_text().replace("## Meta\n", f"## Meta\n- status_max_entries: 2\n"
                                                         f"- status_archive_dir: {value}\n")
    ws.plan_path.write_text(text)
    line = text.splitlines().index(f"- status_archive_dir: {value}") + 1
    git(ws.root, "commit", "-qam", "a person's Meta")
    # lint names the line; the tick runs on and rotates into the default archive.
    assert cli(["lint", str(ws.root)]) == 2
    said = capsys.readouterr()
    out = said.out + said.err
    assert f"docs/MASTER_PLAN.md:{line}: Meta `status_archive_dir`" in out
    for _ in range(4):
        outcome = run_tick(ws.root)
        assert outcome.results and outcome.results[0].passed, outcome.message
    archived = sorted((ws.root / "logs" / "status_archive").glob("TICK_STATUS_*.md"))
    assert archived, "the status log was not rotated"
    assert not (tmp_path / "victim").exists() and not (ws.root / ".git" / "archive").exists()
    if how == "link":  # only the link's case reaches the tick: the others never leave the parser
        assert f"docs/MASTER_PLAN.md:{line}: Meta `status_archive_dir`" in (ws.root / "logs" / "cron.log").read_text()


# ---------------------------------------------------------------------------- 2. verify changes


@pytest.fixture
def receiver():
    from tests.core.notifyhelp import Receiver

    r = Receiver()
    r.start()
    yield r
    r.close()


def report_needs(ws) -> list[dict]:
    proc = subprocess.run([PY, "-m", "memento_core.cli", "report", "--json", str(ws.root)], capture_output=True,
                          text=True)
    return json.loads(proc.stdout)["needs_you"]


def test_a_weakened_verify_is_in_the_commit_the_notification_and_needs_you_until_acked(tmp_path, receiver):
    ws = make_ws(tmp_path, agent("weakens_verify.py", "T-1"),
                 extra=f'[notify]\nurls = ["{receiver.url()}"]\nevents = ["architect"]\n')
    result = run_architect(ws)
    assert result.outcome == CHANGED, result.message
    assert parse_plan(ws.plan_path).task("T-1").verify == "true"
    # The commit names the task, the old and the new command.
    body = git(ws.root, "log", "-1", "--format=%B")
    assert body.startswith("memento: architect — edited T-1; reset T-1")
    assert "- T-1: `grep -q DONE hello.txt` → `true`" in body and "memento architect --ack" in body
    assert "T-1: `grep -q DONE hello.txt` → `true`" in entries(ws)[-1].field("Verify Changed")
    # The receiver was told at once, naming it; a tick sends it no second time.
    told = [m for m in receiver.received if "T-1's verify" in m["title"]]
    assert len(told) == 1 and "`grep -q DONE hello.txt` → `true`" in told[0]["message"]
    run_tick(ws.root)
    assert len([m for m in receiver.received if "T-1's verify" in m["title"]]) == 1
    # memento status (its --json and its exit code) and the report's needs-you list it.
    doc = status_json(ws)
    assert [(c["task"], c["old"], c["new"]) for c in doc["verify_changes"]] == \
        [("T-1", "grep -q DONE hello.txt", "true")]
    assert any(n["kind"] == "verify" and n["task"] == "T-1" and "`true`" in n["text"] for n in report_needs(ws))
    proc = subprocess.run([PY, "-m", "memento_core.cli", "status", str(ws.root)], capture_output=True, text=True)
    assert proc.returncode == 1
    assert ("[warn] the architect changed T-1's verify: `grep -q DONE hello.txt` → `true` — T-1 does not run until you check it, then "
            "`memento architect --ack T-1`") in proc.stdout
    # Acknowledged by the person: gone everywhere, and a tick sends nothing about it again.
    proc = subprocess.run([PY, "-m", "memento_core.cli", "architect", "--ack", "T-1", str(ws.root)],
                          capture_output=True, text=True)
    assert proc.returncode == 0 and "acknowledged T-1" in proc.stdout, proc.stderr
    assert status_json(ws)["verify_changes"] == []
    proc = subprocess.run([PY, "-m", "memento_core.cli", "status", str(ws.root)], capture_output=True, text=True)
    assert "the architect changed T-1's verify" not in proc.stdout
    assert not any(n["kind"] == "verify" for n in report_needs(ws))
    assert json.loads((ws.root / ".memento" / "verify_changes.json").read_text()) == {"changes": []}
    run_tick(ws.root)
    assert len([m for m in receiver.received if "T-1's verify" in m["title"]]) == 1


def test_a_task_the_architect_adds_is_listed_with_its_verify(tmp_path):
    ws = make_ws(tmp_path, agent("architect.py", "split", "T-1"))
    assert run_architect(ws).outcome == CHANGED
    assert [(c["task"], c["old"], c["new"]) for c in status_json(ws)["verify_changes"]] == \
        [("T-901", "", "true"), ("T-902", "", "true")]


@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
def test_the_worker_cannot_acknowledge_in_the_persons_place(tmp_path, sandbox):
    """Confined, .memento/ is read-only: the list stays, byte for byte. Unconfined, its
    `memento architect --ack` is refused (no receipt from inside the tick's tree) and the file it
    emptied is put back (Memento's own state, tick/own.py): the list stays just the same."""
    if sandbox == "bwrap" and not bwrap_works():
        pytest.skip("bubblewrap cannot run here")
    ws = make_ws(tmp_path, agent("weakens_verify.py", "T-1"), sandbox=sandbox)
    assert run_architect(ws).outcome == CHANGED
    listed = (ws.root / ".memento" / "verify_changes.json").read_bytes()
    another_task(ws)  # T-1 waits for the person's ack: the hostile worker runs T-5
    ws.config_path.write_text(ws.config_path.read_text().replace(
        agent("does_task.py", "hello.txt", "done"), agent("acks_for_the_person.py", "hello.txt")))
    git(ws.root, "commit", "-qam", "the hostile worker")
    outcome = run_tick(ws.root)
    assert outcome.results and outcome.results[0].task_id == "T-5", outcome.message
    said = max((ws.root / "logs").glob("tick_*.log"), key=lambda p: p.stat().st_mtime).read_text()
    assert "memento architect --ack: exit" in said  # it tried both ways
    assert (ws.root / ".memento" / "verify_changes.json").read_bytes() == listed
    assert [c["task"] for c in status_json(ws)["verify_changes"]] == ["T-1"]
    assert (parse_plan(ws.plan_path).task("T-1").status, run_tick(ws.root).results) == (" ", [])  # still waits


def another_task(ws) -> None:
    """A person adds T-5 to T-1's phase (committed), writing hello.txt like T-1."""
    five = ("- [ ] `T-5` Write hello again\n  - verify: `grep -q done hello.txt`\n  - context_files: [hello.txt]\n"
            "  - retries: 0\n\n")
    ws.plan_path.write_text(ws.plan_path.read_text().replace("- [x] `T-2`", five + "- [x] `T-2`"))
    git(ws.root, "commit", "-qam", "a person's T-5")


def test_a_persons_ack_during_an_unconfined_run_is_kept_and_the_task_passes(tmp_path):
    """The person's `memento architect --ack`, from outside the tick while its agent runs, carries
    a receipt: the shortened list is theirs, kept, and fails no one."""
    from tests.core.scenarios.test_during_the_run import tick_while_the_agent_waits

    ws = make_ws(tmp_path, agent("weakens_verify.py", "T-1"), sandbox="none")
    assert run_architect(ws).outcome == CHANGED
    another_task(ws)  # T-1 waits for the ack: T-5 runs meanwhile
    ws.config_path.write_text(ws.config_path.read_text().replace(
        agent("does_task.py", "hello.txt", "done"),
        agent("waits_for_a_person.py", ".memento/verify_changes.json", '"changes": []')))
    git(ws.root, "commit", "-qam", "a worker that waits for the person")

    def person() -> None:
        done = subprocess.run([sys.executable, "-m", "memento_core.cli", "architect", "--ack", str(ws.root)],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr

    tick_while_the_agent_waits(ws, person)
    assert status_json(ws)["verify_changes"] == []
    assert json.loads((ws.root / ".memento" / "verify_changes.json").read_text()) == {"changes": []}
    last = entries(ws)[-1]
    assert last.status == "SUCCESS" and last.task_id == "T-5", last.field("Reason")


def bwrap_works() -> bool:
    from memento_core import sandbox
    from memento_core.config.model import Config

    return sandbox.resolve(Config()).confined


def test_a_fifo_in_place_of_the_list_blocks_nothing(tmp_path):
    """An unconfined agent's FIFO at .memento/verify_changes.json: status never waits on it, and
    the architect's next record replaces it with the list (SPEC §13: Memento never blocks on it)."""
    ws = make_ws(tmp_path, agent("weakens_verify.py", "T-1"))
    listed = ws.root / ".memento" / "verify_changes.json"
    os.mkfifo(listed)
    proc = subprocess.run([PY, "-m", "memento_core.cli", "status", "--json", str(ws.root)], capture_output=True,
                          text=True, timeout=120)
    assert json.loads(proc.stdout)["verify_changes"] == []
    assert run_architect(ws).outcome == CHANGED
    assert listed.is_file() and [c["task"] for c in status_json(ws)["verify_changes"]] == ["T-1"]
