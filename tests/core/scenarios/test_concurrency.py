"""A person-like editor and the dashboard's own edits racing real ticks: zero lost updates, counted.

The "person" saves the plan by hand the way editors do (write a temp file,
check the plan is still what it read, rename the temp file over it, no lock)
and also appends notes, skips and resets tasks through memento_core; a
"dashboard" process adds notes and resets retries. Meanwhile 100 real ticks
run. Afterwards every counted update must still be there.

An editor's check and its rename are two steps: a tick's plan edit landing
between them is overwritten by the save (no lock can stop an editor). That is
the one way a tick may legitimately not pass its task here, so the person saves
with an atomic exchange (renameat2 RENAME_EXCHANGE: the same switch of the file
a rename makes, but the file it replaced lands in the temp file's place) and
counts exactly which task statuses each such save reverted. Every tick that
does not pass is then matched to one of those reverts.
"""

from __future__ import annotations

import ctypes
import errno
import json
import multiprocessing as mp
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memento_core import status_log
from memento_core.notes import add_note, parse_notes
from memento_core.plan.edits import reset_task, skip_task
from memento_core.plan.scan import parse_plan
from memento_core.scaffold import init_workspace

PY = sys.executable
N_TICKS = 100
COUNTER = "Hand-edit counter: "


def _plan(n: int) -> str:
    tasks = "".join(
        f"- [ ] `T-{i}` [MODULE:m] Write file {i}\n  - verify: `test -f out/{i}.txt`\n"
        f"  - context_files: [out/{i}.txt]\n  - do: `mkdir -p out && echo {i} > out/{i}.txt`\n"
        for i in range(1, n + 1))
    spare = ("- [ ] `S-1` [MODULE:person] Skipped and reset by the person\n  - verify: `false`\n"
             "  - context_files: []\n")
    return (f"# MASTER_PLAN: race\n\n## Meta\n- tick_mode: auto\n- max_retries: 3\n"
            f"- circuit_breaker_threshold: 1000\n- status_max_entries: 20\n\n"
            f"{COUNTER}0\n\n## Phase 1: Work\n\n{tasks}\n## Phase 2: Person (depends on Phase 1)\n\n{spare}")


_TASK_STATUS_RE = re.compile(r"^- \[(.)\] `(T-\d+)`", re.M)
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (renameat2 RENAME_EXCHANGE); False where the system cannot."""
    libc = ctypes.CDLL(None, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return False
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    if ctypes.get_errno() in (errno.EINVAL, errno.ENOSYS, errno.EPERM, errno.ENOTSUP):
        return False
    raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()), str(b))


def _reverted(replaced: str, saved: str) -> list[tuple[str, str, str]]:
    """The task statuses a save put back: (task, status it overwrote, status it wrote)."""
    before = {tid: s for s, tid in _TASK_STATUS_RE.findall(replaced)}
    after = {tid: s for s, tid in _TASK_STATUS_RE.findall(saved)}
    return [(tid, before[tid], after[tid]) for tid in sorted(after) if before.get(tid) != after[tid]]


def _save_like_an_editor(plan: Path, text: str, new: str) -> tuple[bool, list | None]:
    """Save ``new`` over the plan read as ``text``: (saved, reverted statuses or None if unknown)."""
    tmp = plan.with_name(".MASTER_PLAN.md.swp")
    tmp.write_text(new)
    # A careful editor re-checks the file right before saving, as vim and VS Code do.
    if plan.read_text() != text:
        tmp.unlink()
        return False, []
    if not _exchange(tmp, plan):
        os.replace(tmp, plan)
        return True, None
    replaced = tmp.read_text()  # what the save just replaced: the text checked, unless a tick was quicker
    tmp.unlink()
    return True, [] if replaced == text else _reverted(replaced, new)


def _person(root: str, stop, report: str) -> None:
    """Hand edits by rename, plus notes, skips and resets through memento_core."""
    root_path = Path(root)
    plan = root_path / "docs" / "MASTER_PLAN.md"
    counter = lost = notes_added = 0
    skips = resets = 0
    reverted: list = []
    exact = True
    while not stop.is_set():
        text = plan.read_text()
        line = next(ln for ln in text.splitlines() if ln.startswith(COUNTER))
        if int(line[len(COUNTER):]) != counter:
            lost += 1  # our hand edit was overwritten by someone who had not seen it
        saved, undone = _save_like_an_editor(plan, text, text.replace(line, f"{COUNTER}{counter + 1}", 1))
        if saved:
            counter += 1
        if undone is None:
            exact = False
        else:
            reverted += undone
        add_note(root_path / "docs" / "HUMAN_NOTES.md", f"person note {notes_added}", target="global")
        notes_added += 1
        if counter % 5 == 0:
            skip_task(plan, "S-1", "not now")
            skips += 1
        elif counter % 5 == 2:
            reset_task(plan, "S-1")
            resets += 1
        time.sleep(0.01)
    Path(report).write_text(json.dumps({"counter": counter, "lost": lost, "notes": notes_added,
                                        "skips": skips, "resets": resets, "reverted": reverted,
                                        "exact": exact}))


def _dashboard(root: str, stop, report: str) -> None:
    root_path = Path(root)
    n = 0
    while not stop.is_set():
        add_note(root_path / "docs" / "HUMAN_NOTES.md", f"dashboard note {n}", target="T-1")
        n += 1
        time.sleep(0.02)
    Path(report).write_text(json.dumps({"notes": n}))


@pytest.mark.slow
def test_person_and_dashboard_race_one_hundred_ticks(tmp_path: Path, git_identity):
    _race(tmp_path, N_TICKS)


def test_person_and_dashboard_race_a_few_ticks(tmp_path: Path, git_identity):
    _race(tmp_path, 12)


def _race(tmp_path: Path, n_ticks: int) -> None:
    root = tmp_path / "ws"
    init_workspace(root, project="race", commit=False)
    (root / "docs" / "MASTER_PLAN.md").write_text(_plan(n_ticks))
    (root / ".gitignore").write_text((root / ".gitignore").read_text() + "docs/.*.swp\n")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "race"], cwd=root, check=True)
    ctx = mp.get_context("spawn")
    stop = ctx.Event()
    person = ctx.Process(target=_person, args=(str(root), stop, str(tmp_path / "person.json")))
    dash = ctx.Process(target=_dashboard, args=(str(root), stop, str(tmp_path / "dash.json")))
    person.start()
    dash.start()
    codes, said = [], []
    try:
        for _ in range(n_ticks):
            r = subprocess.run([PY, "-m", "memento_core.tick", "--project", str(root)], capture_output=True,
                               text=True, timeout=120)
            assert "Traceback" not in r.stderr, r.stderr
            codes.append(r.returncode)
            said.append(r.stdout.strip())
    finally:
        stop.set()
        person.join(timeout=60)
        dash.join(timeout=60)
    p = json.loads((tmp_path / "person.json").read_text())
    d = json.loads((tmp_path / "dash.json").read_text())
    plan = parse_plan(root / "docs" / "MASTER_PLAN.md")
    # The person's hand edits: none was ever overwritten, and the last one is on disk.
    assert p["lost"] == 0, p
    text = (root / "docs" / "MASTER_PLAN.md").read_text()
    assert f"{COUNTER}{p['counter']}\n" in text
    # Every note from both writers is there, once.
    texts = [n.text for n in parse_notes(root / "docs" / "HUMAN_NOTES.md")]
    expected = [f"person note {i}" for i in range(p["notes"])] + [f"dashboard note {i}" for i in range(d["notes"])]
    assert sorted(texts) == sorted(expected)
    assert plan.plan_errors == ()
    assert p["skips"] > 0
    # Only the ticks that did not exit 0, whole: pytest cuts a long list before the one that matters.
    assert codes == [0] * n_ticks, [(n + 1, code, words) for n, (code, words) in enumerate(zip(codes, said, strict=True))
                                    if code != 0]
    _every_tick_passed_or_lost_its_edit_to_a_save(root, plan, said, p)


_PASSED_RE = re.compile(r"^\[ok\] tick #\d+: T-\d+ passed$")
_SET_ASIDE_RE = re.compile(r"^\[(?:ok|warn)\] tick #\d+: T-\d+ failed: the task was changed in the plan while it ran ")
_NOT_CLAIMED_RE = re.compile(r"^\[(?:ok|warn)\] tick #\d+: (T-\d+) failed: could not claim: .* expected \[ \]")


def _every_tick_passed_or_lost_its_edit_to_a_save(root: Path, plan, said: list[str], p: dict) -> None:
    """Memento's own updates survived the person's saves, except those a save provably reverted.

    A save that put a task back from [~] to [ ] took the running tick's claim: that tick
    sets its work aside. One that put a task back from [x] undid a pass. One that put a
    task back to [~] leaves it claimed by no one: a later tick finds it stale. When the last
    commit has it [x] (the save undid its pass), the task is set back to [x], not run again
    (its empty change would fail as "nothing changed" until [!]); else it is reset and passed
    again. A tick that had just picked it cannot claim it. Every other tick passes its task:
    with no such save, every task is [x].
    """
    passed = [s for s in said if _PASSED_RE.match(s)]
    set_aside = [s for s in said if _SET_ASIDE_RE.match(s)]
    not_claimed = [m.group(1) for s in said if (m := _NOT_CLAIMED_RE.match(s))]
    others = [s for s in said if not (_PASSED_RE.match(s) or _SET_ASIDE_RE.match(s) or _NOT_CLAIMED_RE.match(s))]
    assert len(passed) + len(set_aside) + len(not_claimed) == len(said), others  # what a tick said besides
    entries = status_log.parse_status(root / "docs" / "TICK_STATUS.md")
    entries += status_log.iter_status_archive(root / plan.meta.status_archive_dir)
    kinds = {"SUCCESS": 0, "SET ASIDE": 0, "STALE": 0}
    for e in entries:
        kind = "SET ASIDE" if (e.field("Status") or "").startswith("⏹ SET ASIDE") else e.status
        assert kind in kinds, (kind, e.field("Status") or e.field("Event"))
        kinds[kind] += 1
    assert (kinds["SUCCESS"], kinds["SET ASIDE"]) == (len(passed), len(set_aside))
    assert all(e.field("Reason").startswith("no claim file") for e in entries if e.status == "STALE")
    set_back = sum(1 for e in entries if e.status == "STALE" and e.field("Event").endswith("set back to [x]"))
    done = [t for t in plan.tasks if t.id.startswith("T-") and t.status == "x"]
    assert all((root / "out" / f"{t.id[2:]}.txt").exists() for t in done)
    if not p["exact"]:
        pytest.skip("this file system cannot exchange two paths: the person's reverts were not counted")
    reverted = [tuple(r) for r in p["reverted"]]
    took_claim = sum(1 for _, was, put in reverted if (was, put) == ("~", " "))
    undid_pass = sum(1 for _, was, _put in reverted if was == "x")
    left_claimed = sum(1 for _, _was, put in reverted if put == "~")
    assert len(set_aside) == took_claim, (reverted, said)
    assert len(done) == len(passed) - undid_pass + set_back, (reverted, said)
    assert set_back <= sum(1 for _, was, put in reverted if (was, put) == ("x", "~")), (reverted, said)
    unclaimed_at_end = sum(1 for t in plan.tasks if t.status == "~")
    assert kinds["STALE"] + unclaimed_at_end == left_claimed, (reverted, said)
    assert set(not_claimed) <= {tid for tid, _was, put in reverted if put == "~"}, (reverted, said)
