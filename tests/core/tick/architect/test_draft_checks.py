"""architect/draft_checks.py (SPEC §17): a draft may only add. A new task is born `[ ]` with no
retries; an existing task, phase or Meta key stays as it was; a draft that adds nothing is no
draft; lint errors the plan did not have before are the draft's. Plans parsed from real text."""

from __future__ import annotations

from memento_core.plan.scan import parse_plan_text
from memento_core.tick.architect.draft_checks import check_draft
from tests.core.scenarios.test_engine import HELLO, plan_text

OLD = plan_text(HELLO + "\n- [x] `T-2` Done\n  - verify: `true`\n  - context_files: [two.txt]\n")
NEW_TASK = "\n- [ ] `T-3` New\n  - verify: `test -f three.txt`\n  - context_files: [three.txt]\n"


def _check(new_text: str, tmp_path):
    return check_draft(parse_plan_text(OLD), OLD, parse_plan_text(new_text), new_text, root=tmp_path)


def test_a_draft_that_only_adds_a_task_is_kept(tmp_path):
    got = _check(OLD.rstrip("\n") + "\n" + NEW_TASK, tmp_path)
    assert got.new_ids == ("T-3",) and got.reasons == ()


def test_a_draft_that_adds_nothing_or_rewrites_done_work_or_meta_is_refused(tmp_path):
    assert _check(OLD, tmp_path).reasons == ("the draft adds no task",)
    rewritten = OLD.replace("- [x] `T-2` Done\n  - verify: `true`", "- [x] `T-2` Done\n  - verify: `false`")
    [reason] = _check(rewritten.rstrip("\n") + "\n" + NEW_TASK, tmp_path).reasons
    assert "T-2's definition changed (it is done: done work is never rewritten)" in reason
    meta = OLD.replace("- max_retries: 3", "- max_retries: 9")
    [reason] = _check(meta.rstrip("\n") + "\n" + NEW_TASK, tmp_path).reasons
    assert "the Meta limit max_retries changed" in reason
    gone = OLD.replace("- [x] `T-2` Done\n  - verify: `true`\n  - context_files: [two.txt]\n", "")
    assert any("T-2 was deleted" in r for r in _check(gone.rstrip("\n") + "\n" + NEW_TASK, tmp_path).reasons)


def test_a_new_task_is_born_pending_with_no_retries(tmp_path):
    born = NEW_TASK.replace("- [ ] `T-3`", "- [x] `T-3`").replace("[three.txt]\n", "[three.txt]\n  - retries: 2\n")
    reasons = _check(OLD.rstrip("\n") + "\n" + born, tmp_path).reasons
    assert any("T-3 is born [x] (only a passing verify marks a task done)" in r for r in reasons)
    assert any("T-3 is born with retries: 2 (a new task starts at 0)" in r for r in reasons)


def test_a_lint_error_the_plan_already_had_is_not_the_drafts(tmp_path):
    broken = OLD.replace("  - verify: `true`\n", "")  # T-2 without a verify: a person's line
    new_broken = NEW_TASK.replace("  - verify: `test -f three.txt`\n", "")
    got = check_draft(parse_plan_text(broken), broken, parse_plan_text(broken + new_broken),
                      broken + new_broken, root=tmp_path)
    assert [r for r in got.reasons if "T-2" in r] == [] and any("T-3" in r for r in got.reasons), got.reasons
