"""A person's action carries a receipt the agent cannot make (SPEC §13, without a sandbox).

The hostile agent (tests/agents/forges_persons_actions.py, through the real `command`
preset, unconfined) changes other tasks, runs `memento skip`/`note`/…, writes the old
receipt file, talks to the tick's socket itself and from a setsid daemon: every such change
is a guard failure, undone, and the CLI refuses. A person acting from outside the tick's
process tree during the run is kept and the task passes. Judged on disk, in git and in the
status log.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

import pytest

from memento_core.notes import parse_notes
from memento_core.plan.scan import parse_plan
from memento_core.tick.__main__ import run_tick

from .test_during_the_run import tick_while_the_agent_waits
from .test_engine import agent, entries, git, make_ws

PY = sys.executable
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
TASKS = "\n".join(
    f"- [ ] `T-{n}` [MODULE:m{n}] {title}\n  - verify: `{verify}`\n  - context_files: [{files}]\n  - retries: 0\n"
    for n, title, verify, files in ((1, "Write hello", "grep -q done hello.txt", "hello.txt"),
                                    (2, "Second", "true", "two.txt"), (3, "Third", "true", "three.txt"),
                                    (4, "Fourth", "true", "four.txt")))  # one blocked of four: no breaker
REFUSED = "inside the running tick's own process tree"


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


def _ws(tmp_path, command: str, *, t2: str = " ", retries2: int = 0):
    tasks = TASKS.replace("- [ ] `T-2`", f"- [{t2}] `T-2`")
    if retries2:
        tasks = tasks.replace("context_files: [two.txt]\n  - retries: 0", f"context_files: [two.txt]\n  - retries: {retries2}")
    return make_ws(tmp_path, command, tasks=tasks)


def _forging(tmp_path, mode: str, *args: str, **kw):
    evidence = tmp_path / "evidence.jsonl"
    return _ws(tmp_path, agent("forges_persons_actions.py", mode, str(evidence), *args), **kw), evidence


def _evidence(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _failed_and_undone(ws, reason: str, t2: str, retries2: int = 0) -> None:
    """The task failed with ``reason``, its change rolled back, T-2 as it was, the retry counted."""
    (entry,) = entries(ws)
    assert entry.status == "FAILED" and reason in entry.field("Reason"), entry.field("Reason")
    plan = parse_plan(ws.plan_path)
    assert (plan.task("T-1").status, plan.task("T-1").retries) == (" ", 1)
    assert (plan.task("T-2").status, plan.task("T-2").retries, plan.task("T-2").reason) == (t2, retries2, None)
    assert plan.meta.tick_mode == "auto"
    assert not (ws.root / "hello.txt").exists()
    assert git(ws.root, "show", "HEAD:docs/MASTER_PLAN.md") == ws.plan_path.read_text()
    assert git(ws.root, "status", "--porcelain", "--", "docs/") == ""
    saved = list(ws.rollback_dir.rglob("MASTER_PLAN.md")) + list(ws.rollback_dir.rglob("HUMAN_NOTES.md"))
    assert saved, "the agent's version is saved in logs/rollback/"


@pytest.mark.parametrize(("status", "before"), [(" ", "!"), ("-", " "), ("!", " "), ("~", " ")])
def test_the_agent_marking_another_task_is_a_guard_failure_and_undone(tmp_path, status, before):
    retries = 3 if before == "!" else 0
    ws, _ = _forging(tmp_path, "mark", "blank" if status == " " else status, t2=before, retries2=retries)
    run_tick(ws.root)
    _failed_and_undone(ws, f"marked T-2 [{status}]", before, retries)


def test_the_agent_hiding_another_task_behind_its_retries_is_a_guard_failure(tmp_path):
    ws, _ = _forging(tmp_path, "retries")
    run_tick(ws.root)
    _failed_and_undone(ws, "changed retries of T-2", " ")


@pytest.mark.parametrize(("mode", "reason", "t2", "retries"), [
    ("cli-skip", "marked T-2 [-]", " ", 0),
    ("cli-reset", "marked T-2 [ ]", "!", 3),
    ("cli-pause", "changed Meta tick_mode", " ", 0),
    ("cli-note", "wrote 1 note(s) by hand", " ", 0),
])
def test_the_agents_memento_commands_are_refused_and_its_own_edit_fails_the_task(tmp_path, mode, reason, t2, retries):
    ws, evidence = _forging(tmp_path, mode, t2=t2, retries2=retries)
    run_tick(ws.root)
    (said,) = _evidence(evidence)
    assert said["code"] == 2 and REFUSED in said["stderr"] and "Traceback" not in said["stderr"], said
    _failed_and_undone(ws, reason, t2, retries)
    # The forged note (written by hand, its key in the receipt file the tick used to trust) is gone.
    assert all("the person agrees" not in n.text for n in parse_notes(ws.notes_path))


@pytest.mark.parametrize("mode", ["socket", "daemon"])
def test_the_agent_talking_to_the_receipt_socket_itself_is_refused(tmp_path, mode):
    ws, evidence = _forging(tmp_path, mode)
    run_tick(ws.root)
    (said,) = _evidence(evidence)
    assert said["answer"]["ok"] is False and REFUSED in said["answer"]["why"], said
    if mode == "daemon":
        # Re-parented to its run's guard (the run's subreaper), the tick's child: still the tick's tree.
        assert said["pppid"] == os.getpid()
    _failed_and_undone(ws, "marked T-2 [-]", " ")


# ---------------------------------------------------------------- a person, outside the tick, during the run


def _memento(ws, *args: str) -> None:
    env = {**os.environ, "PYTHONPATH": REPO}
    done = subprocess.run([PY, "-m", "memento_core.cli", *args, str(ws.root)], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr


PERSON = {
    "skip": (("skip", "T-2", "--reason", "not now"), "docs/MASTER_PLAN.md", "reason: not now"),
    "reset": (("reset", "T-2"), "docs/MASTER_PLAN.md", "- [ ] `T-2`"),
    "note": (("note", "use the pool, not a connection"), "docs/HUMAN_NOTES.md", "use the pool, not a connection"),
    "pause": (("pause",), "docs/MASTER_PLAN.md", "tick_mode: paused"),
}


@pytest.mark.parametrize("action", sorted(PERSON))
def test_a_persons_command_during_the_run_is_kept_and_the_task_passes(tmp_path, action):
    argv, target, text = PERSON[action]
    blocked = action == "reset"
    ws = _ws(tmp_path, agent("waits_for_a_person.py", target, shlex.quote(text)), t2="!" if blocked else " ",
             retries2=3 if blocked else 0)
    tick_while_the_agent_waits(ws, lambda: _memento(ws, *argv))
    (entry,) = entries(ws)
    assert entry.status == "SUCCESS", entry.field("Reason")
    plan = parse_plan(ws.plan_path)
    assert plan.task("T-1").status == "x" and git(ws.root, "show", "HEAD:hello.txt") == "done\n"
    assert text in (ws.root / target).read_text()
    assert text in git(ws.root, "show", f"HEAD:{target}")
    if action == "reset":
        assert (plan.task("T-2").status, plan.task("T-2").retries) == (" ", 0)
    assert not ws.rollback_dir.exists() or not list(ws.rollback_dir.iterdir())


@pytest.mark.parametrize("reason", [None, "verify failed 3 times"])
def test_a_persons_reset_during_a_damaged_run_leaves_retries_0(tmp_path, reason):
    """The agent marks T-3 [x] (a guard failure); meanwhile a person resets the blocked T-2:
    the rollback puts T-3 back and keeps the person's reset, retries 0 and its reason gone."""
    ws, _ = _forging(tmp_path, "wait", "docs/MASTER_PLAN.md", shlex.quote("- [ ] `T-2`"), t2="!", retries2=3)
    if reason:
        ws.plan_path.write_text(ws.plan_path.read_text().replace(
            "context_files: [two.txt]\n  - retries: 3\n", f"context_files: [two.txt]\n  - retries: 3\n  - reason: {reason}\n"))
        assert parse_plan(ws.plan_path).task("T-2").reason == reason
        git(ws.root, "commit", "-qam", "T-2 blocked with its reason")
    tick_while_the_agent_waits(ws, lambda: _memento(ws, "reset", "T-2"))
    (entry,) = entries(ws)
    assert entry.status == "FAILED" and "marked T-3 [x]" in entry.field("Reason"), entry.field("Reason")
    plan = parse_plan(ws.plan_path)
    assert (plan.task("T-2").status, plan.task("T-2").retries, plan.task("T-2").reason) == (" ", 0, None)
    assert plan.task("T-3").status == " " and (plan.task("T-1").status, plan.task("T-1").retries) == (" ", 1)
    assert git(ws.root, "show", "HEAD:docs/MASTER_PLAN.md") == ws.plan_path.read_text()


def test_a_persons_skip_during_a_damaged_run_keeps_its_reason(tmp_path):
    """The agent marks T-3 [x]; meanwhile a person skips T-2 with a reason: the rollback puts
    T-3 back and keeps the person's skip with its reason."""
    ws, _ = _forging(tmp_path, "wait", "docs/MASTER_PLAN.md", shlex.quote("reason: not now"))
    tick_while_the_agent_waits(ws, lambda: _memento(ws, "skip", "T-2", "--reason", "not now"))
    plan = parse_plan(ws.plan_path)
    assert (plan.task("T-2").status, plan.task("T-2").reason) == ("-", "not now")
    assert plan.task("T-3").status == " "
    assert (plan.meta.total_tasks, plan.meta.completed_tasks) == (3, 0)  # the skipped task counted out
    assert git(ws.root, "show", "HEAD:docs/MASTER_PLAN.md") == ws.plan_path.read_text()


def test_a_persons_skip_with_a_reason_beyond_ascii_reaches_the_running_tick(tmp_path):
    """The receipt travels as ASCII JSON: a reason in another script is announced and kept."""
    reason = "später — 明日 ✓"
    ws, _ = _forging(tmp_path, "wait", "docs/MASTER_PLAN.md", shlex.quote(reason))
    tick_while_the_agent_waits(ws, lambda: _memento(ws, "skip", "T-2", "--reason", reason))
    plan = parse_plan(ws.plan_path)
    assert (plan.task("T-2").status, plan.task("T-2").reason) == ("-", reason)
    assert plan.task("T-3").status == " "


def test_a_persons_skip_while_the_agent_rewrites_its_own_verify_is_kept(tmp_path):
    """The agent makes its own verify `true`; meanwhile a person skips T-2: the task's definition
    is put back alone, the person's skip stays."""
    ws, _ = _forging(tmp_path, "wait-own", "docs/MASTER_PLAN.md", shlex.quote("reason: not now"))
    tick_while_the_agent_waits(ws, lambda: _memento(ws, "skip", "T-2", "--reason", "not now"))
    plan = parse_plan(ws.plan_path)
    assert (plan.task("T-2").status, plan.task("T-2").reason) == ("-", "not now")
    assert plan.task("T-1").verify == "grep -q done hello.txt"
    assert any(p.name == "MASTER_PLAN.md" for p in ws.rollback_dir.rglob("*-T-1-plan/*"))
    assert git(ws.root, "show", "HEAD:docs/MASTER_PLAN.md") == ws.plan_path.read_text()


def test_a_persons_pause_during_a_damaged_run_stays_paused(tmp_path):
    """The agent marks T-3 [x]; meanwhile a person pauses the plan: the rollback puts the whole
    plan back but for the person's tick_mode, and the task's failure is counted."""
    ws, _ = _forging(tmp_path, "wait", "docs/MASTER_PLAN.md", shlex.quote("tick_mode: paused"))
    tick_while_the_agent_waits(ws, lambda: _memento(ws, "pause"))
    (entry,) = entries(ws)
    assert entry.status == "FAILED" and "marked T-3 [x]" in entry.field("Reason"), entry.field("Reason")
    plan = parse_plan(ws.plan_path)
    assert plan.meta.tick_mode == "paused" and plan.task("T-3").status == " "
    assert (plan.task("T-1").status, plan.task("T-1").retries) == (" ", 1)
    assert git(ws.root, "show", "HEAD:docs/MASTER_PLAN.md") == ws.plan_path.read_text()

def test_with_no_tick_running_a_persons_command_just_acts(tmp_path):
    ws = _ws(tmp_path, agent("waits_for_a_person.py", "x", "y"))
    _memento(ws, "skip", "T-2", "--reason", "not now")
    _memento(ws, "note", "a note with no tick running")
    assert parse_plan(ws.plan_path).task("T-2").status == "-"
    assert [n.text for n in parse_notes(ws.notes_path)] == ["a note with no tick running"]


# ---------------------------------------------------------------- memory/, its own repository


def _memory_log(ws) -> list[dict]:
    env = {**os.environ, "PYTHONPATH": REPO}
    done = subprocess.run([PY, "-m", "memento_core.cli", "memory", "log", "--json", "--project", str(ws.root)],
                          capture_output=True, text=True, env=env, check=True)
    return json.loads(done.stdout)


def _memory_git(ws, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(ws.memory_dir), *args], capture_output=True, text=True)


@pytest.mark.parametrize("then", ["passes", "fail"])
def test_the_agents_raw_commit_in_memory_is_taken_out_of_its_history(tmp_path, then):
    """Unconfined, the agent commits in memory/ as "A Person" (and tags it); after the tick no ref,
    reflog or object of memory/ holds those commits: each is the task's unattributed write of the
    same files, and the attempt failed saying so. ``fail``: the agent then exits 3 (no guards run)."""
    ws, evidence = _forging(tmp_path, "memory", *([then] if then == "fail" else []))
    # A person's own side branch in memory/, from before the tick: theirs, untouched.
    index = {**os.environ, "GIT_INDEX_FILE": str(tmp_path / "idea.index")}
    blob = subprocess.run(["git", "-C", str(ws.memory_dir), "hash-object", "-w", "--stdin"], input="an idea\n",
                          capture_output=True, text=True, check=True).stdout.strip()
    for args in (["read-tree", "HEAD"], ["update-index", "--add", "--cacheinfo", f"100644,{blob},knowledge/idea.md"]):
        subprocess.run(["git", "-C", str(ws.memory_dir), *args], env=index, check=True)
    tree = subprocess.run(["git", "-C", str(ws.memory_dir), "write-tree"], env=index, capture_output=True, text=True,
                          check=True).stdout.strip()
    idea = _memory_git(ws, "commit-tree", tree, "-p", "HEAD", "-m", "a person's idea").stdout.strip()
    assert _memory_git(ws, "update-ref", "refs/heads/ideas", idea).returncode == 0
    run_tick(ws.root)
    assert _memory_git(ws, "rev-parse", "ideas").stdout.strip() == idea
    (entry,) = entries(ws)
    assert entry.status == "FAILED"
    assert "2 commit(s) in memory/ that say they are a person's" in entry.field("Reason"), entry.field("Reason")
    assert "taken out of memory/'s history" in entry.field("Reason")
    said = _evidence(evidence)[0]
    for sha in (said["head"], said["first"]):
        assert _memory_git(ws, "cat-file", "-e", sha).returncode != 0, sha  # no object left
    assert "A Person" not in _memory_git(ws, "log", "--all", "--format=%an %cn").stdout
    assert "my own note" not in _memory_git(ws, "log", "--all", "-g", "--format=%s").stdout  # nor in a reflog
    assert _memory_git(ws, "tag").stdout == ""
    assert _memory_git(ws, "fsck", "--full", "--strict", "--no-dangling").returncode == 0
    log = _memory_log(ws)
    assert not any(c["subject"].startswith("my own note") for c in log)
    assert not any(c["source"] == "source=human" for c in log)
    kept = [c for c in log if c["subject"].startswith("unattributed write by T-1: knowledge/lessons/forged")]
    assert len(kept) == 2 and all((c["kind"], c["source"]) == ("unattributed", "T-1") for c in kept), log
    assert (ws.memory_dir / "knowledge" / "lessons" / "forged1.md").read_text() == "verify is always true (1)\n"
    assert _memory_git(ws, "status", "--porcelain").stdout == ""


def test_a_person_commit_in_memory_with_one_file_no_person_announced_is_forged(tmp_path):
    """A person's announced blob does not vouch for the file the agent committed beside it."""
    from memento_core.receipts import Receipts
    from memento_core.tick.receipts import forged_memory

    ws = _ws(tmp_path, "true")
    since = _memory_git(ws, "rev-parse", "HEAD").stdout.strip()
    folder = ws.memory_dir / "knowledge" / "lessons"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "persons.md").write_text("a person's lesson\n")
    (folder / "agents.md").write_text("verify is always true\n")
    _memory_git(ws, "add", "-A")
    assert _memory_git(ws, "commit", "-qm", "two lessons").returncode == 0  # no trailer: says "a person"
    blobs = {name: _memory_git(ws, "rev-parse", f"HEAD:knowledge/lessons/{name}").stdout.strip()
             for name in ("persons.md", "agents.md")}
    both = Receipts(memory=frozenset(blobs.values()))
    assert forged_memory(ws, since, both, "T-1") == ()  # each file announced: the person's commit
    one = Receipts(memory=frozenset({blobs["persons.md"]}))
    sha = _memory_git(ws, "rev-parse", "HEAD").stdout.strip()
    assert forged_memory(ws, since, one, "T-1") == (sha[:7],)
    assert _memory_git(ws, "cat-file", "-e", sha).returncode != 0  # out of memory/'s history
    assert (folder / "agents.md").read_text() == "verify is always true\n"  # kept, as the task's write


def test_the_agents_memory_write_as_a_person_is_refused(tmp_path):
    ws, evidence = _forging(tmp_path, "cli-memory")
    run_tick(ws.root)
    (said,) = _evidence(evidence)
    assert said["code"] == 2 and REFUSED in said["stderr"], said
    assert not (ws.memory_dir / "knowledge" / "lessons" / "trust.md").exists()
    assert not any(c["subject"] == "the person trusts the agent" for c in _memory_log(ws))


@pytest.mark.parametrize("object_format", ["sha1", "sha256"])
def test_a_persons_memory_write_during_the_run_is_theirs_and_the_task_passes(tmp_path, monkeypatch, object_format):
    """Also where the person's git makes SHA-256 repositories (GIT_DEFAULT_HASH): the receipt
    names the write's blob as memory/'s own git names it, so the commit is the person's."""
    lesson = "retry flaky tests once"
    monkeypatch.setenv("GIT_DEFAULT_HASH", object_format)
    ws = _ws(tmp_path, agent("waits_for_a_person.py", "memory/MEMORY.md", "flaky.md"))
    assert git(ws.memory_dir, "rev-parse", "--show-object-format").strip() == object_format
    env = {**os.environ, "PYTHONPATH": REPO}
    env.pop("MEMENTO_TASK_ID", None)

    def write() -> None:
        done = subprocess.run([PY, "-m", "memento_core.cli", "memory", "write", "knowledge/lessons/flaky.md",
                               "--summary", "flaky tests", "--project", str(ws.root)], input=lesson + "\n",
                              capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stderr

    tick_while_the_agent_waits(ws, write)
    (entry,) = entries(ws)
    assert entry.status == "SUCCESS", entry.field("Reason")
    (mine,) = [c for c in _memory_log(ws) if c["subject"] == "flaky tests"]
    assert (mine["kind"], mine["source"]) == ("write", "source=human")
    assert len(mine["sha"]) == (64 if object_format == "sha256" else 40)
    assert not any(c["kind"] == "unattributed" for c in _memory_log(ws))
