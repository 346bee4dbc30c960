"""forge/reviews.py (SPEC §19 "Checks and review"): the review state of a pull request, and a change
request applied once — notes to the tasks it names, else to those whose context_files hold the
commented path, else to the whole phase; those tasks back to [ ] with their retries; a reviewer's
words defused and fenced. The tick following a pull request is judged in test_follow.py."""

from __future__ import annotations

from dataclasses import replace

from memento_core.forge import reviews
from memento_core.forge.github import GitHub, Token
from memento_core.notes import parse_notes
from memento_core.workspace import Workspace
from tests.core.forge.test_follow import LATER, REPO, make_project, notes_to, open_pull, plan_of
from tests.forge_standin import TOKEN


def review(rid: int, state: str, login: str = "ana", body: str = "") -> dict:
    return {"id": rid, "state": state, "user": {"login": login}, "body": body}


def test_each_reviewers_last_word_counts_and_a_change_request_wins():
    assert reviews.review_state([]) == "none"
    assert reviews.review_state([review(1, "COMMENTED")]) == "commented"
    assert reviews.review_state([review(1, "APPROVED"), review(2, "COMMENTED")]) == "approved"
    assert reviews.review_state([review(1, "CHANGES_REQUESTED"), review(2, "APPROVED")]) == "approved"
    assert reviews.review_state([review(1, "CHANGES_REQUESTED"), review(2, "DISMISSED")]) == "none"
    assert reviews.review_state([review(1, "APPROVED", "ana"), review(2, "CHANGES_REQUESTED", "bo")]) == \
        "changes_requested"


def test_a_reviewers_words_are_defused_and_fenced_longer_than_any_backtick_run_inside():
    assert reviews.defused("[x] <!-- a --> \x1b[2Jok\u202e") == "(x) ‹!-- a --› ok"
    assert reviews.fence("plain") == "```text\nplain\n```"
    assert reviews.fence("a ```` b ` c") == "`````text\na ```` b ` c\n`````"


def test_a_note_goes_to_the_tasks_named_else_those_holding_the_path_else_the_whole_phase(tmp_path, git_identity,
                                                                                         github):
    root = make_project(tmp_path, github, more=LATER.format(status="x"))
    ws, record = Workspace(root), open_pull(root)
    comments = [{"id": 11, "path": "src/api/routes.py", "line": 3, "body": "a typo here"},
                {"id": 12, "path": "README.md", "original_line": 1, "body": "and this file"},
                {"id": 13, "path": "src/store.py", "body": "   "}]  # no words: no note
    back = reviews.apply_one(ws, plan_of(root), record, review(7, "CHANGES_REQUESTED", "bo[t]", "T-3 and T-9: redo"),
                             comments)
    assert sorted(back) == ["T-1", "T-2", "T-3"]  # T-9 is named but not the phase's
    assert [len(notes_to(root, t)) for t in ("T-1", "T-2", "T-3", "T-9")] == [1, 2, 2, 0]
    (readme,) = notes_to(root, "T-1")
    assert readme.startswith("Changes requested on pull request #4 by bo(t) (review 7) on README.md line 1 "
                             "(comment 12). The reviewer wrote:")
    assert any("on src/api/routes.py line 3 (comment 11)" in n for n in notes_to(root, "T-2"))
    plan = plan_of(root)
    assert [(plan.task(t).status, plan.task(t).retries) for t in ("T-1", "T-2", "T-3", "T-9")] == \
        [(" ", 2), (" ", 1), (" ", 0), ("x", 0)]


def test_a_review_without_text_still_reaches_the_phase_and_a_phase_without_tasks_nothing(tmp_path, git_identity,
                                                                                        github):
    root = make_project(tmp_path, github)
    ws = Workspace(root)
    ws.plan_path.write_text(ws.plan_path.read_text().replace("- [x] T-3", "- [-] T-3"))  # skipped: left alone
    back = reviews.apply_one(ws, plan_of(root), open_pull(root), review(8, "CHANGES_REQUESTED"), [])
    assert back == ["T-1", "T-2"] and plan_of(root).task("T-3").status == "-"
    assert all("(the review has no text)" in notes_to(root, t)[0] for t in ("T-1", "T-2", "T-3"))
    elsewhere = replace(open_pull(root), phase="Phase 7")  # a phase the plan no longer has
    assert reviews.apply_one(ws, plan_of(root), elsewhere, review(9, "CHANGES_REQUESTED", body="T-1"), []) == []
    assert len(notes_to(root, "T-1")) == 1


def test_only_change_requests_not_applied_yet_are_applied_and_each_is_recorded(tmp_path, git_identity, github):
    root = make_project(tmp_path, github)
    ws = Workspace(root)
    asked: list[int] = []

    def comments_of(rid):
        asked.append(rid)
        return []

    found = [review(1, "APPROVED", body="T-1"), review(2, "CHANGES_REQUESTED", body="T-1 again"),
             {**review(3, "CHANGES_REQUESTED", body="T-2"), "id": "3"}, review(4, "CHANGES_REQUESTED", body="T-3")]
    record = open_pull(root, reviews_seen=(4,))
    done = reviews.apply_new(ws, plan_of(root), record, found, comments_of)
    assert done.reviews_seen == (4, 2) and asked == [2]
    assert [n.target for n in parse_notes(ws.notes_path)] == ["T-1"]


def test_a_change_request_applied_again_after_a_stop_writes_no_second_note(tmp_path, git_identity, github):
    project = make_project(tmp_path, github)
    rec = open_pull(project)
    github.review(4, "CHANGES_REQUESTED", "T-1 is wrong", comments=[("src/api/x.py", 2, "and this")])
    client = GitHub(github.api, Token(TOKEN), backoff=0.01)
    found = client.reviews(REPO, 4)
    for _ in range(2):  # the tick stopped after the notes, before the review's id was saved
        done = reviews.apply_new(Workspace(project), plan_of(project), rec, found,
                                 lambda rid: client.review_comments(REPO, 4, rid))
    assert len(done.reviews_seen) == 1
    assert len(notes_to(project, "T-1")) == 1 and len(notes_to(project, "T-2")) == 1
    assert plan_of(project).meta.completed_tasks == 1  # the plan's counters follow the tasks sent back
