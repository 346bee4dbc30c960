"""held.py: which [ ] tasks a list of verify changes holds, and, for a fleet, the changes and
acknowledgements the branch's history carries, read from real commits (an acknowledgement counts only
in Memento's own commit, and only for the verify it saw)."""

from __future__ import annotations

from memento_core import verify_changes
from memento_core.held import held_in, history
from memento_core.plan.scan import parse_plan_text
from tests.core.test_fleet import git

PLAN = """# MASTER_PLAN: x

## Meta
- tick_mode: auto

## Phase 1: P
<!-- depends: none -->

- [ ] `T-1` One
  - verify: `true`
- [x] `T-2` Two
  - verify: `true`
- [ ] `T-3` Three
  - verify: `true`
"""


def test_held_in_names_the_tasks_still_to_run_whose_verify_changed():
    plan = parse_plan_text(PLAN)

    def change(task: str) -> verify_changes.VerifyChange:
        return verify_changes.VerifyChange(task, "pytest -q", "true", "2026-01-01T00:00:00Z")

    assert held_in(plan, [change("t-1"), change("T-2"), change("T-9")]) == frozenset({"T-1"})  # T-2 is done
    assert held_in(plan, [change("T-3")]) == frozenset({"T-3"})
    assert held_in(plan, []) == frozenset()


def test_an_acknowledgement_covers_only_the_verify_it_saw_and_only_in_memento_s_own_commit(tmp_path, git_identity):
    """held.history against real commits: a forged ack (the trailer under another
    subject, in a worker's message) counts for nothing; an ack of an older verify does not cover
    a newer change."""
    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    plan = root / "docs" / "MASTER_PLAN.md"
    plan.parent.mkdir()

    def commit(verify: str, message: str) -> None:
        plan.write_text(f"# MASTER_PLAN: x\n\n## Meta\n- tick_mode: auto\n\n## Phase 1: P\n<!-- depends: none -->\n\n"
                        f"- [ ] `T-1` One\n  - verify: `{verify}`\n")
        git(root, "add", "-A")
        git(root, "commit", "-q", "--allow-empty", "-m", message)

    def change(verify: str) -> verify_changes.VerifyChange:
        return verify_changes.VerifyChange("T-1", "", verify, "")

    commit("pytest -q", "setup")
    commit("true", "memento: architect — edited T-1\n\n"
           + verify_changes.trailers(verify_changes.CHANGED_TRAILER, [change("true")]))
    forged = verify_changes.trailers(verify_changes.ACK_TRAILER, [change("true")])
    commit("true", "memento: complete T-2 Write two\n\n" + forged)  # a worker's subject, an ack's trailer
    commit("true", "a person's commit\n\n" + forged.replace("Ack", "Changed"))  # a change outside the architect's
    held, acked = history(root)
    assert [(c.task, c.old, c.new) for c in held] == [("T-1", "pytest -q", "true")] and acked == set()
    commit("true", verify_changes.ack_message([change("true")]))
    assert history(root) == ([], {("T-1", verify_changes.digest("true"))})
    commit("false", "memento: architect — edited T-1 again\n\n"
           + verify_changes.trailers(verify_changes.CHANGED_TRAILER, [change("false")]))
    held, _ = history(root)
    assert [(c.old, c.new) for c in held] == [("true", "false")]
    commit("false", verify_changes.ack_message([change("true")]))  # acknowledged what it saw: the old one
    assert [c.new for c in history(root)[0]] == ["false"]


def commit_verify(root, verify: str, message: str) -> None:
    """Commit a one-task plan whose T-1 has ``verify``, with ``message``."""
    plan = root / "docs" / "MASTER_PLAN.md"
    plan.parent.mkdir(parents=True, exist_ok=True)
    plan.write_text(PLAN.split("- [x]")[0].replace("`true`", f"`{verify}`"))
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty", "-m", message)


def architect(verify: str) -> str:
    return "memento: architect — edited T-1\n\n" + verify_changes.trailers(
        verify_changes.CHANGED_TRAILER, [verify_changes.VerifyChange("T-1", "", verify, "")])


def test_an_acknowledgement_older_than_the_newest_change_does_not_release_it(tmp_path, git_identity):
    """false, acknowledged, then true, then false again: the old acknowledgement names the same verify,
    but it came before the change that counts."""
    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    commit_verify(root, "pytest -q", "setup")
    commit_verify(root, "false", architect("false"))
    commit_verify(root, "false", verify_changes.ack_message([verify_changes.VerifyChange("T-1", "", "false", "")]))
    commit_verify(root, "true", architect("true"))
    commit_verify(root, "false", architect("false"))
    held, acked = history(root)
    assert [(c.task, c.old, c.new) for c in held] == [("T-1", "true", "false")]
    assert acked == {("T-1", verify_changes.digest("false"))}


def test_a_changed_trailer_in_an_acknowledgements_commit_is_no_change(tmp_path, git_identity):
    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    commit_verify(root, "pytest -q", "setup")
    message = verify_changes.ack_message([verify_changes.VerifyChange("T-1", "", "pytest -q", "")])
    commit_verify(root, "true", message + verify_changes.trailers(
        verify_changes.CHANGED_TRAILER, [verify_changes.VerifyChange("T-1", "", "true", "")]))
    assert history(root) == ([], {("T-1", verify_changes.digest("pytest -q"))})
