"""The acceptance gate (SPEC §16): fake reviewers through the `command` preset, real ticks, judged on disk and in git."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from memento_core import status_log
from memento_core.config.load import config_from_dict
from memento_core.errors import MementoError
from memento_core.plan.scan import parse_plan
from memento_core.scaffold import init_workspace
from memento_core.tick.__main__ import run_tick
from memento_core.tick.review_file import parse_review
from memento_core.workspace import Workspace
from tests.core.sandbox.test_sandbox import needs_bwrap

AGENTS = Path(__file__).resolve().parents[2] / "agents"
PY = sys.executable

CRITERIA = ("hello.txt says done", "no other file changes", "the file ends with a newline")


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def plan_text(*, accept=CRITERIA, max_retries: int = 3, parallel: bool = False, extra: str = "",
              meta: str = "") -> str:
    lines = "".join(f"  - accept: {c}\n" for c in accept)
    par = "<!-- parallel: true -->\n" if parallel else ""
    return f"""# MASTER_PLAN: review test

## Meta
- tick_mode: auto
- max_retries: {max_retries}
{meta}
## Phase 1: Only
<!-- depends: none -->
{par}
- [ ] `T-1` [MODULE:hello] Write hello
  - verify: `grep -q done hello.txt`
  - context_files: [hello.txt]
{extra}{lines}"""


def make_ws(tmp_path: Path, mode: str | None, *, max_rounds: int = 2, sandbox: str = "none",
            out: Path | None = None, workers: int = 1, review_extra: str = "", **plan_kw) -> tuple[Workspace, Path]:
    """A committed workspace: the worker keeps its prompts in OUT; ``mode`` is the reviewer's (None: no [review])."""
    root, out = tmp_path / "proj", out or tmp_path / "out"
    out.mkdir(parents=True, exist_ok=True)
    init_workspace(root, project="proj", commit=False)
    (root / "docs" / "MASTER_PLAN.md").write_text(plan_text(parallel=workers > 1, **plan_kw))
    toml = (f'[agent]\npreset = "command"\ncommand = "{PY} {AGENTS}/keeps_prompts.py {{prompt_file}} {out}"\n'
            'timeout = "20s"\n[verify]\ntimeout = "20s"\n'
            f'[sandbox]\nmode = "{sandbox}"\nwritable = ["{out}"]\n')
    if workers > 1:
        toml += f"[workers]\nmax = {workers}\n"
    if mode is not None:
        toml += (f'[review]\npreset = "command"\ncommand = "{PY} {AGENTS}/reviews.py {{prompt_file}} {out} {mode}"\n'
                 f'timeout = "20s"\nmax_rounds = {max_rounds}\n{review_extra}')
    (root / "memento.toml").write_text(toml)
    (root / "hello.txt").write_text("hello\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "setup")
    return Workspace(root), out


def task_entries(ws: Workspace) -> list:
    return [e for e in status_log.parse_status(ws.status_path) if e.task_id == "T-1" and not e.is_event]


def t1(ws: Workspace):
    return parse_plan(ws.plan_path).task("T-1")


def test_a_failed_review_fails_the_attempt_and_its_findings_reach_the_next_prompt(tmp_path, git_identity):
    ws, out = make_ws(tmp_path, "fail-once")
    run_tick(ws.root)
    task = t1(ws)
    assert (task.status, task.retries) == (" ", 1)
    assert (ws.root / "hello.txt").read_text() == "hello\n"  # the worker's work rolled back
    assert "memento: complete" not in git(ws.root, "log", "--format=%s")
    entry = task_entries(ws)[-1]
    assert entry.status == "FAILED"
    assert entry.field("Reason") == ("review: criterion 1 (hello.txt says done) not met: "
                                     "hello.txt says hello, not done")
    assert entry.field("Review") == "FAIL (2/3 criteria)"
    assert entry.field("Verify Output") == "`(no output)` (exit code 0)"
    # the reviewer was given the task, its numbered criteria and the diff
    review_prompt = (out / "review_prompt_1.md").read_text()
    assert "# Memento Acceptance Reviewer" in review_prompt  # the system prompt, from the commit
    for n, c in enumerate(CRITERIA, 1):
        assert f"{n}. {c}" in review_prompt
    assert "-hello\n+done" in review_prompt and "`grep -q done hello.txt` exited 0" in review_prompt

    run_tick(ws.root)
    worker_prompt = (out / "worker_prompt_2.md").read_text()
    assert "The acceptance review of the last attempt of T-1 failed" in worker_prompt
    assert "- [FAIL] 1: hello.txt says done — hello.txt says hello, not done" in worker_prompt
    assert "review: criterion 1" in worker_prompt  # and in the failed attempts, as their reason
    assert t1(ws).status == "x"
    assert git(ws.root, "log", "-1", "--format=%s").startswith("memento: complete T-1")
    assert git(ws.root, "show", "HEAD:hello.txt") == "done\n"  # exactly what verify checked
    assert task_entries(ws)[-1].field("Review") == "PASS (3/3 criteria)"
    assert "- **Review**: PASS (3/3 criteria)" in ws.status_path.read_text()
    assert not (ws.memento_dir / "reviews" / "T-1.md").exists()


def test_max_rounds_of_failed_reviews_block_the_task_for_a_person(tmp_path, git_identity):
    ws, out = make_ws(tmp_path, "fail", max_rounds=2, max_retries=5)
    run_tick(ws.root)
    assert (t1(ws).status, t1(ws).retries) == (" ", 1)
    run_tick(ws.root)
    task = t1(ws)
    assert (task.status, task.retries) == ("!", 2)  # blocked by the reviews, not by max_retries (5)
    entry = task_entries(ws)[-1]
    assert entry.status == "BLOCKED" and "review failed 2/2" in entry.field("Status")
    assert entry.field("Reason").startswith("review: ")
    run_tick(ws.root)
    assert len(list(out.glob("worker_prompt_*.md"))) == 2  # nothing runs a blocked task


def test_a_parallel_workers_review_counts_rounds_keeps_findings_and_says_pass(tmp_path, git_identity):
    # [workers] max = 2, a parallel phase: the gate as in the serial tick (SPEC §12, §16).
    ws, out = make_ws(tmp_path, "fail", max_rounds=2, max_retries=5, workers=2)
    run_tick(ws.root)
    assert (t1(ws).status, t1(ws).retries) == (" ", 1)
    entry = task_entries(ws)[-1]
    assert entry.field("Review") == "FAIL (2/3 criteria)"
    assert (ws.memento_dir / "reviews" / "T-1.md").is_file()  # the project's, not the gone worktree's
    run_tick(ws.root)
    assert "The acceptance review of the last attempt of T-1 failed" in (out / "worker_prompt_2.md").read_text()
    task = t1(ws)
    assert (task.status, task.retries) == ("!", 2)  # max_rounds, not max_retries (5)
    entry = task_entries(ws)[-1]
    assert "review failed 2/2" in entry.field("Status") and entry.field("Review") == "FAIL (2/3 criteria)"
    run_tick(ws.root)
    assert len(list(out.glob("worker_prompt_*.md"))) == 2  # nothing runs a blocked task


def test_a_parallel_workers_passed_review_is_in_its_entry(tmp_path, git_identity):
    ws, out = make_ws(tmp_path, "fail-once", workers=2)
    run_tick(ws.root)
    run_tick(ws.root)
    assert "- [FAIL] 1: hello.txt says done" in (out / "worker_prompt_2.md").read_text()
    assert t1(ws).status == "x"
    assert task_entries(ws)[-1].field("Review") == "PASS (3/3 criteria)"
    assert git(ws.root, "show", "HEAD:hello.txt") == "done\n"
    assert not (ws.memento_dir / "reviews" / "T-1.md").exists()


@pytest.mark.parametrize("mode, why", [
    ("garbled", "it has no line `Verdict: PASS` or `Verdict: FAIL` and no finding"),
    ("none", "the reviewer wrote no .memento/worker/review.md"),
    ("liar", "it says PASS but criterion 1 is FAIL"),
])
def test_a_review_that_cannot_be_read_is_the_reviewers_failure_asked_once_more(tmp_path, git_identity, mode, why):
    # max_rounds = 1 and max_retries = 1: one counted round or retry would block the task.
    ws, out = make_ws(tmp_path, mode, max_rounds=1, max_retries=1)
    run_tick(ws.root)
    assert len(list(out.glob("review_prompt_*.md"))) == 2  # asked once more in the same tick, then no more
    again = (out / "review_prompt_2.md").read_text()
    assert "## Your last review could not be read" in again and why in again
    entry = t1_entries(ws)[-1]
    assert entry.field("Reason").startswith("reviewer failed: its review could not be read, asked twice: ")
    assert why in entry.field("Reason"), entry.field("Reason")
    assert entry.field("Review") == "NONE (the review could not be read)"
    assert "the reviewer could not review; no retry counted" in entry.field("Status")
    assert (t1(ws).status, t1(ws).retries) == (" ", 0)  # never blocked, no retry, no round
    assert (ws.root / "hello.txt").read_text() == "hello\n"
    assert not (ws.memento_dir / "reviews" / "T-1.md").exists()


ISSUE41_CRITERIA = ("the greeting says hello politely",)


def test_issue41_a_review_judging_a_criterion_fail_then_pass_never_blocks_its_task(tmp_path, git_identity):
    """Issue 41's reviewer: `- the greeting says hello politely: FAIL — …` then the same criterion `PASS`,
    its verdict PASS. Two such reviews blocked the task ("no valid review" twice); now each is the
    reviewer's failure, asked once more, the attempt set aside: no retry, no round, never blocked."""
    ws, out = make_ws(tmp_path, "issue41", max_rounds=2, max_retries=2, accept=ISSUE41_CRITERIA)
    for _ in range(2):
        run_tick(ws.root)
    assert len(list(out.glob("review_prompt_*.md"))) == 4  # two ticks, each asked once more
    assert (t1(ws).status, t1(ws).retries) == (" ", 0)
    entries = t1_entries(ws)
    assert [e.status for e in entries] == [entries[0].status] * 2 and entries[0].status not in ("FAILED", "BLOCKED")
    assert all(e.field("Reason").endswith("it judges criterion 1 both PASS and FAIL") for e in entries)
    assert "memento: complete" not in git(ws.root, "log", "--format=%s")
    # and the person is told: the dashboard's and `memento report`'s "needs you"
    from memento_core.report import _needs

    needs, _, _ = _needs(ws, parse_plan(ws.plan_path), status_log.parse_status(ws.status_path))
    review_needs = [n for n in needs if n["kind"] == "review"]
    assert len(review_needs) == 1 and review_needs[0]["task"] == "T-1", needs
    assert review_needs[0]["text"].startswith("T-1's acceptance reviewer could not review: its review could not "
                                              "be read, asked twice: ")


def test_issue41_a_review_asked_once_more_that_reads_passes_the_task_in_the_same_tick(tmp_path, git_identity):
    ws, out = make_ws(tmp_path, "issue41-once", max_rounds=1, max_retries=1, accept=ISSUE41_CRITERIA)
    run_tick(ws.root)
    assert len(list(out.glob("review_prompt_*.md"))) == 2
    assert t1(ws).status == "x", t1_entries(ws)[-1].field("Reason")
    assert t1_entries(ws)[-1].field("Review") == "PASS (1/1 criteria)"
    assert git(ws.root, "show", "HEAD:hello.txt") == "done\n"


def test_a_reviewer_claiming_pass_for_criteria_it_did_not_judge_never_passes_the_task(tmp_path, git_identity):
    ws, out = make_ws(tmp_path, "claims-all", max_rounds=1, max_retries=1)
    run_tick(ws.root)
    assert t1(ws).status == " " and "memento: complete" not in git(ws.root, "log", "--format=%s")
    assert git(ws.root, "show", "HEAD:hello.txt") == "hello\n" and (ws.root / "hello.txt").read_text() == "hello\n"
    assert t1_entries(ws)[-1].field("Reason").endswith("it has no finding for criterion 2, 3")


def test_a_worker_cannot_forge_the_review(tmp_path, git_identity):
    """A review.md the worker leaves behind is removed before the reviewer runs, never read."""
    ws, out = make_ws(tmp_path, "none")
    ws.config_path.write_text(ws.config_path.read_text().replace(f"{{prompt_file}} {out}\"",
                                                                 f"{{prompt_file}} {out} --forge-review\"", 1))
    run_tick(ws.root)
    assert t1_entries(ws)[-1].field("Reason") == ("reviewer failed: its review could not be read, asked twice: "
                                                  "the reviewer wrote no .memento/worker/review.md")
    assert t1(ws).status == " " and "memento: complete" not in git(ws.root, "log", "--format=%s")


@pytest.mark.parametrize("mode, changed", [("edits", "hello.txt"), ("creates", "extra.txt")])
def test_a_reviewer_that_changes_a_file_fails_and_its_edit_is_undone(tmp_path, git_identity, mode, changed):
    ws, _ = make_ws(tmp_path, mode)
    head = git(ws.root, "rev-parse", "HEAD")
    run_tick(ws.root)
    entry = task_entries(ws)[-1]
    assert entry.field("Reason").startswith(f"review: the reviewer changed {changed}"), entry.field("Reason")
    assert t1(ws).status == " " and t1(ws).retries == 1
    assert (ws.root / "hello.txt").read_text() == "hello\n"  # neither the worker's nor the reviewer's text
    assert not (ws.root / "extra.txt").exists()
    assert git(ws.root, "log", "--format=%s", f"{head.strip()}..HEAD").splitlines() == ["memento: T-1 failed (retry 1/3)"]
    dirty = [ln for ln in git(ws.root, "status", "--porcelain").splitlines() if "CURRENT_STATE" not in ln]
    assert dirty == []  # (the checkpoint is rewritten after every tick)


def test_a_reviewer_that_writes_git_fails_and_git_is_put_back(tmp_path, git_identity):
    ws, _ = make_ws(tmp_path, "git")
    run_tick(ws.root)
    reason = task_entries(ws)[-1].field("Reason")
    assert reason.startswith("review: the reviewer broke a rule: it changed git's own state: created "
                             "refs/heads/reviewer-branch, refs/tags/reviewed"), reason
    assert git(ws.root, "branch", "--list", "reviewer-branch") == "" and git(ws.root, "tag") == ""
    assert t1(ws).status == " " and (ws.root / "hello.txt").read_text() == "hello\n"


def test_without_review_section_there_is_no_review(tmp_path, git_identity):
    ws, out = make_ws(tmp_path, None)
    run_tick(ws.root)
    assert t1(ws).status == "x" and not list(out.glob("review_prompt_*"))
    assert task_entries(ws)[-1].field("Review") is None and "Review" not in ws.status_path.read_text()
    assert not (ws.memento_dir / "prompts" / "T-1.review.md").exists()


def test_a_task_without_accept_is_not_reviewed(tmp_path, git_identity):
    ws, out = make_ws(tmp_path, "fail", accept=())
    run_tick(ws.root)
    assert t1(ws).status == "x" and not list(out.glob("review_prompt_*"))


def test_init_writes_the_review_system_prompt(tmp_path):
    init_workspace(tmp_path / "p", project="p", commit=False)
    text = (tmp_path / "p" / "scripts" / "review_system_prompt.md").read_text()
    assert "Change nothing" in text and "Verdict: PASS" in text and "- [FAIL] N: finding" in text


@pytest.fixture
def outside():
    """A folder outside /tmp (which the sandbox makes private), for the fake agents' copies."""
    path = Path(tempfile.mkdtemp(prefix="memento-review-", dir="/var/tmp" if os.access("/var/tmp", os.W_OK) else None))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@needs_bwrap
def test_a_confined_reviewer_may_write_only_its_report(tmp_path, git_identity, outside):
    """In the sandbox the project is read-only to the reviewer: its edit fails, so does the reviewer;
    a reviewer that only writes .memento/worker/review.md passes the task."""
    ws, _ = make_ws(tmp_path, "edits", sandbox="bwrap", out=outside / "out")
    run_tick(ws.root)
    reason = t1_entries(ws)[-1].field("Reason")  # the reviewer's failure, not the task's: no retry counted
    assert reason.startswith("reviewer failed: agent exited with code 1"), reason
    assert (ws.root / "hello.txt").read_text() == "hello\n" and (t1(ws).status, t1(ws).retries) == (" ", 0)
    ws.config_path.write_text(ws.config_path.read_text().replace(" edits\"", " pass\""))
    git(ws.root, "commit", "-qam", "a reviewer that passes")
    run_tick(ws.root)
    assert t1(ws).status == "x" and git(ws.root, "show", "HEAD:hello.txt") == "done\n"
    assert task_entries(ws)[-1].field("Review") == "PASS (3/3 criteria)"












def test_a_review_written_the_way_models_write_it_passes_the_task(tmp_path, git_identity):
    ws, _ = make_ws(tmp_path, "heading")
    run_tick(ws.root)
    assert t1(ws).status == "x", task_entries(ws)[-1].field("Reason")
    assert task_entries(ws)[-1].field("Review") == "PASS (3/3 criteria)"
    assert git(ws.root, "show", "HEAD:hello.txt") == "done\n"


def test_a_streak_of_verify_and_review_failures_counts_only_the_reviews_as_rounds(tmp_path, git_identity):
    """max_rounds 2: a verify failure, then a failed review, is one round, not two (no early block)."""
    ws, out = make_ws(tmp_path, "fail", max_rounds=2, max_retries=5)
    toml = ws.root / "memento.toml"
    good = toml.read_text()
    toml.write_text(good.replace(f"keeps_prompts.py {{prompt_file}} {out}", f"keeps_prompts.py {{prompt_file}} {out} nope"))
    git(ws.root, "commit", "-qam", "a worker that writes the wrong text")
    run_tick(ws.root)  # verify fails: no review
    assert (t1(ws).status, t1(ws).retries) == (" ", 1)
    assert task_entries(ws)[-1].field("Reason").startswith("verify failed")
    toml.write_text(good)
    git(ws.root, "commit", "-qam", "the worker does the task")
    run_tick(ws.root)  # verify passes, the review fails: round 1 of 2
    assert (t1(ws).status, t1(ws).retries) == (" ", 2), task_entries(ws)[-1].field("Status")
    assert task_entries(ws)[-1].field("Reason").startswith("review:")
    run_tick(ws.root)  # round 2 of 2: blocked
    assert (t1(ws).status, t1(ws).retries) == ("!", 3)
    assert "review failed 2/2" in task_entries(ws)[-1].field("Status")


def test_a_reviewer_exiting_0_at_its_usage_limit_without_a_review_is_rate_limited(tmp_path, git_identity):
    ws, _ = make_ws(tmp_path, "limited-0", max_rounds=1, max_retries=1, review_extra='output = "claude"\n')
    run_tick(ws.root)
    assert (t1(ws).status, t1(ws).retries) == (" ", 0)
    entry = t1_entries(ws)[-1]
    assert entry.status == "RATE LIMITED" and entry.field("Reason").startswith("rate limited: Claude usage limit")
    assert entry.field("Status").startswith("⏳ RATE LIMITED — until ") and "23:00 UTC" in entry.field("Status")
    assert (ws.root / "hello.txt").read_text() == "hello\n"


def test_a_reviewer_cannot_turn_its_fail_into_a_refusal_by_printing_a_limit(tmp_path, git_identity):
    ws, _ = make_ws(tmp_path, "fails-limited-0", max_retries=3, review_extra='output = "claude"\n')
    run_tick(ws.root)
    assert (t1(ws).status, t1(ws).retries) == (" ", 1)  # a counted round: the review was valid
    entry = task_entries(ws)[-1]
    assert entry.status == "FAILED" and entry.field("Reason").startswith("review: criterion 1")
    assert '"rate_limited_until": ""' in (ws.memento_dir / "state.json").read_text()


def test_a_reviewer_exiting_0_that_mentions_a_429_after_a_valid_review_passes(tmp_path, git_identity):
    ws, _ = make_ws(tmp_path, "mentions-0")
    run_tick(ws.root)
    assert t1(ws).status == "x", task_entries(ws)[-1].field("Reason")
    assert task_entries(ws)[-1].field("Review") == "PASS (3/3 criteria)"
    assert '"rate_limited_until": ""' in (ws.memento_dir / "state.json").read_text()


def test_review_config_takes_the_keys_of_agent():
    c = config_from_dict({"agent": {"preset": "claude", "model": "sonnet", "extra_args": ["-x"]},
                          "review": {"model": "opus", "max_rounds": 3}})
    assert (c.review.preset, c.review.model, c.review.extra_args, c.review.max_rounds) == ("claude", "opus", ("-x",), 3)
    reviewer = c.as_agent(c.review)
    assert (reviewer.agent_preset, reviewer.agent_model, reviewer.agent_fallback) == ("claude", "opus", ())
    assert config_from_dict({}).review is None
    for bad in ({"review": {"preset": "script"}}, {"review": {"preset": "command"}},
                {"review": {"preset": "codex", "max_rounds": 0}}):
        with pytest.raises(MementoError):
            config_from_dict(bad)




# ------------------------------------------------------------------ the reviewer's own failures


def t1_entries(ws: Workspace) -> list:
    """Every entry of T-1, set-aside ones (no retry counted) included."""
    return [e for e in status_log.parse_status(ws.status_path) if e.task_id == "T-1"]


def test_a_reviewer_that_fails_to_run_sets_the_attempt_aside(tmp_path, git_identity):
    # max_rounds = 1 and max_retries = 1: one counted review round or retry would block the task.
    ws, out = make_ws(tmp_path, "exits", max_rounds=1, max_retries=1)
    run_tick(ws.root)
    task = t1(ws)
    assert (task.status, task.retries) == (" ", 0)  # verified work is not blocked for the reviewer's failure
    entry = t1_entries(ws)[-1]
    assert entry.field("Reason") == "reviewer failed: agent exited with code 3"
    assert "the reviewer could not review; no retry counted" in entry.field("Status")
    assert entry.status not in ("FAILED", "BLOCKED")
    assert (ws.root / "hello.txt").read_text() == "hello\n"  # rolled back
    assert "memento: complete" not in git(ws.root, "log", "--format=%s")
    assert not (ws.memento_dir / "reviews" / "T-1.md").exists()  # no findings: nothing was reviewed
    ws.config_path.write_text(ws.config_path.read_text().replace(" exits\"", " pass\""))
    git(ws.root, "commit", "-qam", "a reviewer that runs")
    run_tick(ws.root)
    assert t1(ws).status == "x" and t1_entries(ws)[-1].field("Review") == "PASS (3/3 criteria)"


def test_a_rate_limited_reviewer_sets_the_attempt_aside_as_rate_limited(tmp_path, git_identity):
    ws, _ = make_ws(tmp_path, "limited", max_rounds=1, max_retries=1, review_extra='output = "claude"\n')
    run_tick(ws.root)
    assert (t1(ws).status, t1(ws).retries) == (" ", 0)
    entry = t1_entries(ws)[-1]
    assert "RATE LIMITED" in entry.field("Status") and entry.field("Reason").startswith("rate limited")
    state = (ws.memento_dir / "state.json").read_text()
    assert "rate_limited_until" in state and '"rate_limited_until": ""' not in state
    assert (ws.root / "hello.txt").read_text() == "hello\n"


def test_the_reviewers_usage_is_in_the_entry_and_counts_towards_the_task_budget(tmp_path, git_identity):
    ws, _ = make_ws(tmp_path, "costs", review_extra='output = "claude"\n')
    run_tick(ws.root)
    assert t1(ws).status == "x"
    assert "$0.050" in t1_entries(ws)[-1].field("Usage")  # the worker reports none: this is the reviewer's
    ws2, _ = make_ws(tmp_path / "b", "costs", review_extra='output = "claude"\n')
    ws2.config_path.write_text(ws2.config_path.read_text() + "[budget]\ntask_usd = 0.01\n")
    git(ws2.root, "commit", "-qam", "a budget")
    run_tick(ws2.root)
    entry = t1_entries(ws2)[-1]
    assert entry.field("Reason").startswith("task budget exceeded: $0.050"), entry.field("Reason")
    assert (t1(ws2).status, t1(ws2).retries) == (" ", 1)
    assert (ws2.root / "hello.txt").read_text() == "hello\n"


def test_the_reviewer_runs_with_its_own_timeout_not_the_tasks(tmp_path, git_identity):
    # The task's `timeout: 2s` is the worker's and verify's; [review] timeout (20s) is the reviewer's.
    ws, _ = make_ws(tmp_path, "slow", extra="  - timeout: 2s\n")
    run_tick(ws.root)
    entry = t1_entries(ws)[-1]
    assert t1(ws).status == "x", entry.field("Reason")
    assert entry.field("Review") == "PASS (3/3 criteria)"


def test_a_reviewer_cannot_overwrite_the_workers_report(tmp_path, git_identity):
    ws, out = make_ws(tmp_path, "clobbers")
    text = ws.config_path.read_text()
    ws.config_path.write_text(text.replace(f'keeps_prompts.py {{prompt_file}} {out}"',
                                           f'keeps_prompts.py {{prompt_file}} {out} --report"'))
    git(ws.root, "commit", "-qam", "a worker that reports")
    run_tick(ws.root)
    entry = t1_entries(ws)[-1]
    assert t1(ws).status == "x"
    assert entry.field("Outputs") == "the worker's own report"
    assert "forged" not in ws.status_path.read_text()


def test_a_huge_criterion_number_is_a_garbled_review_not_a_crash(tmp_path, git_identity):
    review = parse_review("Verdict: PASS\n- [PASS] " + "9" * 5000 + ": x\n- [PASS] 1: ok\n", 1)
    assert review.passed
    review = parse_review("Verdict: PASS\n- [PASS] " + "9" * 5000 + ": x\n", 1)
    assert review.problem == "it has no finding for criterion 1"
    assert parse_review("\ufeffVerdict: PASS\n- [PASS] 1: ok\n", 1).passed
    ws, _ = make_ws(tmp_path, "huge")
    run_tick(ws.root)
    assert t1_entries(ws)[-1].field("Reason") == ("reviewer failed: its review could not be read, asked twice: "
                                                  ".memento/worker/review.md is not a valid review: "
                                                  "it has no finding for criterion 1, 2, 3")
    assert (t1(ws).status, t1(ws).retries) == (" ", 0)


# ------------------------------------------------------------------ counting the rounds


def test_review_rounds_are_counted_across_the_status_rotation(tmp_path, git_identity):
    ws, _ = make_ws(tmp_path, "fail", max_rounds=3, max_retries=9, meta="- status_max_entries: 1\n")
    for _ in range(2):
        run_tick(ws.root)
    assert (t1(ws).status, t1(ws).retries) == (" ", 2)
    assert len(t1_entries(ws)) <= 1  # the first round's entry is in the archive now
    run_tick(ws.root)
    assert (t1(ws).status, t1(ws).retries) == ("!", 3)
    archived = status_log.iter_status_archive(ws.root / "logs" / "status_archive")
    mine = [e for e in [*archived, *status_log.parse_status(ws.status_path)] if e.task_id == "T-1"]
    assert [e.field("Review") for e in mine] == ["FAIL (2/3 criteria)"] * 3
    assert "review failed 3/3" in mine[-1].field("Status")


def test_rounds_before_a_persons_reset_are_not_counted_after_a_stale_reset(tmp_path, git_identity):
    from memento_core.control import reset_task, set_mode

    ws, _ = make_ws(tmp_path, "fail", max_rounds=2, max_retries=9)
    run_tick(ws.root)
    run_tick(ws.root)
    assert t1(ws).status == "!"  # two rounds
    reset_task(ws, "T-1")
    set_mode(ws, "auto")
    git(ws.root, "commit", "-qam", "a person resets T-1")
    env = {**os.environ, "MEMENTO_CRASH_AT": "tick:agent-running"}
    r = subprocess.run([PY, "-m", "memento_core.tick", "--project", str(ws.root)], env=env, capture_output=True)
    assert r.returncode == -9, r.stderr
    run_tick(ws.root)  # the stale claim reset (retry 1), then the attempt: round 1 since the reset
    task = t1(ws)
    assert task.retries == 2 and task.status == " ", t1_entries(ws)[-1].field("Status")
    assert t1_entries(ws)[-1].field("Review") == "FAIL (2/3 criteria)"
    run_tick(ws.root)
    assert t1(ws).status == "!" and "review failed 2/2" in t1_entries(ws)[-1].field("Status")


# ------------------------------------------------------------------ a fleet: findings travel in the entry


def test_the_findings_travel_in_the_entry_when_the_local_file_is_missing_or_older(tmp_path, git_identity):
    ws, out = make_ws(tmp_path, "fail", max_rounds=3, max_retries=5)
    run_tick(ws.root)
    entry = t1_entries(ws)[-1]
    assert entry.field("Findings") == ("[FAIL] 1: hello.txt says done — hello.txt says hello, not done "
                                       "[PASS] 2: no other file changes — checked in the diff "
                                       "[PASS] 3: the file ends with a newline — checked in the diff")
    (ws.memento_dir / "reviews" / "T-1.md").unlink()  # another host of the fleet reviewed it
    run_tick(ws.root)
    prompt = (out / "worker_prompt_2.md").read_text()
    assert "The acceptance review of the last attempt of T-1 failed" in prompt
    assert "- [FAIL] 1: hello.txt says done — hello.txt says hello, not done\n" in prompt
    assert "- [PASS] 3: the file ends with a newline — checked in the diff\n" in prompt
    # an older review's file on this host: the newer entry's findings win
    (ws.memento_dir / "reviews" / "T-1.md").write_text(
        "Review of the attempt at 2000-01-01T00:00:00Z: FAIL\n\n- [FAIL] 2: an old finding\n")
    run_tick(ws.root)
    prompt = (out / "worker_prompt_3.md").read_text()
    assert "an old finding" not in prompt and "- [FAIL] 1: hello.txt says done" in prompt
