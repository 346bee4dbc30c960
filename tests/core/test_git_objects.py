"""Git objects are immutable, with and without the sandbox (SPEC §13 "Either way").

The hostile agent (tests/agents/rewrites_git_objects.py, through the real `command` preset)
rewrites the loose objects of a person's branch and tag under their old ids, rewrites bytes of
a pack in place, or plants an object under the id of the content it is about to write. Judged
in git (`git cat-file`, `git log`, `git fsck`) and on disk (every loose object still hashes to
its name, what was found saved under logs/rollback/), and the next honest tick works. In the
sandbox `.git/` is read-only: the attack itself fails.
"""

from __future__ import annotations

import hashlib
import subprocess
import zlib
from pathlib import Path

import pytest

from memento_core.plan.scan import parse_plan
from memento_core.tick.__main__ import run_tick
from tests.core.scenarios.test_engine import agent, entries, git
from tests.core.scenarios.test_redteam_git import honest_tick_works, hostile_ws

from .modes import MODES


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


def persons_history(tmp_path: Path, command: str, sandbox: str = "none", *, packed: bool = False):
    """hostile_ws, with a commit of the person's own on `feature` (moved past main's) and the tag `v1`."""
    ws = hostile_ws(tmp_path, command, sandbox)
    root = ws.root
    git(root, "checkout", "-q", "feature")
    (root / "feature.txt").write_text("a person's feature\n")
    git(root, "add", "feature.txt")
    git(root, "commit", "-qm", "a person's feature")
    git(root, "checkout", "-q", "main")
    if packed:
        git(root, "repack", "-adq")
    return ws


def history(root: Path) -> dict[str, str]:
    return {ref: git(root, "log", "--format=%H %s%n%b", ref) for ref in ("feature", "v1")}


def fsck(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "fsck", "--full", "--strict", "--no-dangling"], cwd=root, capture_output=True,
                          text=True)


def loose_objects_genuine(root: Path) -> list[str]:
    """Every loose object whose inflated content does not hash to its name."""
    bad = []
    for path in (root / ".git" / "objects").glob("[0-9a-f][0-9a-f]/*"):
        oid = path.parent.name + path.name
        if hashlib.sha1(zlib.decompress(path.read_bytes())).hexdigest() != oid:
            bad.append(oid)
    return bad


def saved(ws) -> list[Path]:
    return sorted(p for p in ws.rollback_dir.glob("*-objects/**/*") if p.is_file())


@pytest.mark.parametrize("sandbox", MODES)
@pytest.mark.parametrize("how", ["loose", "rename"])
def test_a_persons_branch_and_tag_rewritten_under_their_ids_read_as_before(tmp_path, how, sandbox):
    ws = persons_history(tmp_path, agent("rewrites_git_objects.py", how, "feature", "v1"), sandbox)
    root = ws.root
    before = history(root)
    ids = [git(root, "rev-parse", f"{r}^{{commit}}").strip() for r in ("feature", "v1")]
    outcome = run_tick(root)
    (result,) = outcome.results
    assert not result.passed
    if sandbox == "none":
        for oid in ids:
            assert f".git/objects/{oid[:2]}/{oid[2:]}" in result.reason, result.reason
        assert "put back from Memento's copy" in result.reason
        (entry,) = entries(ws)
        assert ".git/objects/" in entry.field("Reason")
        assert len(saved(ws)) == 2  # what the agent wrote, kept
        assert all(b"the agent's text" in zlib.decompress(p.read_bytes()) for p in saved(ws))
        assert outcome.exit_code == 0
    assert history(root) == before
    assert "the agent's text" not in git(root, "log", "--all", "--format=%B")
    assert fsck(root).returncode == 0, fsck(root).stderr
    assert loose_objects_genuine(root) == []
    honest_tick_works(ws)
    assert history(root)["feature"] == before["feature"]


def test_a_pack_rewritten_in_place_is_put_back(tmp_path):
    ws = persons_history(tmp_path, agent("rewrites_git_objects.py", "pack"), packed=True)
    root = ws.root
    before = history(root)
    (pack,) = (root / ".git" / "objects" / "pack").glob("*.pack")
    original = pack.read_bytes()
    (result,) = run_tick(root).results
    assert not result.passed
    assert f".git/objects/pack/{pack.name}" in result.reason, result.reason
    assert pack.read_bytes() == original
    assert fsck(root).returncode == 0, fsck(root).stderr
    assert history(root) == before
    honest_tick_works(ws)


def test_an_object_planted_under_the_id_of_the_tasks_own_content_is_never_committed(tmp_path):
    ws = persons_history(tmp_path, agent("rewrites_git_objects.py", "plant"))
    root = ws.root
    (result,) = run_tick(root).results
    assert not result.passed
    oid = hashlib.sha1(b"blob 5\0done\n").hexdigest()
    assert f"planted .git/objects/{oid[:2]}/{oid[2:]}" in result.reason, result.reason
    assert loose_objects_genuine(root) == []
    honest_tick_works(ws)
    # The honest tick's commit holds hello.txt as the file says, not the planted bytes.
    assert git(root, "show", "HEAD:hello.txt") == "done\n"
    assert "the agent's secret" not in subprocess.run(["git", "log", "--all", "-p"], cwd=root, capture_output=True,
                                                      text=True).stdout
    assert fsck(root).returncode == 0, fsck(root).stderr


def test_objects_without_a_valid_copy_stop_the_tick_for_a_person(tmp_path, monkeypatch):
    """The agent rewrites the object and Memento's copy of it: nothing valid to put back. The tick
    says which object, pauses the plan (the alert, exit 1) and the next tick does not run. Nor is
    anything packed, past the loose objects' limit too: git would copy the forged object into a
    pack, where a person restoring the loose file would never see it read."""
    from memento_core.git import objects as git_objects

    monkeypatch.setattr(git_objects, "LOOSE_LIMIT", 1)
    ws = persons_history(tmp_path, agent("rewrites_git_objects.py", "mirror", "feature"))
    root = ws.root
    oid = git(root, "rev-parse", "feature").strip()
    outcome = run_tick(root)
    assert not list((root / ".git" / "objects" / "pack").glob("*.pack"))
    assert (root / ".git" / "objects" / oid[:2] / oid[2:]).is_file()
    (result,) = outcome.results
    assert not result.passed
    assert f".git/objects/{oid[:2]}/{oid[2:]}, and Memento has no copy" in result.reason, result.reason
    assert outcome.exit_code == 1
    assert parse_plan(ws.plan_path).meta.tick_mode == "paused"
    assert "git objects changed during T-1 could not be put back" in (root / ".memento_alert").read_text()
    assert any("CIRCUIT BREAKER" in (e.field("Event") or "") for e in entries(ws))
    again = run_tick(root)
    assert again.results == [] and again.exit_code == 0


def test_an_object_rewritten_before_the_agent_kills_its_tick_is_put_back_by_the_recovery(tmp_path):
    """The killed tick's snapshot died with it: the next tick's stale recovery re-hashes every loose
    object and puts back the one the agent rewrote, from Memento's copy, before its rollback reads it."""
    from tests.core.scenarios.test_redteam_procs import _killed_then_recovered

    ws = _killed_then_recovered(tmp_path, "objects")
    root = ws.root
    oid = git(root, "rev-list", "--max-parents=0", "HEAD").strip()  # the commit HEAD named at the claim
    (stale,) = [e for e in entries(ws) if e.status == "STALE"]
    assert f".git/objects/{oid[:2]}/{oid[2:]} (put back from Memento's copy)" in stale.field("Rollback"), \
        stale.field("Rollback")
    assert git(root, "log", "-1", "--format=%s", oid) == "setup\n"
    assert "the agent's text" not in git(root, "log", "--all", "--format=%B")
    assert fsck(root).returncode == 0, fsck(root).stderr
    assert loose_objects_genuine(root) == []
    assert parse_plan(ws.plan_path).meta.tick_mode != "paused"  # all put back: the ticks go on
    assert [e.status for e in entries(ws)][-1] == "FAILED"  # T-1 attempted again (its agent exits 3)


def test_an_object_and_its_copy_rewritten_before_the_agent_kills_its_tick_stop_the_recovery_for_a_person(tmp_path):
    """Nothing valid to put back after the kill: the recovery names the object, the breaker pauses
    the plan (git error, the alert) and the task is not attempted again on top of that history."""
    from tests.core.scenarios.test_redteam_procs import _killed_then_recovered

    ws = _killed_then_recovered(tmp_path, "objects-copy")
    root = ws.root
    oid = git(root, "rev-list", "--max-parents=0", "HEAD").strip()
    (stale,) = [e for e in entries(ws) if e.status == "STALE"]
    assert f".git/objects/{oid[:2]}/{oid[2:]}, and Memento has no copy" in stale.field("Rollback"), \
        stale.field("Rollback")
    assert parse_plan(ws.plan_path).meta.tick_mode == "paused"
    assert f"git objects changed during T-1 could not be put back: .git/objects/{oid[:2]}/{oid[2:]}" in \
        (root / ".memento_alert").read_text()
    assert not [e for e in entries(ws) if e.status in ("SUCCESS", "FAILED")]  # T-1 not attempted again


def test_a_pack_rewritten_before_the_agent_kills_its_tick_is_put_back_by_the_recovery(tmp_path):
    """The killed tick's print of the store, kept beside its record, is what the recovery judges
    the store by: a pack rewritten in place (its trailer kept) is put back from Memento's copy,
    which re-hashing the loose objects alone would never see."""
    from tests.core.scenarios.test_engine import make_ws
    from tests.core.scenarios.test_redteam_procs import cron_tick

    ws = make_ws(tmp_path, agent("kills_its_tick.py", "pack", str(tmp_path / "once")))
    root = ws.root
    git(root, "repack", "-adq")
    (pack,) = (root / ".git" / "objects" / "pack").glob("*.pack")
    original = pack.read_bytes()
    log = git(root, "log", "--format=%H %s")
    assert cron_tick(root).returncode == -9
    assert pack.read_bytes() != original  # the agent's bytes, as the killed tick left them
    recovered = cron_tick(root)
    assert recovered.returncode in (0, 1) and "Traceback" not in recovered.stderr, recovered.stderr
    (stale,) = [e for e in entries(ws) if e.status == "STALE"]
    assert f"rewrote or removed .git/objects/pack/{pack.name} (put back from Memento's copy)" in \
        stale.field("Rollback"), stale.field("Rollback")
    assert pack.read_bytes() == original
    assert fsck(root).returncode == 0, fsck(root).stderr
    assert git(root, "log", "--format=%H %s").endswith(log)
    assert not list((ws.project_memento_dir / "records").glob("T-1.*"))  # the record and its copies gone
    assert parse_plan(ws.plan_path).meta.tick_mode != "paused"


def test_the_pack_a_tick_makes_of_its_loose_objects_is_guarded_like_any(tmp_path, monkeypatch):
    """Housekeeping packs the loose objects once an attempt found LOOSE_LIMIT of them (5 here):
    after the first tick none is loose, each object is still there and the history reads as
    before; the next attempt's agent rewrites bytes of that pack in place, and it is put back."""
    from memento_core.git import objects as git_objects

    monkeypatch.setattr(git_objects, "LOOSE_LIMIT", 5)
    ws = persons_history(tmp_path, agent("does_task.py", "hello.txt", "done"))
    root = ws.root
    before, persons = history(root), set(git(root, "cat-file", "--batch-all-objects", "--batch-check").split("\n"))
    assert run_tick(root).results[0].passed
    log = (root / entries(ws)[-1].log_path).read_text()
    assert "[memento] packed the repository's" in log and "loose objects (git repack --geometric=2 -d)" in log
    assert list((root / ".git" / "objects").glob("[0-9a-f][0-9a-f]/*")) == []
    (pack,) = (root / ".git" / "objects" / "pack").glob("*.pack")
    assert persons <= set(git(root, "cat-file", "--batch-all-objects", "--batch-check").split("\n"))
    assert history(root) == before and fsck(root).returncode == 0, fsck(root).stderr

    ws.plan_path.write_text(ws.plan_path.read_text() + (
        "- [ ] `T-2` [MODULE:hello] Write more hello\n  - verify: `sh check.sh`\n  - context_files: [hello.txt]\n"
        "  - retries: 0\n"))
    text = ws.config_path.read_text().replace(agent("does_task.py", "hello.txt", "done"),
                                              agent("rewrites_git_objects.py", "pack"))
    ws.config_path.write_text(text)
    git(root, "commit", "-qam", "T-2, and another agent")
    packed = pack.read_bytes()
    (result,) = run_tick(root).results
    assert not result.passed and f".git/objects/pack/{pack.name}" in result.reason, result.reason
    assert pack.read_bytes() == packed
    assert fsck(root).returncode == 0, fsck(root).stderr
    assert history(root) == before
