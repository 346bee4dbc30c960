"""``[forge] land = "pr"`` (SPEC §19 "Pull requests out"): each phase on its own branch, one pull request
per finished phase, later phases waiting for the merge (or stacked). Real ticks
(`python -m memento_core.tick`), a real agent through the `command` preset, a real bare remote
(judged with `git rev-parse` there, never by messages), the GitHub stand-in checked against
GitHub's OpenAPI description."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memento_core.plan.scan import parse_plan
from memento_core.scaffold import init_workspace
from tests.core.modes import needs_bwrap
from tests.forge_standin import TOKEN

PY = sys.executable
AGENTS = Path(__file__).resolve().parents[2] / "agents"
BRANCH1 = "memento/phase-1-foundation"
BRANCH2 = "memento/phase-2-integration"

PLAN = """# MASTER_PLAN: shop

## Meta
- tick_mode: auto
- max_retries: 2
- max_tasks_per_tick: 1

---

## Phase 1: Foundation
<!-- depends: none -->

- [ ] `T-101` Write one
  - verify: `test -f T-101.txt && echo verified T-101`
  - context_files: [T-101.txt]

- [ ] `GH-7` Write seven
  - verify: `test -f GH-7.txt && echo verified GH-7`
  - context_files: [GH-7.txt]

## Phase 2: Integration
<!-- depends: Phase 1 -->

- [ ] `T-201` Write two
  - verify: `test -f T-201.txt && echo verified T-201`
  - context_files: [T-201.txt]
"""


def git(root: Path, *args: str, check: bool = True) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=check).stdout.strip()


def env_with(token: str | None = TOKEN) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_TOKEN", "GH_TOKEN")}
    env["PATH"] = "/usr/bin:/bin"
    if token is not None:
        env["GITHUB_TOKEN"] = token
    return env


def make_project(tmp_path: Path, github, *, agent: str = "", sandbox: str = "none", stack: bool = False) -> Path:
    root = tmp_path / "shop"
    init_workspace(root, project="shop", commit=False)
    (root / "docs" / "MASTER_PLAN.md").write_text(PLAN)
    command = agent or f"{PY} {AGENTS / 'does_task.py'} {{task_id}}.txt"
    (root / "memento.toml").write_text(
        f'[agent]\npreset = "command"\ncommand = """{command}"""\ntimeout = "90s"\n'
        f'[verify]\ntimeout = "60s"\n[sandbox]\nmode = "{sandbox}"\n'
        f'[forge]\nland = "pr"\napi = "{github.api}"\nrepo = "octo-org/shop"\nstack = {str(stack).lower()}\n')
    git(root, "add", "-A")
    git(root, "commit", "-qm", "setup")
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(root, "remote", "add", "origin", str(bare))
    git(root, "push", "-q", "-u", "origin", "HEAD:main")
    github.bare = bare
    return root


@pytest.fixture
def project(tmp_path, git_identity, github) -> Path:
    return make_project(tmp_path, github)


def tick(root: Path, token: str | None = TOKEN) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "memento_core.tick", "--project", str(root)], capture_output=True,
                          text=True, timeout=300, env=env_with(token))


def ran(root: Path, token: str | None = TOKEN, code: int = 0) -> subprocess.CompletedProcess:
    out = tick(root, token)
    assert out.returncode == code, out.stdout + out.stderr
    return out


def remote_tip(root: Path, branch: str) -> str:
    bare = root.parent / "remote.git"
    return git(bare, "rev-parse", "-q", "--verify", f"refs/heads/{branch}", check=False)


def status(root: Path, task: str) -> str:
    return parse_plan(root / "docs" / "MASTER_PLAN.md").task(task).status


def retries(root: Path) -> dict[str, int]:
    return {t.id: t.retries for t in parse_plan(root / "docs" / "MASTER_PLAN.md").tasks}


def record(root: Path, phase: str = "Phase 1") -> dict:
    return json.loads((root / ".memento" / "forge_pulls.json").read_text())["phases"][phase]


def posts(github, path: str = "/pulls") -> list[dict]:
    return [r for r in github.requests if r["method"] == "POST" and r["path"].endswith(path)]


def log_text(root: Path, name: str) -> str:
    path = root / name
    return path.read_text() if path.exists() else ""


def test_a_phase_is_worked_on_its_branch_and_lands_through_one_pull_request(project, github):
    base = remote_tip(project, "main")
    ran(project)
    assert git(project, "symbolic-ref", "--short", "HEAD") == BRANCH1
    assert status(project, "T-101") == "x" and remote_tip(project, "main") == base
    assert git(project, "rev-parse", "main") == base  # the local base never moves either
    assert posts(github) == []  # the phase is not finished: nothing pushed, no pull request
    assert remote_tip(project, BRANCH1) == ""
    ran(project)  # GH-7, the phase's last task: pushed, one pull request
    assert remote_tip(project, "main") == base
    tip = git(project, "rev-parse", BRANCH1)
    assert remote_tip(project, BRANCH1) == tip
    (pr,) = github.pulls.values()
    assert (pr["title"], pr["head"], pr["base"], pr["state"]) == ("Phase 1: Foundation", BRANCH1, "main", "open")
    for words in ("T-101 `Write one`", "GH-7 `Write seven`", "verified T-101", "verified GH-7", "Closes #7", "SUCCESS"):
        assert words in pr["body"], words
    assert "Closes #101" not in pr["body"]
    rec = record(project)
    assert (rec["number"], rec["state"], rec["head"], rec["base"]) == (pr["number"], "open", tip, "main")
    assert rec["url"].endswith(f"/pull/{pr['number']}")
    # Phase 2 waits for the merge: no task picked, exit 0, the wait names the pull request.
    for _ in range(2):
        out = ran(project)
        assert f"#{pr['number']}" in out.stdout and rec["url"] in out.stdout
        assert status(project, "T-201") == " " and remote_tip(project, "main") == base
    assert f"WAITING FOR PULL REQUEST #{pr['number']}" in log_text(project, "logs/cron.log")
    said = subprocess.run([PY, "-m", "memento_core.cli", "status", "--json", str(project)], capture_output=True,
                          text=True, timeout=120, env=env_with(None))
    doc = json.loads(said.stdout)
    nxt = doc["next"]
    assert nxt["kind"] == "waiting" and f"#{pr['number']}" in nxt["message"] and nxt["task"] is None
    assert doc["state"] == "WAITING" and said.returncode == 1  # a person's merge, not a tick, moves it on
    assert len(posts(github)) == 1  # later ticks never open a second one
    merged = github.merge_pull(pr["number"])
    ran(project)  # the merge seen: fetched, main brought forward, phase 2 on its own branch from it
    assert record(project)["state"] == "merged"
    assert git(project, "rev-parse", "main") == merged == remote_tip(project, "main")
    assert git(project, "symbolic-ref", "--short", "HEAD") == BRANCH2
    assert git(project, "rev-parse", f"{BRANCH2}~1") == merged
    assert status(project, "T-201") == "x"
    assert record(project, "Phase 2")["base"] == "main"
    assert len(posts(github)) == 2  # T-201 was phase 2's last: pushed in the tick that ran it
    ran(project)
    assert len(posts(github)) == 2
    assert remote_tip(project, BRANCH2) == git(project, "rev-parse", BRANCH2)
    assert remote_tip(project, "main") == merged
    (second,) = [p for p in github.pulls.values() if p["head"] == BRANCH2]
    assert second["base"] == "main" and "T-201" in second["body"] and "T-101" not in second["body"]
    out = ran(project)  # every task done, but not merged: not complete yet
    assert f"WAITING FOR PULL REQUEST #{second['number']}" in out.stdout
    assert "ALL TASKS COMPLETE" not in log_text(project, "docs/TICK_STATUS.md")
    last = github.merge_pull(second["number"])
    out = ran(project)
    assert "ALL TASKS COMPLETE" in out.stdout and git(project, "symbolic-ref", "--short", "HEAD") == "main"
    assert remote_tip(project, "main") == last
    assert subprocess.run(["git", "merge-base", "--is-ancestor", last, "main"], cwd=project).returncode == 0
    ran(project)  # Memento's own entry on the local main never stops a later tick


def test_a_502_that_hid_the_pull_request_github_made_does_not_make_a_second(project, github):
    github.fail("POST", r"/pulls$", 502, after=True)  # made, then answered 502
    ran(project)
    ran(project)
    assert len(github.pulls) == 1 and record(project)["number"] == 0
    assert "waits for GitHub" in log_text(project, "logs/cron.log")
    assert retries(project) == {"T-101": 0, "GH-7": 0, "T-201": 0}
    ran(project)  # looks for a pull request with that head first, finds it
    (pr,) = github.pulls.values()
    assert record(project)["number"] == pr["number"] and len(posts(github)) == 1
    ran(project)
    assert len(posts(github)) == 1 and len(github.pulls) == 1


def test_502s_on_every_pull_request_call_defer_and_count_no_retry(project, github):
    ran(project)
    github.fail("GET", r"/pulls$", 502, times=4)  # the look for an existing one: every attempt
    ran(project)
    assert github.pulls == {} and record(project)["number"] == 0
    assert record(project)["head"] == git(project, "rev-parse", BRANCH1)  # pushed; only GitHub waits
    ran(project)
    (pr,) = github.pulls.values()
    github.fail("GET", rf"/pulls/{pr['number']}$", 502, times=4)  # the state of the open pull request
    out = ran(project)
    assert "pull requests' state was not read" in log_text(project, "logs/cron.log")
    assert f"#{pr['number']}" in out.stdout  # still waits, says which
    assert retries(project) == {"T-101": 0, "GH-7": 0, "T-201": 0}
    assert status(project, "T-201") == " " and len(posts(github)) == 1


def test_stack_starts_the_next_phase_at_once_on_the_finished_phases_branch(tmp_path, git_identity, github):
    root = make_project(tmp_path, github, stack=True)
    base = remote_tip(root, "main")
    ran(root)
    ran(root)
    (pr,) = github.pulls.values()
    first = git(root, "rev-parse", BRANCH1)
    ran(root)  # no merge: phase 2 starts on top of phase 1's branch
    assert status(root, "T-201") == "x" and git(root, "symbolic-ref", "--short", "HEAD") == BRANCH2
    assert git(root, "rev-parse", f"{BRANCH2}~1") == first
    assert record(root, "Phase 2")["base"] == BRANCH1
    ran(root)
    second = [p for p in github.pulls.values() if p["head"] == BRANCH2]
    assert len(second) == 1 and second[0]["base"] == "main"  # a merge of it reaches the base branch
    assert remote_tip(root, "main") == base and pr["state"] == "open"


def test_a_push_refused_by_branch_protection_is_said_in_the_remotes_words(project, github):
    bare = project.parent / "remote.git"
    hook = bare / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\nwhile read old new ref; do\n"
                    "  echo \"error: GH006: Protected branch update failed for $ref.\" >&2\ndone\nexit 1\n")
    hook.chmod(0o755)
    base = remote_tip(project, "main")
    ran(project)
    ran(project)
    said = "GH006: Protected branch update failed for refs/heads/memento/phase-1-foundation."
    assert said in log_text(project, "docs/TICK_STATUS.md") and "PUSH REFUSED" in log_text(project, "docs/TICK_STATUS.md")
    assert said in record(project)["error"] and record(project)["number"] == 0
    assert remote_tip(project, BRANCH1) == "" and remote_tip(project, "main") == base
    assert github.pulls == {} and posts(github) == []
    assert status(project, "T-201") == " "  # nothing marked done that was not
    out = ran(project)
    assert "not pushed" in out.stdout
    assert log_text(project, "docs/TICK_STATUS.md").count("PUSH REFUSED") == 1  # once per change
    assert git(project, "status", "--porcelain") == ""
    hook.unlink()
    ran(project)
    (pr,) = github.pulls.values()
    assert remote_tip(project, BRANCH1) == git(project, "rev-parse", BRANCH1) and pr["head"] == BRANCH1
    assert record(project)["error"] == "" and remote_tip(project, "main") == base


def test_a_pull_request_closed_without_a_merge_holds_the_next_phase_and_says_so(project, github):
    ran(project)
    ran(project)
    (pr,) = github.pulls.values()
    github.close_pull(pr["number"])
    out = ran(project, code=1)
    assert "PULL REQUEST CLOSED" in out.stdout and "PULL REQUEST CLOSED" in log_text(project, "docs/TICK_STATUS.md")
    assert status(project, "T-201") == " " and record(project)["state"] == "closed"
    ran(project, code=1)
    assert log_text(project, "docs/TICK_STATUS.md").count("PULL REQUEST CLOSED") == 1  # once per change
    bare = project.parent / "remote.git"  # a person merges the branch themselves
    git(bare, "update-ref", "refs/heads/main", git(bare, "rev-parse", f"refs/heads/{BRANCH1}"))
    ran(project)
    assert record(project)["state"] == "merged" and status(project, "T-201") == "x"
    assert git(project, "rev-parse", f"{BRANCH2}~1") == git(bare, "rev-parse", "refs/heads/main")


def test_an_agent_that_writes_its_phase_merged_starts_nothing(tmp_path, git_identity, github):
    root = make_project(tmp_path, github, agent=f"{PY} {AGENTS / 'forges_pull_merged.py'} {{task_id}}.txt")
    base = remote_tip(root, "main")
    out = tick(root)
    assert "changed Memento's own state: .memento/forge_pulls.json" in out.stdout, out.stdout + out.stderr
    phases = json.loads((root / ".memento" / "forge_pulls.json").read_text())["phases"]
    assert list(phases) == ["Phase 1"]  # put back as Memento wrote it
    assert (phases["Phase 1"]["state"], phases["Phase 1"]["number"]) == ("unpushed", 0)
    for _ in range(2):
        tick(root)
    assert status(root, "T-201") == " " and github.pulls == {}
    assert git(root, "symbolic-ref", "--short", "HEAD") == BRANCH1
    assert remote_tip(root, "main") == base and git(root, "rev-parse", "main") == base


@pytest.mark.parametrize("sandbox", [pytest.param("none", id="unconfined"),
                                     pytest.param("auto", id="confined", marks=needs_bwrap)])
def test_an_agent_that_commits_on_the_base_branch_or_pushes_lands_nothing(tmp_path, git_identity, github, sandbox):
    push = ["push"] if sandbox == "auto" else []  # unconfined, the person's credentials are the agent's too
    root = make_project(tmp_path, github, sandbox=sandbox,
                        agent=f"{PY} {AGENTS / 'lands_on_base.py'} {{task_id}}.txt {' '.join(push)}")
    base = remote_tip(root, "main")
    tick(root)
    assert git(root, "rev-parse", "main") == base  # the agent's commit on main is not there
    assert remote_tip(root, "main") == base and remote_tip(root, BRANCH1) == ""
    assert git(root, "symbolic-ref", "--short", "HEAD") == BRANCH1
    assert "sneaked" not in git(root, "log", "--all", "--format=%s", "--", ".")


def test_parallel_workers_merge_into_the_phase_branch_never_the_base(tmp_path, git_identity, github):
    root = make_project(tmp_path, github)
    plan = (root / "docs" / "MASTER_PLAN.md")
    plan.write_text(PLAN.replace("max_tasks_per_tick: 1", "max_tasks_per_tick: 2")
                    .replace("<!-- depends: none -->", "<!-- depends: none -->\n<!-- parallel: true -->"))
    with (root / "memento.toml").open("a") as f:
        f.write("[workers]\nmax = 2\n")
    git(root, "commit", "-qam", "two workers")
    git(root, "push", "-q", "origin", "HEAD:main")
    base = git(root, "rev-parse", "main")
    ran(root)
    assert status(root, "T-101") == "x" and status(root, "GH-7") == "x"
    assert git(root, "symbolic-ref", "--short", "HEAD") == BRANCH1
    assert git(root, "rev-parse", "main") == base == remote_tip(root, "main")
    subjects = git(root, "log", "--format=%s", f"main..{BRANCH1}")
    assert "memento: complete T-101" in subjects and "memento: complete GH-7" in subjects
    (pr,) = github.pulls.values()  # both passed in one tick: the phase's pull request in the same tick
    assert pr["head"] == BRANCH1 and remote_tip(root, BRANCH1) == git(root, "rev-parse", BRANCH1)


def test_the_token_is_nowhere_but_the_requests(project, github):
    ran(project)
    ran(project)
    ran(project)
    assert github.pulls
    found = subprocess.run(["grep", "-rl", TOKEN, str(project.parent)], capture_output=True, text=True)
    assert found.stdout == ""  # no file: the project, its logs, .memento/, the bare remote
    for repo in (project, project.parent / "remote.git"):
        objects = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch"], cwd=repo,
                                 capture_output=True, check=True).stdout
        assert len(objects) > 1000 and TOKEN.encode() not in objects


def test_an_imported_tasks_comment_names_the_pull_request_that_closes_its_issue(tmp_path, git_identity, github):
    root = make_project(tmp_path, github)
    (root / "docs" / "MASTER_PLAN.md").write_text(PLAN[:PLAN.index("---")])
    git(root, "commit", "-qam", "an empty plan")
    github.issue(1, "Write one", "```memento\nverify: test -f GH-1.txt\ncontext_files: [GH-1.txt]\n```\n")
    imported = subprocess.run([PY, "-m", "memento_core.cli", "plan", "import", "github", "octo-org/shop", str(root)],
                              capture_output=True, text=True, timeout=120, env=env_with())
    assert imported.returncode == 0, imported.stdout + imported.stderr
    ran(root)
    (pr,) = github.pulls.values()
    assert "Closes #1" in pr["body"] and pr["title"] == "GitHub issues"
    (comment,) = github.posted(1)
    assert f"pull request #{pr['number']}" in comment and "closes this issue" in comment
    assert "stays open" not in comment


def test_a_local_base_with_commits_of_its_own_is_never_moved_and_the_next_phase_waits(project, github):
    ran(project)
    ran(project)
    (pr,) = github.pulls.values()
    tree = git(project, "rev-parse", "main^{tree}")
    own = git(project, "commit-tree", tree, "-p", "main", "-m", "a person's local commit on main")
    git(project, "update-ref", "refs/heads/main", own)
    github.merge_pull(pr["number"])
    out = ran(project, code=1)
    assert "cannot be brought forward" in out.stdout
    assert "BASE BRANCH NOT UPDATED" in log_text(project, "docs/TICK_STATUS.md")
    assert git(project, "rev-parse", "main") == own  # the person's commit is still there
    assert git(project, "symbolic-ref", "--short", "HEAD") == BRANCH1 and status(project, "T-201") == " "
    git(project, "update-ref", "refs/heads/main", git(project, "rev-parse", "main~1"))  # they drop it
    ran(project)
    assert status(project, "T-201") == "x" and git(project, "symbolic-ref", "--short", "HEAD") == BRANCH2


def test_a_task_sent_back_reruns_on_the_branch_and_updates_the_same_pull_request(project, github):
    ran(project)
    ran(project)
    (pr,) = github.pulls.values()
    first = record(project)["head"]
    plan = project / "docs" / "MASTER_PLAN.md"
    plan.write_text(plan.read_text().replace("- [x] `GH-7`", "- [ ] `GH-7`"))  # as a review's changes would
    (project / "GH-7.txt").unlink()
    git(project, "commit", "-qam", "GH-7 again")
    ran(project)
    assert status(project, "GH-7") == "x" and status(project, "T-201") == " "
    head = git(project, "rev-parse", BRANCH1)
    assert head != first and record(project)["head"] == head == remote_tip(project, BRANCH1)
    assert len(github.pulls) == 1 and len(posts(github)) == 1 and record(project)["number"] == pr["number"]
    assert [r["path"] for r in github.requests if r["method"] == "PATCH"] == [f"/repos/octo-org/shop/pulls/{pr['number']}"]


def test_a_refused_token_counts_no_retry_and_the_pull_request_comes_once_it_works(project, github):
    ran(project)
    ran(project, token="ghp_wrong")
    assert github.pulls == {} and record(project)["number"] == 0
    assert "refused the token from GITHUB_TOKEN" in record(project)["error"]
    assert "tried again once the token works" in log_text(project, "logs/cron.log")
    assert "⚠️ FORGE — GitHub refused the token from GITHUB_TOKEN" in log_text(project, "docs/TICK_STATUS.md")
    assert git(project, "status", "--porcelain") == ""
    assert retries(project) == {"T-101": 0, "GH-7": 0, "T-201": 0}
    assert "ghp_wrong" not in log_text(project, "logs/cron.log") + json.dumps(record(project))
    ran(project)
    (pr,) = github.pulls.values()
    assert record(project)["number"] == pr["number"] and record(project)["error"] == ""
    assert not (project / ".memento" / "forge_trouble.json").exists()  # GitHub takes it again: over


def test_the_teams_loop_a_failing_check_a_change_request_the_fix_pushed_then_the_merge(tmp_path, git_identity, github):
    """The land step and the follow step together, as a team meets them: the phase's pull request
    opened, its CI failing (needs you, nothing retried), a reviewer asking for changes to GH-7 (a
    note, GH-7 run again on the branch, the same pull request updated), CI passing on the new head,
    the merge, and only then phase 2."""
    def needs(kind: str) -> list[dict]:
        said = subprocess.run([PY, "-m", "memento_core.cli", "status", "--json", str(project)], capture_output=True,
                              text=True, timeout=120, env=env_with(None))
        return [n for n in json.loads(said.stdout)["needs_you"] if n["kind"] == kind]

    agent = tmp_path / "appends.py"  # each run adds a line to its task's file: a rerun changes something
    agent.write_text("import sys\nwith open(sys.argv[1], 'a') as fh:\n    fh.write('run\\n')\n")
    project = make_project(tmp_path, github, agent=f"{PY} {agent} {{task_id}}.txt")

    def ci(conclusion: str) -> str:  # the team's CI runs on whatever head the branch has now
        head = remote_tip(project, BRANCH1)
        github.check_run(head, "ci / test", conclusion)
        return head

    ran(project)
    ran(project)
    (pr,) = github.pulls.values()
    ci("failure")
    ran(project)  # the tick that reads the checks (after its pick): the alert says it
    assert record(project)["checks"] == "failing"
    ci("failure")  # (a head pushed meanwhile, the checkpoint naming GH-7's commit: CI ran on it too)
    assert "ci / test" in log_text(project, ".memento_alert")
    out = ran(project, code=1)  # the next one waits on a failing check: that needs a person
    assert f"CHECKS FAILING — pull request #{pr['number']} (Phase 1): ci / test" in out.stdout
    (need,) = needs("check")
    assert (need["name"], need["pr"]) == ("ci / test", pr["number"])
    assert retries(project) == {"T-101": 0, "GH-7": 0, "T-201": 0} and status(project, "T-201") == " "
    waiting = record(project)["head"]
    ran(project, code=1)
    assert record(project)["head"] == waiting == remote_tip(project, BRANCH1)  # waiting pushes nothing new
    assert len(posts(github)) == 1

    github.review(pr["number"], "CHANGES_REQUESTED", "GH-7: the file should say why, not only that it exists")
    tick(project)  # the change request read: a note to GH-7, GH-7 back to pending
    notes = (project / "docs" / "HUMAN_NOTES.md").read_text()
    assert "GH-7" in notes and "should say why" in notes
    assert status(project, "GH-7") in (" ", "x") and retries(project)["GH-7"] == 0
    tick(project)  # GH-7 again, on the branch: the phase finished again, pushed, the same pull request
    assert status(project, "GH-7") == "x" and status(project, "T-201") == " "
    assert retries(project)["GH-7"] == 0 and (project / "GH-7.txt").read_text() == "run\nrun\n"
    head = record(project)["head"]
    assert head != waiting and head == remote_tip(project, BRANCH1) == git(project, "rev-parse", BRANCH1)
    assert len(github.pulls) == 1 and len(posts(github)) == 1

    ci("success")
    tick(project)  # its pick still knows the checks of the tick before; it reads them again at its end
    assert record(project)["checks"] == "passing" and needs("check") == []
    ran(project)
    assert status(project, "T-201") == " "  # still waiting for the merge
    merged = github.merge_pull(pr["number"])
    ran(project)
    assert status(project, "T-201") == "x" and git(project, "rev-parse", f"{BRANCH2}~1") == merged
