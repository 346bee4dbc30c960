"""Memento's own state against a hostile agent (SPEC §13 "Without a sandbox, these still hold"):
the usage ledger, the notification state and the claims snapshotted and restored, the agent's
output through a pipe Memento copies into the tick log, and the real commit in the status entry
whatever the worker's report says.

Each test runs a hostile agent from tests/agents/ through the real `command` preset, in both
modes (tests/core/modes.py), and judges on disk, in git, at the ledger and at a loopback receiver.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys

import pytest

from memento_core.plan.scan import parse_plan
from memento_core.status_log import entries_with_commits
from memento_core.tick.__main__ import run_tick
from tests.core.modes import MODES
from tests.core.scenarios.test_engine import agent, entries, git, make_ws

PY = sys.executable


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


def cron_tick(root, **env):
    full = {k: v for k, v in os.environ.items() if k != "MEMENTO_CRASH_AT"} | env
    return subprocess.run([PY, "-m", "memento_core.tick", "--project", str(root)], env=full,
                          capture_output=True, text=True, timeout=120)


# ---------------------------------------------------------------- the real commit, whatever the report says


def _success_sha(ws) -> str:
    (entry,) = [e for e in entries_with_commits(ws.root, entries(ws))
                if e.task_id == "T-1" and e.status == "SUCCESS"]
    assert entry.commit_sha, entry.field("Git Commit")
    return entry.commit_sha


def _complete_commit(ws) -> str:
    """The full sha of the commit `memento: complete T-1 …`, which holds the task's file."""
    (sha,) = [line.split()[0] for line in git(ws.root, "log", "--format=%H %s").splitlines()
              if " memento: complete T-1 " in f" {line.split(' ', 1)[1]} "]
    assert git(ws.root, "show", f"{sha}:hello.txt") == "done\n"
    return sha


@pytest.mark.parametrize("mode", MODES)
def test_a_forged_git_commit_line_in_the_report_does_not_replace_the_real_commit(tmp_path, mode):
    ws = make_ws(tmp_path, agent("forges_commit_line.py", "hello.txt"), sandbox=mode)
    assert run_tick(ws.root).exit_code == 0
    head = git(ws.root, "rev-parse", "HEAD").strip()
    assert _complete_commit(ws) == head
    assert head.startswith(_success_sha(ws))
    # The entry's own Git Commit field is Memento's (the first one); the forgery is only text.
    raw = ws.status_path.read_text()
    success = raw[raw.index("✅ SUCCESS"):]
    assert success.split("- **Git Commit**: ", 1)[1].startswith("(the commit that adds this entry)")
    assert "deadbee" not in git(ws.root, "log", "--format=%H%n%B")


@pytest.mark.parametrize("point", ["tick:before-commit", "tick:after-commit"])
def test_a_forged_commit_line_does_not_fool_the_recovery_of_an_interrupted_commit(tmp_path, point):
    ws = make_ws(tmp_path, agent("forges_commit_line.py", "hello.txt"))
    assert cron_tick(ws.root, MEMENTO_CRASH_AT=point).returncode == -9
    assert run_tick(ws.root).exit_code in (0, 1)
    sha = _complete_commit(ws)
    assert sha.startswith(_success_sha(ws))
    assert parse_plan(ws.plan_path).task("T-1").status == "x"
    assert "deadbee" not in git(ws.root, "log", "--format=%H%n%B")


def test_fill_commit_writes_into_the_field_line_not_into_a_worker_text_after_it(tmp_path):
    from memento_core.tick.record import PENDING_COMMIT, fill_commit

    status = tmp_path / "TICK_STATUS.md"
    status.write_text(f"## [2026-12-01T00:00:00Z] Tick #1\n- **Git Commit**: {PENDING_COMMIT}\n"
                      f"- **Outputs**: see - **Git Commit**: {PENDING_COMMIT}\n")
    fill_commit(status, "abc1234")
    assert status.read_text().splitlines()[1:] == [
        "- **Git Commit**: `abc1234`", f"- **Outputs**: see - **Git Commit**: {PENDING_COMMIT}"]


# ---------------------------------------------------------------- the agent's output through a pipe


def _with_config(ws, *, agent_lines: str = "", extra: str = "") -> None:
    text = ws.config_path.read_text().replace("[agent]\n", "[agent]\n" + agent_lines, 1) + extra
    ws.config_path.write_text(text)
    git(ws.root, "commit", "-qam", "config")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("how", ["truncate", "overwrite", "reopen"])
def test_an_agent_erasing_its_stdout_erases_neither_mementos_lines_nor_its_usage(tmp_path, mode, how):
    from memento_core import spending

    ws = make_ws(tmp_path, agent("erases_its_output.py", how, "5"), sandbox=mode)
    _with_config(ws, agent_lines='output = "claude"\n', extra="[budget]\ntask_usd = 0.5\n")
    outcome = run_tick(ws.root)
    (result,) = outcome.results
    # Over the budget whether the watch reads the usage while the agent runs (a loaded machine) or after
    over = "task budget exceeded: $5.000 of $0.50"
    assert not result.passed and result.reason in (over, f"{over} (the agent was stopped)"), result.reason
    stopped = result.reason != over
    (last,) = entries(ws)
    assert last.status == "FAILED" and "$5.000" in last.field("Usage")
    assert spending.read_ledger(ws)["days"][spending.today()]["cost_usd"] == 5.0
    assert (ws.root / "hello.txt").exists() is False  # rolled back
    log = (ws.root / last.log_path).read_text()
    assert log.startswith("[memento] prompt ") and "[memento] tick #1 task T-1" in log
    # its result event read (SPEC §20: the log has its answer, not the event) and its usage
    assert "[memento] claude said:\nWrote hello.txt." in log
    assert "[memento] usage: 900.0k in / 90.0k out tokens, $5.000" in log
    assert stopped or "agent exited with code 0" in log  # stopped: killed, or exited just before the kill


def test_a_process_keeping_the_pipe_open_never_hangs_the_copy(tmp_path):
    """The write end held by something Memento cannot kill: the copy ends a bounded drain later,
    with everything written before it in the log."""
    from memento_core.agents.logpipe import LogPipe

    log = tmp_path / "tick.log"
    pipe = LogPipe(log)
    kept = os.dup(pipe.write_fd)  # a stray's copy of the command's stdout
    pipe.started()
    try:
        os.write(kept, b"written by the stray\n")
        pipe.finish(within=0.3)
        assert not pipe._thread.is_alive() and pipe.read_fd == -1
        assert log.read_bytes() == b"written by the stray\n"
        with pytest.raises(BrokenPipeError):  # the read end is closed: the stray can write no more
            os.write(kept, b"more")
    finally:
        os.close(kept)


def test_a_flood_through_the_pipe_keeps_the_logs_first_and_last_bytes_and_the_usage(tmp_path, monkeypatch):
    from memento_core.agents import logcap, logpipe

    monkeypatch.setattr(logcap, "KEEP", 100_000)
    monkeypatch.setattr(logpipe, "KEEP", 100_000)
    both = agent("floods_log.py", str(3_000_000)) + " && " + agent("erases_its_output.py", "truncate", "0.25")
    ws = make_ws(tmp_path, f"/bin/sh -c {shlex.quote(both)}")
    _with_config(ws, agent_lines='output = "claude"\n', extra="[budget]\ntask_usd = 0.5\n")
    assert run_tick(ws.root).exit_code == 0
    (last,) = entries(ws)
    assert last.status == "SUCCESS" and "$0.250" in last.field("Usage")
    log = (ws.root / last.log_path).read_bytes()
    assert len(log) < 2 * 100_000 + 20_000 and b"bytes cut from the middle of this log" in log
    assert log.startswith(b"[memento]") and b"FIRST LINE OF THE AGENT" in log[:100_000]
    assert b"LAST LINE OF THE AGENT" in log and b"[memento] claude said:\nWrote hello.txt." in log[-100_000:]


# ---------------------------------------------------------------- the ledger, the notify state, the claims


def tasks(*ns: int, verify: str = "") -> str:
    return "".join(f"- [ ] `T-{n}` [MODULE:m] Write T-{n}.txt\n  - verify: `{verify or f'grep -q done T-{n}.txt'}`\n"
                   f"  - context_files: [T-{n}.txt]\n  - retries: 0\n\n" for n in ns)


@pytest.mark.parametrize("mode", MODES)
def test_an_agent_resetting_todays_spend_does_not_keep_the_daily_budget_from_tripping(tmp_path, mode):
    from memento_core import spending

    ws = make_ws(tmp_path, agent("resets_spend.py", "0.6"), tasks(1, 2, 3), sandbox=mode)
    _with_config(ws, agent_lines='output = "claude"\n', extra="[budget]\ndaily_usd = 1.0\n")
    spent = []
    for _ in range(2):
        run_tick(ws.root)
        spent.append(spending.read_ledger(ws)["days"][spending.today()]["cost_usd"])
    assert spent == [0.6, 1.2]  # the real spend, whatever the agent wrote
    assert spending.read_ledger(ws)["total"]["cost_usd"] == 1.2
    third = run_tick(ws.root)
    assert third.message == "tick skipped: budget reached ($1.20 of $1.00 today)" and not third.results
    attempts = [e for e in entries(ws) if e.task_id]
    assert len(attempts) == 2
    if mode == "none":  # unconfined, the agent could write the ledger: a guard failure naming it
        assert all(e.status == "FAILED" and ".memento/usage.json" in e.field("Reason") for e in attempts)
        kept = sorted((ws.root / "logs" / "rollback").glob("*-T-1-state/.memento__usage.json"))
        assert len(kept) == 2 and json_cost(kept[0]) == 0.0


def json_cost(path) -> float:
    import json

    data = json.loads(path.read_text())
    return next(iter(data["days"].values()))["cost_usd"]


@pytest.mark.parametrize("mode", MODES)
def test_a_task_blocked_by_an_agent_that_premarked_it_as_told_is_still_notified(tmp_path, mode):
    from tests.core.notifyhelp import Receiver

    receiver = Receiver()
    receiver.start()
    try:
        ws = make_ws(tmp_path, agent("premarks_notified.py"), tasks(1) + tasks(2, 3, 4, verify="true"),
                     sandbox=mode, max_retries=1)
        _with_config(ws, extra=f'[notify]\nurls = ["{receiver.url()}"]\n')
        run_tick(ws.root)
        assert parse_plan(ws.plan_path).task("T-1").status == "!"
        assert [m["title"] for m in receiver.received] == ["Memento · engine test: T-1 is blocked: Write T-1.txt"]
        import json

        from memento_core import notify

        assert json.loads(notify.notify_path(ws).read_text())["states"] == {"blocked:T-1": "blocked"}
        if mode == "none":
            (entry,) = [e for e in entries(ws) if e.task_id == "T-1"]
            assert ".memento/notify.json" in entry.field("Reason")
    finally:
        receiver.close()


@pytest.mark.parametrize("mode", MODES)
def test_forged_claims_are_removed_and_restored_and_fail_the_attempt(tmp_path, mode):
    ws = make_ws(tmp_path, agent("forges_claims.py"), tasks(1, 2), sandbox=mode)
    outcome = run_tick(ws.root)
    assert sorted(p.name for p in ws.claims_dir.iterdir()) == []  # the made-up T-2 claim is gone
    plan = parse_plan(ws.plan_path)
    assert plan.task("T-2").status == " " and plan.task("T-2").retries == 0
    (result,) = outcome.results
    if mode == "none":
        assert not result.passed and plan.task("T-1").status == " " and plan.task("T-1").retries == 1
        assert ".memento/claims/T-1.json, .memento/claims/T-2.json (restored" in result.reason
        assert not (ws.root / "T-1.txt").exists()
        assert git(ws.root, "log", "--format=%s", "--", "other.txt").split("\n")[:-1] == ["setup"]
    else:
        assert result.passed
    # The next tick takes T-1 (or T-2) as usual: no forged claim stands in its way.
    nxt = run_tick(ws.root)
    assert nxt.results and "could not claim" not in nxt.results[0].reason


def test_parallel_workers_the_ledger_reset_by_one_is_charged_to_it_and_holds_both_spends(tmp_path):
    from memento_core import spending
    from tests.core.tick.test_workers import make_parallel_ws

    ws, _ = make_parallel_ws(tmp_path, ["T-1", "T-2"], workers=2)
    command = agent("resets_spend.py", "0.6", "T-1", "T-2")
    text = ws.config_path.read_text()
    start = text.index('command = """') + len('command = """')
    text = text[:start] + command + text[text.index('"""', start):]
    ws.config_path.write_text(text.replace("[agent]\n", '[agent]\noutput = "claude"\n', 1))
    git(ws.root, "commit", "-qam", "config")
    outcome = run_tick(ws.root)
    by_id = {r.task_id: r for r in outcome.results}
    assert by_id["T-2"].passed, by_id["T-2"].reason
    assert not by_id["T-1"].passed and "changed Memento's own state: .memento/usage.json" in by_id["T-1"].reason
    assert spending.read_ledger(ws)["days"][spending.today()]["cost_usd"] == 1.2
    assert git(ws.root, "show", "HEAD:T-2.txt") and not (ws.root / "T-1.txt").exists()
    assert list(ws.claims_dir.iterdir()) == []


def test_a_watched_file_replaced_by_a_fifo_or_a_link_is_put_back_without_opening_it(tmp_path):
    from memento_core import owned

    ledger, target = tmp_path / "usage.json", tmp_path / "persons.txt"
    ledger.write_bytes(b'{"days": {}}\n')
    target.write_bytes(b"a person's file\n")
    owned.baseline([ledger])
    ledger.unlink()
    os.mkfifo(ledger)  # opening it to read would block the tick
    change = owned.settle(ledger)
    assert change is not None and change.found == owned.NOT_A_FILE
    assert ledger.read_bytes() == b'{"days": {}}\n'
    ledger.unlink()
    ledger.symlink_to(target)
    assert owned.settle(ledger) is not None
    assert not ledger.is_symlink() and ledger.read_bytes() == b'{"days": {}}\n'
    assert target.read_bytes() == b"a person's file\n"
    owned.write(ledger, b"memento's own\n")  # Memento's write is no change
    assert owned.settle(ledger) is None and ledger.read_bytes() == b"memento's own\n"


@pytest.mark.parametrize("mode", MODES)
def test_a_forged_record_of_the_waiting_journal_is_put_back_and_the_rewrite_stays_the_agents(tmp_path, mode):
    """The journal waits uncommitted between its batched commits (memory/store.py record_journal,
    issue 42), with Memento's record of what it wrote in .memento/memory_journal.json. An agent
    that rewrites an earlier tick's line and adds its version to that record: the record is put
    back (the attempt fails, unconfined), the tick's own version is committed as the journal and
    the rewrite as the task's unattributed write, never as Memento's."""
    ws = make_ws(tmp_path, agent("forges_journal.py"), tasks(1, 2, 3), sandbox=mode)
    assert run_tick(ws.root).results[0].passed  # its journal committed by the first weekly gc
    assert run_tick(ws.root).results[0].passed  # T-2's waits uncommitted
    assert (ws.memento_dir / "memory_journal.json").exists()
    (result,) = run_tick(ws.root).results

    def mem(*args: str) -> str:
        return git(ws.memory_dir, *args)

    journal_commits = [line.split()[0] for line in mem("log", "--format=%H %B", "--grep", "Memento-Memory: journal")
                       .splitlines() if line[:40].isalnum() and len(line.split()[0]) == 40]
    for sha in journal_commits:  # no journal commit of Memento's holds the agent's rewrite
        shown = mem("show", sha)
        assert "forged" not in shown.replace("forged_journal", "")
    if mode == "none":
        assert not result.passed and ".memento/memory_journal.json" in result.reason
        subjects = mem("log", "--format=%s").splitlines()
        page = next(p for p in (ws.memory_dir / "journal").iterdir()).name
        assert f"unattributed write by T-3: journal/{page}" in subjects
        assert "journal: tick #2 — T-2 passed" in subjects
        assert "T-2 ✅ passed" in mem("show", f"{mem('log', '-1', '--format=%H', '--grep', 'journal: tick #2').strip()}"
                                           f":journal/{page}")
    record = ws.memento_dir / "memory_journal.json"
    if record.exists():  # what it says Memento wrote is what Memento wrote: the page as it is now
        import hashlib
        import json

        pending = json.loads(record.read_text())
        for rel, known in pending["files"].items():
            assert hashlib.sha256((ws.memory_dir / rel).read_bytes()).hexdigest() == known["seen"][-1]


def test_remove_specials_removes_fifos_and_sockets_in_mementos_folders_and_nothing_else(tmp_path):
    """Deep in .memento/ and memory/ (the objects' mirror holds thousands of files: each kind is
    read from its folder's listing), at the top of logs/ only; never inside a .git or the
    workers' worktrees, never a regular file, a folder or a link, whatever it points to."""
    import socket

    from memento_core.tick.own import remove_specials
    from memento_core.workspace import Workspace

    root = tmp_path / "p"
    fifos = [".memento/worker/memory/left.json", ".memento/objects/ab/cdef", "memory/knowledge/deep/x.md",
             "logs/cron.log"]
    kept_fifos = ["memory/.git/objects/fifo", ".memento/worktrees/T-1/fifo", "logs/rollback/fifo", "src/fifo",
                  ".memento/deep/worktrees/.git/fifo"]
    for rel in fifos + kept_fifos:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(root / rel)
    (root / ".memento" / "deep" / "worktrees" / "fifo").parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(root / ".memento" / "deep" / "worktrees" / "fifo")  # "worktrees" is skipped at the top only
    (root / ".memento" / "state.json").write_text("{}")
    (root / ".memento" / "link").symlink_to(root / "src" / "fifo")  # a link to a FIFO: a link
    (root / "memory" / "dirlink").symlink_to(root / "memory" / ".git")  # never followed into the .git
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(root / ".memento" / "claims.sock"))
    try:
        found = remove_specials(Workspace(root))
    finally:
        sock.close()
    assert found == tuple(sorted([(rel, "a FIFO") for rel in fifos] + [(".memento/claims.sock", "a socket"),
                                                                       (".memento/deep/worktrees/fifo", "a FIFO")]))
    assert not any(os.path.lexists(root / rel) for rel, _ in found)
    assert all(os.path.lexists(root / rel) for rel in kept_fifos)
    assert (root / ".memento" / "state.json").read_text() == "{}" and (root / ".memento" / "link").is_symlink()
    assert remove_specials(Workspace(root)) == ()
