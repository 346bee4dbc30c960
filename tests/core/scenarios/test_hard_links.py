"""Red team (SPEC §13 "Either way"): Memento never writes through a hard link.

The hostile agent (tests/agents/hard_links_own_files.py, through the real `command` preset)
replaces Memento's documents, logs and state files, and a person's untracked and ignored
files, by hard links to a person's files in a folder outside the project (same file system).
O_NOFOLLOW does not see a hard link: an append to the status log, the tick log or
logs/cron.log, a plan edit or a chmod at the rollback would land in the person's file.
Judged on disk and in git: the outside files keep their bytes and modes (through this tick
and the next), Memento's files are regular files of their own again (one name each), the
committed plan has every task, the attempt failed naming each path, and the next tick runs.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import pytest

from memento_core import locks
from memento_core.agents import logcap
from memento_core.plan.scan import parse_plan
from memento_core.tick import kept
from memento_core.tick.__main__ import run_tick
from memento_core.workspace import Workspace
from tests.core.modes import MODES

from .test_engine import HELLO, agent, entries, git, make_ws


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


TASKS = HELLO + HELLO.replace("T-1", "T-2").replace("Write hello", "Write more")
# Memento's files the agent links, and what the tick must say of each.
OWN = ["docs/MASTER_PLAN.md", "docs/TICK_STATUS.md", "docs/HUMAN_NOTES.md", "docs/CURRENT_STATE.md",
       ".memento/state.json", "logs/cron.log", "@log"]
STATE = [".memento/usage.json", ".memento/notify.json", "@claim"]  # owned.py's: "changed Memento's own state"
PERSONS = {"scratch.txt": b"a person's untracked notes\n", ".env": b"TOKEN=a person's own\n"}


def prints(folder: Path) -> dict[str, tuple[str, int]]:
    """Each file's sha256 and st_mode (type and permission bits)."""
    return {p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), os.lstat(p).st_mode) for p in folder.iterdir()}


def workspace(tmp_path: Path, rels: list[str], mode: str) -> tuple[Workspace, Path]:
    """A project whose agent links each of ``rels`` to its own person's file in ``outside``."""
    outside = tmp_path / "a-persons-files"
    outside.mkdir()
    pairs = []
    for i, rel in enumerate(rels):
        target = outside / f"file-{i}.txt"
        # The plan's stand-in is a person's older copy of it, one task short: committed, every
        # later tick would refuse the plan.
        text = "# MASTER_PLAN: an old copy\n" if rel.endswith("MASTER_PLAN.md") else f"a person's diary {i}\n"
        target.write_text(text)
        target.chmod(0o600 if i % 2 else 0o640)
        pairs.append(f"{rel}={target}")
    ws = make_ws(tmp_path, agent("hard_links_own_files.py", *pairs), tasks=TASKS, sandbox=mode)
    with (ws.root / ".gitignore").open("a") as fh:
        fh.write(".env\n")
    git(ws.root, "commit", "-qm", "ignore .env", "--", ".gitignore")
    for rel, data in PERSONS.items():
        (ws.root / rel).write_bytes(data)
    return ws, outside


def in_tree(ws: Workspace, rel: str) -> Path:
    if rel == "@claim":
        return ws.claims_dir / "T-1.json"
    if rel == "@log":
        return max(ws.logs_dir.glob("tick_*.log"), key=lambda p: p.name)
    return ws.root / rel


def single(path: Path) -> bool:
    """A regular file of its own (one name), or not there."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return True
    return stat.S_ISREG(st.st_mode) and st.st_nlink == 1


def honest_next_tick(ws: Workspace) -> None:
    """A person replaces the agent; the next tick runs normally and passes T-1."""
    text = ws.config_path.read_text().splitlines(keepends=True)
    text = [ln if not ln.startswith("command =") else f'command = """{agent("does_task.py", "hello.txt", "done")}"""\n'
            for ln in text]
    ws.config_path.write_text("".join(text))
    git(ws.root, "commit", "-qm", "an honest agent", "--", "memento.toml")
    outcome = run_tick(ws.root)
    assert outcome.exit_code == 0, outcome.message
    plan = parse_plan(ws.plan_path)
    assert plan.task("T-1").status == "x" and plan.task("T-2").status == " "


def committed_plans(ws: Workspace, start: str) -> list[bytes]:
    return [git(ws.root, "show", f"{sha}:docs/MASTER_PLAN.md").encode()
            for sha in git(ws.root, "rev-list", f"{start}..HEAD").split()]


def test_memento_never_writes_through_a_hard_link_unconfined(tmp_path):
    ws, outside = workspace(tmp_path, [*OWN, *STATE, *PERSONS], "none")
    root, before = ws.root, prints(outside)
    start = git(root, "rev-parse", "HEAD").strip()
    (result,) = run_tick(root).results
    assert prints(outside) == before  # bytes and modes
    assert not result.passed
    reason = result.reason
    hard = reason.split("the agent replaced Memento's own files by hard links: ", 1)[1].split(" (", 1)[0]
    log = in_tree(ws, "@log").relative_to(root).as_posix()
    assert hard.split(", ") == sorted([*OWN[:-1], log]), reason
    assert "changed Memento's own state: .memento/claims/T-1.json, .memento/notify.json, .memento/usage.json" \
        in reason, reason
    assert "changed a person's untracked or ignored file(s): .env, scratch.txt (restored" in reason, reason
    assert all(os.lstat(p).st_nlink == 1 for p in outside.iterdir())  # no name of theirs is left in the tree
    for rel in [*OWN, *STATE, *PERSONS]:
        assert single(in_tree(ws, rel)), rel
    for rel, data in PERSONS.items():
        assert (root / rel).read_bytes() == data
    assert [e.status for e in entries(ws)] == ["FAILED"]
    assert b"a person's diary" not in ws.status_path.read_bytes()
    (listing,) = ws.rollback_dir.glob("*-T-1-hard-links/HARD_LINKS.txt")  # where each was linked, not its bytes
    said = listing.read_text()
    assert all(f"{rel}: inode " in said for rel in [*OWN[:-1], log]) and "diary" not in said, said
    assert f"(listed in {listing.relative_to(root).as_posix()})" in in_tree(ws, "@log").read_text()
    plan = parse_plan(ws.plan_path)
    assert [t.id for t in plan.tasks] == ["T-1", "T-2"] and plan.task("T-1").retries == 1
    for committed in committed_plans(ws, start):
        assert "`T-1`" in committed.decode() and "`T-2`" in committed.decode()
    assert not (root / "hello.txt").exists()
    honest_next_tick(ws)
    assert prints(outside) == before
    for sha in git(root, "rev-list", f"{start}..HEAD").split():
        assert "a person's diary" not in git(root, "show", sha)


@pytest.mark.parametrize("mode", MODES)
def test_a_hard_link_inside_the_tree_is_split_too(tmp_path, mode):
    """Linked to a person's tracked file: a status append or a notes edit would change it, and be
    committed. Confined, the links cannot be made (Memento's files are read-only binds)."""
    ws = make_ws(tmp_path, agent("hard_links_own_files.py", "docs/TICK_STATUS.md=other.txt",
                                 "docs/HUMAN_NOTES.md=guarded.txt", "logs/cron.log=other.txt", "@log=hello.txt"),
                 tasks=TASKS, sandbox=mode)
    root = ws.root
    start = git(root, "rev-parse", "HEAD").strip()
    (result,) = run_tick(root).results
    assert (root / "other.txt").read_text() == "someone else's file\n"
    assert (root / "guarded.txt").read_text() == "do not touch\n"
    log = in_tree(ws, "@log")
    if mode == "none":
        assert not result.passed
        assert ("the agent replaced Memento's own files by hard links: docs/HUMAN_NOTES.md, docs/TICK_STATUS.md, "
                f"logs/cron.log, {log.relative_to(root).as_posix()}") in result.reason, result.reason
        assert not (root / "hello.txt").exists()
    else:
        assert "linked " not in log.read_text() and log.read_text().count("refused ") == 4
        assert result.passed, result.reason
        assert (root / "hello.txt").read_text() == "done\n"
    for rel in ("other.txt", "guarded.txt", "hello.txt", "docs/TICK_STATUS.md", "docs/HUMAN_NOTES.md",
                "logs/cron.log"):
        assert single(root / rel), rel
    assert single(log)
    assert not git(root, "diff", "--name-only", start, "HEAD", "--", "other.txt", "guarded.txt")
    if mode == "none":
        honest_next_tick(ws)


def test_a_file_of_mementos_given_a_second_name_is_split_too(tmp_path):
    """The other way round: the agent gives Memento's file a second name outside (``ln docs/X ~/x``);
    what Memento writes next must not show under that name."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    rels = ["docs/TICK_STATUS.md", "docs/HUMAN_NOTES.md", "docs/MASTER_PLAN.md", "logs/cron.log",
            ".memento/notify.json"]
    ws = make_ws(tmp_path, agent("hard_links_own_files.py", *(f"{rel}=+{outside / str(i)}" for i, rel in enumerate(rels))),
                 tasks=TASKS)
    root = ws.root
    (root / "logs" / "cron.log").write_text("a line of an earlier tick\n")
    (root / ".memento" / "notify.json").write_text("{}\n")
    before = {rel: (root / rel).read_bytes() for rel in rels}
    (result,) = run_tick(root).results
    assert [(outside / str(i)).read_bytes() for i in (0, 1, 3, 4)] == [before[rels[i]] for i in (0, 1, 3, 4)]
    assert not result.passed
    assert ("the agent replaced Memento's own files by hard links: docs/HUMAN_NOTES.md, docs/MASTER_PLAN.md, "
            "docs/TICK_STATUS.md, logs/cron.log (") in result.reason, result.reason
    assert "changed Memento's own state: .memento/notify.json" in result.reason, result.reason
    for i, rel in enumerate(rels):
        now = (outside / str(i)).read_bytes()
        if rel == "docs/MASTER_PLAN.md":  # as the agent found it: T-1 running, no retry counted yet
            assert b"- [~] `T-1`" in now and b"retries: 1" not in now and b"- [ ] `T-1`" not in now, now
        else:
            assert now == before[rel], rel
        assert os.lstat(outside / str(i)).st_nlink == 1 and single(root / rel), rel
    honest_next_tick(ws)


@pytest.mark.parametrize("mode", MODES)
def test_outside_files_are_untouched_in_both_modes(tmp_path, mode):
    """Confined, Memento's files are read-only binds: the links cannot be made, and nothing outside
    changes either way; the next tick runs."""
    ws, outside = workspace(tmp_path, [*OWN, *STATE], mode)
    before = prints(outside)
    (result,) = run_tick(ws.root).results
    assert prints(outside) == before
    log = in_tree(ws, "@log").read_text()
    if mode == "none":
        assert "the agent replaced Memento's own files by hard links: " in result.reason, result.reason
    else:  # each link refused by the sandbox, so the task's own work passed
        assert "linked " not in log and log.count("refused ") == len(OWN) + len(STATE), log
        assert result.passed, result.reason
    assert all(os.lstat(p).st_nlink == 1 for p in outside.iterdir())
    for rel in [*OWN, *STATE]:
        assert single(in_tree(ws, rel)), rel
    if mode == "none":
        honest_next_tick(ws)
    else:
        outcome = run_tick(ws.root)
        assert outcome.exit_code == 0, outcome.message
    assert prints(outside) == before


# ---------------------------------------------------------------- the writers themselves


def linked_pair(tmp_path: Path, data: bytes = b"a person's file\n", mode: int = 0o600) -> tuple[Path, Path]:
    theirs = tmp_path / "outside.txt"
    theirs.write_bytes(data)
    theirs.chmod(mode)
    (tmp_path / "logs").mkdir()
    ours = tmp_path / "logs" / "cron.log"
    os.link(theirs, ours)
    return theirs, ours


def test_open_append_refuses_a_hard_link_or_splits_it(tmp_path):
    theirs, ours = linked_pair(tmp_path)
    with pytest.raises(locks.HardLinkRefused, match=r"is a hard link \(2 names for one file\); Memento never"):
        locks.open_append(ours)
    assert theirs.read_bytes() == b"a person's file\n"
    with locks.open_append(ours, split=True) as fh:
        fh.write("[memento] a line\n")
    assert theirs.read_bytes() == b"a person's file\n" and stat.S_IMODE(theirs.stat().st_mode) == 0o600
    assert ours.read_bytes() == b"a person's file\n[memento] a line\n"
    assert os.lstat(ours).st_nlink == 1 and os.lstat(theirs).st_nlink == 1


def test_the_log_cap_never_cuts_a_hard_linked_log(tmp_path):
    data = b"x" * 50_000
    theirs, ours = linked_pair(tmp_path, data)
    assert logcap.trim(ours, keep=1_000) == 0
    assert theirs.read_bytes() == data
    os.unlink(theirs)
    assert logcap.trim(ours, keep=1_000) > 0  # its own again: cut as ever


def test_restoring_a_mode_never_chmods_a_hard_link(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    git(root, "init", "-q")
    (root / "app.py").write_text("print(1)\n")
    git(root, "add", "app.py")
    snap = kept.Kept(frozenset(), modes=kept.tracked_modes(root))
    theirs = tmp_path / "theirs.py"
    theirs.write_text("a person's script\n")
    theirs.chmod(0o700)
    (root / "app.py").unlink()
    os.link(theirs, root / "app.py")
    assert kept.restore_modes(root, snap, tmp_path / "tick.log") == ("app.py",)
    assert stat.S_IMODE(theirs.stat().st_mode) == 0o700 and theirs.stat().st_nlink == 1
    assert stat.S_IMODE((root / "app.py").stat().st_mode) == 0o644
    assert (root / "app.py").read_text() == "a person's script\n"  # the bytes are the rollback's (git's)


def test_the_architects_hard_links_are_split_and_named(tmp_path):
    """The architect is an agent too: its run is rolled back naming the links, nothing outside changes."""
    from memento_core.tick.architect.run import ROLLED_BACK, run_architect
    from tests.core.tick.architect.test_run import agent as quoted
    from tests.core.tick.architect.test_run import make_ws as blocked_ws

    outside = tmp_path / "a-persons-files"
    outside.mkdir()
    rels = ["docs/MASTER_PLAN.md", "docs/TICK_STATUS.md", "docs/HUMAN_NOTES.md", "logs/cron.log"]
    for i in range(len(rels)):
        (outside / f"file-{i}.txt").write_text(f"a person's diary {i}\n")
        (outside / f"file-{i}.txt").chmod(0o600)
    ws = blocked_ws(tmp_path, quoted("hard_links_own_files.py",
                                     *(f"{rel}={outside / f'file-{i}.txt'}" for i, rel in enumerate(rels))))
    before = prints(outside)
    result = run_architect(ws)
    assert prints(outside) == before
    assert result.outcome == ROLLED_BACK, result.reasons
    assert any(r.startswith("replaced Memento's own files by hard links: docs/HUMAN_NOTES.md, docs/MASTER_PLAN.md, "
                            "docs/TICK_STATUS.md, logs/cron.log (") for r in result.reasons), result.reasons
    assert all(os.lstat(p).st_nlink == 1 for p in outside.iterdir())
    for rel in rels:
        assert single(ws.root / rel), rel
    plan = parse_plan(ws.plan_path)
    assert [(t.id, t.status) for t in plan.tasks] == [("T-1", "!"), ("T-2", "x"), ("T-3", " "), ("T-4", " ")]


def test_a_hard_link_there_before_the_run_is_not_the_agents_and_is_split(tmp_path):
    """A person's backup made with `cp -al` or `ln` shares the inodes: the run keeps the backup as
    it was, and the honest task passes (the link is not blamed on its agent)."""
    ws = make_ws(tmp_path, agent("does_task.py", "hello.txt", "done"))
    root = ws.root
    (root / "logs" / "cron.log").write_text("an earlier line\n")
    backup = tmp_path / "backup"
    backup.mkdir()
    for rel in ("docs/TICK_STATUS.md", "logs/cron.log"):
        os.link(root / rel, backup / Path(rel).name)
    before = prints(backup)
    outcome = run_tick(root)
    (result,) = outcome.results
    assert result.passed, result.reason
    assert prints(backup) == before
    assert single(root / "docs" / "TICK_STATUS.md") and single(root / "logs" / "cron.log")
    assert "[memento] hard links made files of their own: docs/TICK_STATUS.md, logs/cron.log (listed in logs/" \
        in in_tree(ws, "@log").read_text()
