"""The guards of SPEC §4 step 11 on values: a snapshot and what was observed in, reasons out."""

from __future__ import annotations

from dataclasses import replace

from memento_core.git.changes import FileChange
from memento_core.git.state import GitState
from memento_core.plan.scan import parse_plan_text
from memento_core.receipts import NO_RECEIPTS, Receipts
from memento_core.tick.guards import (
    Observed,
    Snapshot,
    changed_during_verify,
    check,
    git_damage,
    history_damage,
    is_own_temp,
    notes_damage,
    own_definition_change,
    plan_damage,
    task_change,
)

PLAN = """# MASTER_PLAN: t

## Meta
- max_diff_lines: 50

## Phase 1: One

- [~] T-1 First task
  - verify: `true`
  - context_files: [src/, tests/test_a.py]
  - guard_files: [src/settings.py]
  - retries: 0
- [ ] T-2 Second task
  - verify: `true`
  - context_files: [other/]
"""
PLAN_BYTES = PLAN.encode()
TASK = parse_plan_text(PLAN).task("T-1")
STATUS = b"# TICK STATUS\n\n## [2026-01-01T00:00:00Z] Tick #1\n- **Task**: T-0\n"
SNAP = Snapshot(base="abc", untracked=frozenset(), plan=PLAN_BYTES, project_map=b"# map\n",
                status=STATUS, notes=b"", note_keys=frozenset({"n1", "n2"}), cleanignore=())


def seen(*changes: FileChange, **overrides) -> Observed:
    values = dict(folded=0, changes=changes, plan=PLAN_BYTES, project_map=b"# map\n", status=STATUS,
                  note_keys=frozenset({"n1", "n2"}))
    values.update(overrides)
    return Observed(**values)


def change(path: str, added: int = 1, removed: int = 0, kind: str = "modified") -> FileChange:
    return FileChange(path, added, removed, kind)


def test_a_change_inside_context_files_passes_and_is_the_task_change():
    verdict = check(TASK, SNAP, seen(change("src/a.py"), change("tests/test_a.py", kind="created")), 50)
    assert verdict.reasons == ()
    assert [c.path for c in verdict.touched] == ["src/a.py", "tests/test_a.py"]


def test_files_outside_context_files_are_named():
    verdict = check(TASK, SNAP, seen(change("src/a.py"), change("README.md"), change("other/x.py")), 50)
    assert verdict.reasons == ("changed files outside context_files: README.md, other/x.py",)


def test_a_guard_file_is_a_failure_even_inside_context_files():
    verdict = check(TASK, SNAP, seen(change("src/settings.py")), 50)
    assert verdict.reasons == ("guard file changed: src/settings.py",)
    after = check(TASK, SNAP, seen(change("src/settings.py")), 50, after_verify=True)
    assert after.reasons == ("verify changed a guard file changed: src/settings.py",)


def test_the_agents_own_commits_are_reported():
    verdict = check(TASK, SNAP, seen(change("src/a.py"), folded=2), 50)
    assert verdict.reasons[0].startswith("the agent made 2 commit(s) of its own")


def test_diff_size_counts_added_and_removed_lines_of_the_task_change_only():
    ok = check(TASK, SNAP, seen(change("src/a.py", 30, 20), change("docs/TICK_STATUS.md", 500)), 50)
    assert ok.reasons == ()
    big = check(TASK, SNAP, seen(change("src/a.py", 30, 21)), 50)
    assert big.reasons == ("diff too large: 51 lines > max_diff_lines 50 (possible full-file rewrite)",)


def test_project_map_edits_are_refused_and_so_is_a_missing_map_made_by_the_agent():
    edited = check(TASK, SNAP, seen(change("docs/PROJECT_MAP.md"), project_map=b"# mine\n"), 50)
    assert edited.reasons == ("the agent edited docs/PROJECT_MAP.md (the worker only reads it)",)
    no_map = replace(SNAP, project_map=None)
    made = check(TASK, no_map, seen(change("docs/PROJECT_MAP.md"), project_map=b"# new\n"), 50)
    assert made.reasons == ("the agent changed Memento's own files: docs/PROJECT_MAP.md (never a task's, "
                            "whatever its context_files say)",)


def test_memento_files_are_never_a_tasks_change_whatever_context_files_say():
    wide = "context_files: [src/, docs/*, scripts/*, memento.toml, notes/, .memento_ignore]"
    task = parse_plan_text(PLAN.replace("context_files: [src/, tests/test_a.py]", wide)).task("T-1")
    archive = replace(SNAP, archive_dir="notes/archive/")
    ours = ["memento.toml", "scripts/tick_worker_system_prompt.md", "scripts/review_system_prompt.md",
            "scripts/plan_system_prompt.md", ".memento_ignore", "notes/archive/2026.md"]
    verdict = check(task, archive, seen(*(change(p) for p in ours)), 50)
    assert verdict.reasons == ("the agent changed Memento's own files: " + ", ".join(ours)
                               + " (never a task's, whatever its context_files say)",)
    projects = ["docs/index.rst", "scripts/build.sh", "notes/todo.md", "src/a.py"]
    assert check(task, archive, seen(*(change(p) for p in projects)), 50).reasons == ()


def test_memento_files_the_agent_made_or_swapped_are_named_once():
    verdict = check(TASK, SNAP, seen(change("docs/PROJECT_MAP.md"), impostors=("docs/PROJECT_MAP.md",)), 50)
    assert verdict.reasons == ("the agent made Memento's own files (absent before, or now not a regular file): "
                               "docs/PROJECT_MAP.md (removed)",)


def test_the_running_tasks_definition_is_guarded_and_other_tasks_change_only_through_memento():
    own = PLAN.replace("- verify: `true`\n  - context_files: [src/", "- verify: `exit 0`\n  - context_files: [src/", 1)
    assert check(TASK, SNAP, seen(plan=own.encode()), 50).reasons == (
        "the agent edited the definition of T-1 in docs/MASTER_PLAN.md",)
    # SPEC §13: without a sandbox an edit by hand during the run may be the agent's.
    other = PLAN.replace("context_files: [other/]", "context_files: [/]").replace("- [ ] T-2", "- [x] T-2")
    other = other.replace("max_diff_lines: 50", "max_diff_lines: 1000000")
    assert check(TASK, SNAP, seen(plan=other.encode()), 50).reasons == (
        "the agent changed Meta max_diff_lines; marked T-2 [x]; edited the definition of T-2 in "
        "docs/MASTER_PLAN.md (a person's `memento skip`, `reset`, `pause` from outside the run are kept)",)
    skipped = PLAN.replace("- [ ] T-2", "- [-] T-2").replace("context_files: [other/]", "context_files: [other/]\n  - reason: not needed")
    # `memento skip T-2` from outside the run: its receipt covers it, nothing else does (SPEC §13).
    assert plan_damage(PLAN_BYTES, skipped.encode(), "T-1", Receipts(skips=frozenset({("T-2", "not needed")}))) == ""
    assert plan_damage(PLAN_BYTES, skipped.encode(), "T-1", NO_RECEIPTS) == "marked T-2 [-]; changed reason of T-2"
    assert plan_damage(PLAN_BYTES, skipped.encode(), "T-1", Receipts(skips=frozenset({("T-2", "other")}))) == (
        "marked T-2 [-]; changed reason of T-2")
    for status in " -!~":
        marked = PLAN.replace("- [ ] T-2", "- [x] T-2")
        assert plan_damage(marked.encode(), marked.replace("- [x] T-2", f"- [{status}] T-2").encode(), "T-1",
                           NO_RECEIPTS) == f"marked T-2 [{status}]"
    reset = PLAN.replace("- [ ] T-2 Second task", "- [!] T-2 Second task").replace(
        "context_files: [other/]", "context_files: [other/]\n  - retries: 3")
    after = reset.replace("- [!] T-2", "- [ ] T-2").replace("retries: 3", "retries: 0")
    assert plan_damage(reset.encode(), after.encode(), "T-1", Receipts(resets=frozenset({"T-2"}))) == ""
    assert plan_damage(reset.encode(), after.encode(), "T-1", NO_RECEIPTS) == "marked T-2 [ ]; changed retries of T-2"
    hidden = reset.replace("retries: 3", "retries: 99")  # never picked again, without a status change
    assert plan_damage(reset.encode(), hidden.encode(), "T-1", Receipts(resets=frozenset({"T-2"}))) == (
        "changed retries of T-2")
    paused = PLAN.replace("- max_diff_lines: 50", "- max_diff_lines: 50\n- tick_mode: paused")
    assert plan_damage(PLAN_BYTES, paused.encode(), "T-1", NO_RECEIPTS) == "changed Meta tick_mode"
    assert plan_damage(PLAN_BYTES, paused.encode(), "T-1", Receipts(modes=frozenset({"paused"}))) == ""
    retries = PLAN.replace("- retries: 0", "- retries: 1")  # Memento's own field
    assert own_definition_change(PLAN_BYTES, retries.encode(), "T-1") == ""
    assert own_definition_change(PLAN_BYTES, PLAN_BYTES, "T-1") == ""  # a str, as its callers join them
    assert own_definition_change(PLAN_BYTES, None, "T-1") == "deleted the plan"
    gone = PLAN.replace("- [~] T-1 First task", "- [~] First task")
    assert own_definition_change(PLAN_BYTES, gone.encode(), "T-1") == "removed or broke the definition of T-1"


def test_history_damage_status_log_rewritten_or_notes_removed():
    assert history_damage(SNAP, STATUS + b"\n\n", frozenset({"n1", "n2", "n3"})) == ""
    # Only the tick appends, and not while the agent runs (SPEC §13: no forged entry).
    assert history_damage(SNAP, STATUS + b"\n---\nmore\n", SNAP.note_keys).startswith("wrote into docs/TICK_STATUS.md")
    assert history_damage(SNAP, b"# TICK STATUS\n", SNAP.note_keys).startswith("rewrote docs/TICK_STATUS.md")
    assert history_damage(SNAP, STATUS, frozenset({"n1"})) == "removed 1 note(s) from docs/HUMAN_NOTES.md"
    assert history_damage(SNAP, STATUS, None) == "made docs/HUMAN_NOTES.md unreadable"
    verdict = check(TASK, SNAP, seen(note_keys=frozenset()), 50)
    assert verdict.reasons == ("the agent removed 2 note(s) from docs/HUMAN_NOTES.md",)


def test_memento_documents_and_their_temp_files_are_not_the_task_change():
    changes = (change("docs/MASTER_PLAN.md"), change("docs/HUMAN_NOTES.md"),
               change("docs/.HUMAN_NOTES.md.t6o2uw1d.tmp", kind="created"), change("src/a.py"))
    assert [c.path for c in task_change(changes)] == ["src/a.py"]
    assert check(TASK, SNAP, seen(*changes), 50).reasons == ()
    assert is_own_temp("docs/.MASTER_PLAN.md.abc.tmp")
    assert not is_own_temp("src/.MASTER_PLAN.md.abc.tmp")  # same name, not Memento's folder
    assert not is_own_temp("docs/.MASTER_PLAN.md.abc")


def test_every_reason_is_reported_together_in_order():
    verdict = check(TASK, SNAP, seen(change("src/settings.py"), change("README.md", 100), folded=1,
                                     project_map=b"x", note_keys=frozenset()), 50)
    assert [r.split(" ")[0:3] for r in verdict.reasons] == [
        ["the", "agent", "made"], ["the", "agent", "edited"], ["the", "agent", "removed"],
        ["guard", "file", "changed:"], ["changed", "files", "outside"], ["diff", "too", "large:"]]
    assert verdict.reason == "; ".join(verdict.reasons)


# ---------------------------------------------------------------- git's own state (SPEC §13)

GIT = GitState(head="ref: refs/heads/main",
               refs={"refs/heads/main": "a" * 40, "refs/heads/feature": "b" * 40, "refs/tags/v1": "c" * 40,
                     "refs/stash": "d" * 40},
               files={"config": (0o100644, b"[core]\n"), "hooks": (0o040000, b""),
                      "hooks/pre-push": (0o100755, b"#!/bin/sh\n")})


def test_the_agents_commits_on_heads_branch_are_not_git_damage():
    moved = replace(GIT, refs={**GIT.refs, "refs/heads/main": "e" * 40})
    assert git_damage(GIT, moved) == ""
    assert git_damage(GIT, replace(GIT, index=b"other", stash_log=b"x")) == ""  # restored, never compared


def test_every_kind_of_git_damage_is_named():
    refs = {k: v for k, v in GIT.refs.items() if k != "refs/tags/v1"}
    refs.update({"refs/heads/x": "f" * 40, "refs/stash": "0" * 40})
    files = {**GIT.files, "hooks/pre-commit": (0o100755, b"evil"), "config": (0o100644, b"[core]\nhooksPath=/x\n")}
    del files["hooks/pre-push"]
    damage = git_damage(GIT, GitState(head="ref: refs/heads/x", refs=refs, files=files))
    assert damage == ("moved HEAD from refs/heads/main to refs/heads/x; deleted refs/tags/v1; created refs/heads/x; "
                      "moved refs/stash; wrote .git/config, .git/hooks/pre-commit, .git/hooks/pre-push")
    assert git_damage(GIT, replace(GIT, head="1234567" + "0" * 33)) == "moved HEAD from refs/heads/main to 1234567"


def test_git_damage_is_a_guard_failure():
    snap = replace(SNAP, git=GIT)
    verdict = check(TASK, snap, seen(git=replace(GIT, files={})), 50)
    assert verdict.reasons == ("the agent changed git's own state: wrote .git/config, .git/hooks, "
                               ".git/hooks/pre-push (restored)",)


def test_mementos_own_log_lines_are_not_the_commands_output():
    from memento_core.tick.record import last_line, tail_lines

    log = "E   assert 1 == 2\n\n[memento] stopped 1 process(es) that had left group 1400: 1401\n"
    assert last_line(log) == "E   assert 1 == 2"
    assert tail_lines(log) == "E   assert 1 == 2"


def test_confined_the_plans_other_tasks_and_the_notes_are_a_persons_but_the_own_task_and_status_are_not():
    """In the sandbox docs/ is read-only to the agent: a change there during the run is a person's."""
    other = PLAN.replace("context_files: [other/]", "context_files: [/]").replace("- [ ] T-2", "- [x] T-2")
    other = other.replace("max_diff_lines: 50", "max_diff_lines: 1000000")
    notes = b"### [NOTE] 2026-12-01T09:00:00 \xe2\x86\x92 T-2\nby hand\n"
    hand = seen(FileChange("src/a.py", 1, 0, "modified"), plan=other.encode(), notes=notes,
                note_keys=frozenset({"n1"}))
    assert check(TASK, SNAP, hand, 50).reasons  # unconfined: it may be the agent's
    assert check(TASK, SNAP, hand, 50, confined=True).reasons == ()
    own = PLAN.replace("- verify: `true`\n  - context_files: [src/", "- verify: `exit 0`\n  - context_files: [src/", 1)
    assert check(TASK, SNAP, seen(plan=own.encode()), 50, confined=True).reasons == (
        "the agent edited the definition of T-1 in docs/MASTER_PLAN.md",)
    assert check(TASK, SNAP, seen(status=STATUS + b"\n---\nmore\n"), 50, confined=True).reasons == (
        "the agent wrote into docs/TICK_STATUS.md (only Memento appends to it)",)


def test_an_attempt_that_changed_nothing_fails_and_says_what_to_do():
    """A real project's verify (its whole suite) passes before any work: no change is no work."""
    (reason,) = check(TASK, SNAP, seen(), 50).reasons
    assert reason.startswith("nothing changed: the attempt left every file as it was")
    assert "memento skip T-1" in reason and "`- changes: none`" in reason
    # What only Memento's documents, their temp files or a tool's scratch hold is no change either.
    made = (FileChange("docs/TICK_STATUS.md", 3, 0, "modified"), FileChange("docs/.MASTER_PLAN.md.x1.tmp", 1, 0, "created"),
            FileChange("tests/__pycache__/test_a.cpython-311-pytest-8.4.2.pyc.5", 0, 0, "created", scratch=True))
    assert check(TASK, SNAP, seen(*made), 50).reasons == (reason,)
    # A change, commits of its own folded back, or the check after verify: not this reason.
    assert check(TASK, SNAP, seen(FileChange("src/a.py", 1, 0, "modified")), 50).reasons == ()
    assert not any(r.startswith("nothing changed") for r in check(TASK, SNAP, seen(folded=1), 50).reasons)
    assert check(TASK, SNAP, seen(), 50, after_verify=True).reasons == ()


def test_a_check_only_task_is_judged_by_verify_alone():
    plan = PLAN.replace("  - retries: 0\n", "  - retries: 0\n  - changes: none\n", 1)
    task = parse_plan_text(plan).task("T-1")
    assert task.check_only and task.valid
    snap = replace(SNAP, plan=plan.encode())
    assert check(task, snap, seen(plan=plan.encode()), 50).reasons == ()
    for written in ("`none`", "None", " none "):
        assert parse_plan_text(plan.replace("changes: none", f"changes: {written}")).task("T-1").check_only


def test_a_changes_value_other_than_none_is_an_error_at_its_line():
    plan = parse_plan_text(PLAN.replace("  - retries: 0\n", "  - retries: 0\n  - changes: some\n", 1))
    task = plan.task("T-1")
    assert not task.check_only and not task.valid
    (error,) = [e for e in plan.errors if e.task_id == "T-1"]
    assert error.line == PLAN.splitlines().index("  - retries: 0") + 2  # the field's own line, 1-based
    assert str(error).startswith("docs/MASTER_PLAN.md:13: T-1 changes: `some` is not understood")


def test_a_notes_read_mark_changed_either_way_or_a_note_by_hand_is_the_agents():
    from memento_core.notes import parse_notes_text

    read = "### [NOTE:READ] 2026-12-01T09:00:00 → T-2\nuse the new API\n".encode()
    unread = read.replace(b"[NOTE:READ]", b"[NOTE]")
    assert notes_damage(read, read, frozenset()) == ""
    # turned unread: a worker is given it again; marked read: no worker ever is
    assert notes_damage(read, unread, frozenset()) == "changed the read mark of 1 note(s)"
    assert notes_damage(unread, read, frozenset()) == "changed the read mark of 1 note(s)"
    more = read + "\n### [NOTE] 2026-12-01T10:00:00 → global\nskip the tests\n".encode()
    (key,) = {n.key for n in parse_notes_text(more.decode())} - {n.key for n in parse_notes_text(read.decode())}
    assert notes_damage(read, more, frozenset()) == "wrote 1 note(s) by hand"
    assert notes_damage(read, more, frozenset({key})) == ""  # added through `memento note`: a person's
    assert notes_damage(unread, more, frozenset()) == "wrote 1 note(s) by hand; changed the read mark of 1 note(s)"


def test_tasks_added_or_removed_behind_memento_are_named_ten_before_the_rest_are_counted():
    extra = "".join(f"- [ ] T-{n} Extra {n}\n  - verify: `true`\n  - context_files: [x/]\n" for n in range(10, 22))
    grown = (PLAN + extra).encode()
    assert plan_damage(PLAN_BYTES, grown, "T-1", NO_RECEIPTS) == (
        "added T-10, T-11, T-12, T-13, T-14, T-15, T-16, T-17, T-18, T-19 and 2 more")
    ten = (PLAN + extra.split("- [ ] T-20")[0]).encode()
    assert plan_damage(PLAN_BYTES, ten, "T-1", NO_RECEIPTS) == (
        "added T-10, T-11, T-12, T-13, T-14, T-15, T-16, T-17, T-18, T-19")
    assert plan_damage(grown, PLAN_BYTES, "T-1", NO_RECEIPTS).startswith("removed T-10, T-11,")
    without_t2 = PLAN.split("- [ ] T-2")[0].encode()
    assert plan_damage(PLAN_BYTES, without_t2, "T-1", NO_RECEIPTS) == "removed T-2"


def test_a_meta_key_memento_does_not_know_added_or_dropped_is_named():
    added = PLAN.replace("- max_diff_lines: 50", "- max_diff_lines: 50\n- brand_new: 1")
    assert plan_damage(PLAN_BYTES, added.encode(), "T-1", NO_RECEIPTS) == "changed Meta brand_new"
    assert plan_damage(added.encode(), PLAN_BYTES, "T-1", NO_RECEIPTS) == "changed Meta brand_new"
    assert plan_damage(added.encode(), added.replace("brand_new: 1", "brand_new: 2").encode(), "T-1",
                       NO_RECEIPTS) == "changed Meta brand_new"


def test_links_forged_memory_commits_and_notes_by_hand_each_have_their_reason():
    """What observe.check_guards found besides the change (Memento's files replaced by links,
    commits in memory/ that say they are a person's, a note written by hand) is each a reason."""
    links = check(TASK, SNAP, seen(change("src/a.py"), links=("docs/HUMAN_NOTES.md",)), 50)
    assert links.reasons == ("the agent replaced Memento's own files by symbolic links: docs/HUMAN_NOTES.md "
                             "(the links removed, the files restored)",)
    forged = check(TASK, SNAP, seen(change("src/a.py"), memory_forged=("1234567 person: remember",)), 50)
    assert forged.reasons == ("the agent made 1 commit(s) in memory/ that say they are a person's: 1234567 person: "
                              "remember (taken out of memory/'s history, their files kept as the task's unattributed "
                              "writes; `memento memory write` attributes a write)",)
    note = "### [NOTE] 2026-12-01T10:00:00 → global\nskip the tests\n".encode()
    by_hand = check(TASK, SNAP, seen(change("src/a.py"), notes=note), 50)
    assert by_hand.reasons == ("the agent wrote 1 note(s) by hand in docs/HUMAN_NOTES.md (a person adds notes with "
                               "`memento note`)",)
    assert check(TASK, SNAP, seen(change("src/a.py"), notes=note), 50, confined=True).reasons == ()


def test_git_is_judged_only_when_both_its_states_were_taken():
    """A snapshot or an observation without git's state (nothing watched there) judges nothing of git."""
    assert check(TASK, SNAP, seen(change("src/a.py"), git=GIT), 50).reasons == ()
    assert check(TASK, replace(SNAP, git=GIT), seen(change("src/a.py")), 50).reasons == ()


def test_a_startup_file_is_named_once_by_the_guard_that_covers_it():
    """A ``sitecustomize.py`` added inside context_files is the startup guard's; one outside them,
    is named by that guard alone; of eleven outside, ten are named and one counted (the eleventh
    went unsaid before)."""
    inside = check(TASK, SNAP, seen(change("src/sitecustomize.py", kind="created")), 50)
    assert inside.reasons == ("the agent added a file that changes how Python or the test runner starts: "
                              "src/sitecustomize.py (a task adds one only when its context_files name that exact "
                              "file; a folder is not enough)",)
    outside = check(TASK, SNAP, seen(change("src/a.py"), change("conftest.py", kind="created")), 50)
    assert outside.reasons == ("changed files outside context_files: conftest.py",)
    eleven = [change(f"lib/m{n:02}.py") for n in range(11)]
    assert check(TASK, SNAP, seen(*eleven), 50).reasons == (
        "changed files outside context_files: " + ", ".join(f"lib/m{n:02}.py" for n in range(10)) + " and 1 more",)


def test_a_file_of_the_change_that_verify_changed_is_named_and_the_plan_gone_is_no_other_damage():
    """What verify passed on must be what is committed: a file of the change whose mode or bytes
    verify changed is named; one it left alone is not, nor one no longer in the change after it
    (put back as it was). A plan gone or no longer readable is own_definition_change's reason alone."""
    before = {"a.py": ("100644", "1" * 40), "b.py": ("100644", "2" * 40), "back.py": ("100644", "3" * 40)}
    assert changed_during_verify(before, dict(before)) == ""
    after = {"a.py": ("100755", "1" * 40), "b.py": ("100644", "2" * 40), "new.py": ("100644", "4" * 40)}
    assert changed_during_verify(before, after) == (
        "changed while verify ran: a.py (what verify checked is not what is there now)")
    assert plan_damage(PLAN_BYTES, None, "T-1", NO_RECEIPTS) == ""
    assert check(TASK, SNAP, seen(change("src/a.py"), plan=None), 50).reasons == (
        "the agent deleted the plan in docs/MASTER_PLAN.md",)
    broken = b"\xff" + PLAN_BYTES  # no longer UTF-8: nothing of it can be judged task by task
    assert plan_damage(PLAN_BYTES, broken, "T-1", NO_RECEIPTS) == ""
    assert check(TASK, SNAP, seen(change("src/a.py"), plan=broken), 50).reasons == (
        "the agent removed or broke the definition of T-1 in docs/MASTER_PLAN.md",)
