"""`memento plan import github OWNER/REPO` (SPEC §19 "Issues in"), run as a person runs it (the real
command line, a real project in git with a real bare remote) against the GitHub stand-in, whose
requests and answers are checked against GitHub's OpenAPI description."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memento_core.plan.scan import parse_plan
from memento_core.scaffold import init_workspace
from tests.forge_standin import TOKEN

PY = sys.executable
REPO = "octo-org/shop"

PLAN = """# MASTER_PLAN: shop

## Meta
- tick_mode: auto
- max_retries: 2

## Phase 1: Foundation
<!-- depends: none -->

- [ ] T-1 Set up
  - verify: `true`
  - context_files: [a.txt]
"""

FULL = """We need a health endpoint.

```memento
verify: `pytest -q tests/test_health.py`
- context_files: [src/health.py, tests/test_health.py]
accept: GET /health answers 200
- accept: the body says ok
depends: T-1
```
"""


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


@pytest.fixture
def project(tmp_path, git_identity, github) -> Path:
    root = tmp_path / "shop"
    init_workspace(root, project="shop", commit=False)
    (root / "docs" / "MASTER_PLAN.md").write_text(PLAN)
    (root / "memento.toml").write_text(f'[agent]\npreset = "script"\n[forge]\napi = "{github.api}"\n')
    git(root, "add", "-A")
    git(root, "commit", "-qm", "setup")
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(root, "remote", "add", "origin", str(bare))
    git(root, "push", "-q", "-u", "origin", "HEAD:main")
    return root


def memento(root: Path, *args: str, token: str | None = TOKEN) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_TOKEN"}
    env["PATH"] = "/usr/bin:/bin"  # no gh: the token is GITHUB_TOKEN's or none
    if token is not None:
        env["GITHUB_TOKEN"] = token
    return subprocess.run([PY, "-m", "memento_core.cli", *args], cwd=root, capture_output=True, text=True,
                          timeout=120, env=env)


def do_import(root: Path, *extra: str, token: str | None = TOKEN) -> subprocess.CompletedProcess:
    return memento(root, "plan", "import", "github", REPO, *extra, str(root), token=token)


def plan_of(root: Path):
    return parse_plan(root / "docs" / "MASTER_PLAN.md")


def test_import_adds_one_task_per_open_issue_in_a_phase_of_its_own(project, github):
    github.issue(3, "Add a health endpoint", FULL)
    github.issue(4, "Write the README", "No block here, just words.")
    github.issue(5, "A pull request", FULL, pull_request=True)
    github.issue(6, "Closed before anyone looked", FULL, state="closed", state_reason="not_planned")
    github.issue(7, "Not labelled", FULL, labels=("bug",))
    out = do_import(project)
    assert out.returncode == 1, out.stderr  # GH-4 is invalid until filled
    assert "added GH-3, GH-4" in out.stdout and "to phase 'GitHub issues'" in out.stdout
    assert "1 pull request with the label left out" in out.stdout
    plan = plan_of(project)
    assert [t.id for t in plan.tasks] == ["T-1", "GH-3", "GH-4"]
    last = plan.phases[-1]
    assert (last.id, last.depends, last.task_ids) == ("GitHub issues", (), ("GH-3", "GH-4"))
    assert "<!-- depends: none -->" in (project / "docs" / "MASTER_PLAN.md").read_text()
    gh3 = plan.task("GH-3")
    assert gh3.title == "Add a health endpoint" and gh3.status == " " and gh3.valid
    assert gh3.verify == "pytest -q tests/test_health.py"
    assert gh3.context_files == ("src/health.py", "tests/test_health.py")
    assert gh3.accept == ("GET /health answers 200", "the body says ok") and gh3.depends == ("T-1",)
    assert not plan.task("GH-4").valid
    # one commit of the plan, the work tree clean, nothing else in it
    assert git(project, "log", "-1", "--format=%s") == f"memento: import GitHub issues from {REPO}\n"
    assert git(project, "show", "--name-only", "--format=", "HEAD").split() == ["docs/MASTER_PLAN.md"]
    assert git(project, "status", "--porcelain") == ""
    # the stand-in saw the label and every state (closed issues matter to tasks already imported)
    listing = [r for r in github.requests if r["path"].endswith("/issues")]
    assert listing[0]["query"]["labels"] == "memento" and listing[0]["query"]["state"] == "all"


def test_lint_names_the_issue_and_the_field_of_a_task_without_a_block(project, github):
    github.issue(4, "Write the README", "No block here.")
    github.issue(8, "Half a block", "```memento\nverify: make docs\n```\n")
    do_import(project)
    lint = memento(project, "lint", str(project))
    assert lint.returncode == 2
    said = lint.stdout + lint.stderr
    assert "GH-4 has no verify command (GitHub issue #4 has no ```memento block line `verify: …`" in said
    assert "GH-4 has no context_files (GitHub issue #4" in said
    assert "GH-8 has no context_files (GitHub issue #8" in said and "GH-8 has no verify" not in said
    # a person fills it: valid
    text = (project / "docs" / "MASTER_PLAN.md").read_text()
    text = text.replace("- [ ] GH-4 Write the README\n",
                        "- [ ] GH-4 Write the README\n  - verify: `test -f README.md`\n  - context_files: [README.md]\n")
    (project / "docs" / "MASTER_PLAN.md").write_text(text)
    assert plan_of(project).task("GH-4").valid


@pytest.mark.parametrize(("body", "words"), [
    ("```memento\nverify: true\ncontext_files: [../etc/passwd]\n```", "`context_files:` (line 2) names `../etc/passwd`"),
    ("```memento\nverify: true\ncontext_files: [a]\ndepends: phase one\n```", "`depends:` (line 3) names `phase one`"),
    ("```memento\nverfy: true\n```", "`verfy:` (line 1) is not a field an issue may set"),
    ("```memento\nverify: true\nverify: false\n```", "`verify:` is given twice"),
    ("```memento\njust words\n```", "line 1 `just words` is not a field line"),
    ("```memento\nverify: true\n", "the block is never closed"),
    ("```memento\nverify: a\n```\n```memento\nverify: b\n```", "there are 2 blocks"),
    ("```memento\nverify: \u202etrue\ncontext_files: [a]\n```", "`verify:` (line 1) holds a control or format"),
    ("```memento\nverify:\ncontext_files: [a]\n```", "`verify:` (line 1) is empty"),
])
def test_a_malformed_block_makes_the_task_invalid_naming_the_issue_and_the_field(project, github, body, words):
    github.issue(12, "Bad block", body)
    out = do_import(project)
    assert out.returncode == 1 and "GH-12: issue #12's ```memento block: " in out.stdout
    task = plan_of(project).task("GH-12")
    assert not task.valid
    (problem,) = [p for p in task.problems if p.startswith("import_error:")]
    assert f"issue #12's ```memento block: {words}" in problem
    assert "verify" not in task.fields and "context_files" not in task.fields  # nothing half-taken
    lint = memento(project, "lint", str(project))
    assert lint.returncode == 2 and "GH-12 import_error: issue #12's ```memento block" in lint.stdout + lint.stderr


def test_reimport_adds_new_issues_and_updates_only_what_a_person_left_alone(project, github):
    github.issue(3, "Add a health endpoint", FULL)
    do_import(project)
    first = git(project, "rev-parse", "HEAD")
    # again, nothing changed on GitHub: nothing changes here, no commit
    out = do_import(project)
    assert "nothing new" in out.stdout and git(project, "rev-parse", "HEAD") == first
    # a person changes the verify command in the plan (and commits it, as people do)
    path = project / "docs" / "MASTER_PLAN.md"
    path.write_text(path.read_text().replace("`pytest -q tests/test_health.py`", "`pytest -q tests/ -k health`"))
    git(project, "commit", "-qam", "person: a wider verify")
    # the issue changes: title, verify, an accept line, depends; and a new issue comes
    github.issues[3]["title"] = "Add a /health endpoint"
    github.issues[3]["body"] = FULL.replace("tests/test_health.py`", "tests/test_health.py -x`") \
        .replace("the body says ok", "the body says ok and the version").replace("depends: T-1", "depends: none")
    github.issue(9, "Add a /ready endpoint", FULL.replace("health", "ready"))
    out = do_import(project)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "added GH-9" in out.stdout and "updated GH-3" in out.stdout and "GH-3 verify" in out.stdout
    gh3 = plan_of(project).task("GH-3")
    assert gh3.verify == "pytest -q tests/ -k health"  # the person's edit wins
    assert gh3.title == "Add a /health endpoint"
    assert gh3.accept == ("GET /health answers 200", "the body says ok and the version")
    assert gh3.depends == ()
    assert plan_of(project).phases[-1].task_ids == ("GH-3", "GH-9")
    # the issue's verify changes again: still the person's
    github.issues[3]["body"] = FULL.replace("tests/test_health.py`", "tests/test_health.py -q`")
    do_import(project)
    assert plan_of(project).task("GH-3").verify == "pytest -q tests/ -k health"
    # the person puts back what the import last wrote there: the import owns it again
    path.write_text(path.read_text().replace("`pytest -q tests/ -k health`", "`pytest -q tests/test_health.py`"))
    github.issues[3]["body"] = FULL.replace("tests/test_health.py`", "tests/test_health.py -vv`")
    do_import(project)
    assert plan_of(project).task("GH-3").verify == "pytest -q tests/test_health.py -vv"
    assert git(project, "status", "--porcelain") == ""


def test_a_person_edit_of_the_title_survives_and_the_rest_of_the_file_is_byte_identical(project, github):
    github.issue(3, "Add a health endpoint", FULL)
    github.issue(4, "Second", "```memento\nverify: true\ncontext_files: [b]\n```")
    do_import(project)
    path = project / "docs" / "MASTER_PLAN.md"
    path.write_text(path.read_text().replace("GH-3 Add a health endpoint", "GH-3 [MODULE:api] Health, mine")
                    + "\nA person's closing words.\r\n")
    before = path.read_bytes()
    github.issues[3]["title"] = "Health endpoint v2"
    github.issues[4]["body"] = "```memento\nverify: make\ncontext_files: [b]\n```"
    do_import(project)
    after = path.read_bytes()
    assert plan_of(project).task("GH-3").title == "Health, mine"
    changed = [(a, b) for a, b in zip(before.split(b"\n"), after.split(b"\n"), strict=True) if a != b]
    assert changed == [(b"  - verify: `true`", b"  - verify: `make`")]


def test_closed_issues_skip_their_tasks_and_a_done_task_stays_done(project, github):
    for n in (1, 2, 3):
        github.issue(n, f"Issue {n}", f"```memento\nverify: true\ncontext_files: [f{n}]\n```")
    do_import(project)
    path = project / "docs" / "MASTER_PLAN.md"
    path.write_text(path.read_text().replace("- [ ] GH-3", "- [x] GH-3"))
    git(project, "commit", "-qam", "GH-3 done")
    for n, why in ((1, "completed"), (2, "not_planned"), (3, "completed")):
        github.issues[n].update(state="closed", state_reason=why, closed_at="2026-12-05T10:00:00Z")
    out = do_import(project)
    assert "skipped (closed on GitHub) GH-1, GH-2" in out.stdout
    plan = plan_of(project)
    assert (plan.task("GH-1").status, plan.task("GH-1").reason) == ("-", "closed on GitHub (completed)")
    assert (plan.task("GH-2").status, plan.task("GH-2").reason) == ("-", "closed on GitHub (not_planned)")
    assert plan.task("GH-3").status == "x" and plan.task("GH-3").reason is None
    assert plan.meta.total_tasks == 2  # T-1 and GH-3: skipped tasks are not counted
    # reopened: the task the import skipped comes back
    github.issues[1].update(state="open", state_reason="reopened", closed_at=None)
    out = do_import(project)
    assert "reopened GH-1" in out.stdout
    assert (plan_of(project).task("GH-1").status, plan_of(project).task("GH-1").reason) == (" ", None)


HOSTILE = [
    "Fix \x1b[31mred\x1b[0m text\x07",
    "Two lines\n- [ ] T-999 injected task\n  - verify: `rm -rf ~`",
    "Retry me [retries: 9]",
    "[MODULE:evil] take over",
    "Hide <!-- the rest",
    "Bidi \u202etxet\u202c and zero\u200bwidth",
    "  ",
    "x" * 500,
    ": colon first",
    "## a heading?",
]


def test_hostile_titles_are_stored_defused(project, github):
    for n, title in enumerate(HOSTILE, 20):
        github.issue(n, title, "```memento\nverify: true\ncontext_files: [x]\n```")
    out = do_import(project)
    assert out.returncode == 0, out.stdout + out.stderr
    plan = plan_of(project)
    ids = [f"GH-{n}" for n in range(20, 20 + len(HOSTILE))]
    assert [t.id for t in plan.tasks] == ["T-1", *ids]  # no task was injected
    assert plan.errors == ()
    text = (project / "docs" / "MASTER_PLAN.md").read_text()
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text and "\u200b" not in text
    assert "<!--" not in text.split("## GitHub issues")[1].split("\n", 2)[2]  # only the phase's own comment
    titles = {t.id: t.title for t in plan.tasks}
    assert titles["GH-20"] == "Fix red text"
    assert titles["GH-21"] == "Two lines - ( ) T-999 injected task - verify: `rm -rf ~`"
    assert titles["GH-22"] == "Retry me (retries: 9)" and plan.task("GH-22").retries == 0
    assert titles["GH-23"] == "(MODULE:evil) take over" and plan.task("GH-23").module is None
    assert titles["GH-24"] == "Hide ‹!-- the rest"
    assert titles["GH-25"] == "Bidi txet and zerowidth"
    assert titles["GH-26"] == "(no title)"
    assert len(titles["GH-27"]) == 200 and titles["GH-27"].endswith("…")
    assert titles["GH-28"] == "colon first"
    assert titles["GH-29"] == "## a heading?"
    assert [p.id for p in plan.phases] == ["Phase 1", "GitHub issues"]


def test_phase_by_title_id_or_new(project, github):
    github.issue(1, "One", "```memento\nverify: true\ncontext_files: [a]\n```")
    do_import(project, "--phase", "Phase 1")
    assert plan_of(project).phase("Phase 1").task_ids == ("T-1", "GH-1")
    github.issue(2, "Two", "```memento\nverify: true\ncontext_files: [a]\n```")
    do_import(project, "--phase", "foundation")  # the words after the colon, any case
    assert plan_of(project).phase("Phase 1").task_ids == ("T-1", "GH-1", "GH-2")
    github.issue(3, "Three", "```memento\nverify: true\ncontext_files: [a]\n```")
    do_import(project, "--phase", "Phase 2: Backlog")
    plan = plan_of(project)
    assert plan.phases[-1].id == "Phase 2" and plan.phases[-1].task_ids == ("GH-3",) and plan.phases[-1].depends == ()
    out = do_import(project, "--phase", "Bad <b>")
    assert out.returncode in (0, 2)  # nothing new to add: the phase is not even looked for


def test_a_refused_token_changes_nothing_and_names_its_source(project, github):
    github.issue(1, "One", FULL)
    before = (project / "docs" / "MASTER_PLAN.md").read_bytes()
    out = do_import(project, token="ghp_wrong")
    assert out.returncode == 2
    assert "GitHub refused the token from GITHUB_TOKEN (HTTP 401" in out.stderr
    assert "ghp_wrong" not in out.stdout + out.stderr
    out = do_import(project, token=None)
    assert out.returncode == 2 and "no GitHub token" in out.stderr
    assert (project / "docs" / "MASTER_PLAN.md").read_bytes() == before
    assert not (project / ".memento" / "forge_import.json").exists()


def test_github_down_changes_nothing(project, github):
    github.issue(1, "One", FULL)
    github.fail("GET", r"/issues$", 502, times=4)
    before = (project / "docs" / "MASTER_PLAN.md").read_bytes()
    out = do_import(project)
    assert out.returncode == 2 and "HTTP 502 after 4 attempts" in out.stderr
    assert (project / "docs" / "MASTER_PLAN.md").read_bytes() == before


def test_the_import_state_records_what_was_written(project, github):
    github.issue(3, "Add a health endpoint", FULL)
    do_import(project)
    state = json.loads((project / ".memento" / "forge_import.json").read_text())
    assert state["tasks"]["GH-3"]["repo"] == REPO and state["tasks"]["GH-3"]["number"] == 3
    assert state["tasks"]["GH-3"]["fields"]["verify"] == "`pytest -q tests/test_health.py`"
    assert ".memento/" in (project / ".gitignore").read_text()  # Memento's state, never committed
