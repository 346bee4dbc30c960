"""The architect's rules on values (tick/architect/changes.py): two plans, two notes files in, changes out."""

from __future__ import annotations

from memento_core.notes import parse_notes_text
from memento_core.plan.scan import parse_plan_text
from memento_core.tick.architect.changes import compare_notes, compare_plans

BASE = """# MASTER_PLAN: t

## Meta
- tick_mode: auto
- max_retries: 2

## Phase 1: One
<!-- depends: none -->

- [!] `T-1` Blocked one
  - verify: `false`
  - context_files: [a.txt]
  - retries: 2

- [x] `T-2` Done one
  - verify: `true`
  - context_files: [b.txt]
"""


def compare(new: str):
    return compare_plans(parse_plan_text(BASE), parse_plan_text(new))


def test_a_repair_is_an_edit_and_a_reset_and_breaks_no_rule():
    new = BASE.replace("- [!] `T-1`", "- [ ] `T-1`").replace("`false`", "`true`").replace("  - retries: 2", "  - retries: 0")
    changes = compare(new)
    assert changes.violations == () and changes.edited == ("T-1",) and changes.reset == ("T-1",)
    assert changes.parts() == ["edited T-1", "reset T-1"]


def test_a_reset_of_a_task_it_did_not_change_is_a_violation():
    changes = compare(BASE.replace("- [!] `T-1`", "- [ ] `T-1`"))
    assert changes.edited == () and changes.reset == ("T-1",)
    assert changes.violations == ("reset T-1 without changing it (repair a task before resetting it; "
                                  "a person retries one as it is with `memento reset`)",)
    # Its retries written as well make no difference: the definition is what counts.
    again = compare(BASE.replace("- [!] `T-1`", "- [ ] `T-1`").replace("  - retries: 2", "  - retries: 0"))
    assert len(again.violations) == 1 and again.violations[0].startswith("reset T-1 without changing it")


def test_retries_on_a_task_it_does_not_reset_are_refused():
    blocked = BASE.replace("  - retries: 2", "  - retries: 0")  # T-1 stays [!]
    assert compare(blocked).violations == ("changed T-1's retries (Memento counts them; only a reset sets "
                                           "them to 0)",)
    added = BASE + "\n- [ ] `T-3` New one\n  - verify: `true`\n  - context_files: [c.txt]\n  - retries: 5\n"
    assert compare(added).violations == ("gave the new task T-3 retries: 5 (a new task starts at 0)",)
    fresh = added.replace("  - retries: 5\n", "  - retries: 0\n")
    assert compare(fresh).violations == () and compare(fresh).added == ("T-3",)


def test_changing_only_a_done_tasks_retries_is_a_violation():
    done = BASE.replace("  - context_files: [b.txt]\n", "  - context_files: [b.txt]\n  - retries: 3\n")
    changes = compare(done)
    assert changes.violations == ("changed T-2, which is done (a done task stays as it is)",)
    assert changes.edited == ()  # its definition is the same: only the retries say it changed


def test_the_meta_limits_are_not_the_architects():
    for key, line in (("max_retries", "- max_retries: 9\n"), ("max_diff_lines", "- max_diff_lines: 99999\n")):
        new = BASE.replace("- max_retries: 2\n", "- max_retries: 2\n" + line) if key != "max_retries" \
            else BASE.replace("- max_retries: 2\n", line)
        assert f"changed the Meta limit {key} (a person sets the pipeline's limits)" in compare(new).violations


def test_each_rule():
    cases = {
        "marked T-1 [x]": BASE.replace("- [!] `T-1`", "- [x] `T-1`"),
        "changed T-2, which is done": BASE.replace("Done one", "Done one, renamed"),
        "deleted the task line of T-2": BASE.split("- [x] `T-2`")[0],
        "skipped T-1 without a `reason:`": BASE.replace("- [!] `T-1`", "- [-] `T-1`"),
        "the new plan does not lint": BASE.replace("  - verify: `false`\n", ""),
        "appears 2 times": BASE + "\n- [ ] `T-1` Again\n  - verify: `true`\n  - context_files: [c.txt]\n",
        "changed tick_mode from auto to paused": BASE.replace("tick_mode: auto", "tick_mode: paused"),
        "marked T-3 [~]": BASE + "\n- [~] `T-3` New\n  - verify: `true`\n  - context_files: [c.txt]\n",
    }
    for said, new in cases.items():
        violations = compare(new).violations
        assert any(said in v for v in violations), (said, violations)


def test_a_skip_with_a_reason_and_new_tasks_are_a_split():
    new = BASE.replace("- [!] `T-1` Blocked one", "- [-] `T-1` Blocked one").replace(
        "  - retries: 2\n", "  - retries: 2\n  - reason: split into T-3\n")
    new += "\n- [ ] `T-3` Half\n  - verify: `true`\n  - context_files: [a.txt]\n"
    changes = compare(new)
    assert changes.violations == () and changes.skipped == ("T-1",) and changes.added == ("T-3",)
    assert changes.edited == ()  # the reason is the skip's, not an edit


NOTES = """# HUMAN NOTES

## Active Notes

### [NOTE] 2026-01-01T10:00:00Z → T-1
use lower case

### [NOTE:READ] 2026-01-01T09:00:00Z → global
old one

## Archive
"""


def test_marking_a_note_read_is_acting_on_it():
    new = NOTES.replace("### [NOTE] 2026", "### [NOTE:READ] 2026")
    found = compare_notes(NOTES.encode(), new.encode(), frozenset())
    assert found.violations == () and found.acted_text == ("T-1: use lower case",)


def test_any_other_change_to_the_notes_is_a_violation():
    forged_key = next(n.key for n in parse_notes_text(NOTES + "\n### [NOTE] 2026-01-02T00:00:00Z → T-1\nhi\n")
                      if n.text == "hi")
    cases = {
        "removed or rewrote 1 note(s)": NOTES.replace("use lower case", "use UPPER case"),
        "wrote 1 note(s)": NOTES.replace("## Archive", "### [NOTE] 2026-01-02T00:00:00Z → T-1\nhi\n\n## Archive"),
        "marked 1 read note(s) unread": NOTES.replace("[NOTE:READ] 2026-01-01T09", "[NOTE] 2026-01-01T09"),
    }
    for said, new in cases.items():
        found = compare_notes(NOTES.encode(), new.encode(), frozenset())
        assert any(said in v for v in found.violations), (said, found.violations)
    # A note a person added through `memento note` meanwhile is not the architect's.
    added = NOTES.replace("## Archive", "### [NOTE] 2026-01-02T00:00:00Z → T-1\nhi\n\n## Archive")
    assert compare_notes(NOTES.encode(), added.encode(), frozenset({forged_key})).violations == ()
