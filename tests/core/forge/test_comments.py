"""Status back (SPEC §19, ``land = "direct"``): one comment per task and change of state on its GitHub
issue, posted by the tick after the task's commit, kept and retried by later ticks until it lands;
a forge that is down never fails a tick. Real ticks (`python -m memento_core.tick`), a real agent
through the `command` preset, a real bare remote, the GitHub stand-in checked against GitHub's
OpenAPI description. And the token: never written anywhere, never in the agent's environment."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memento_core.plan.scan import parse_plan
from memento_core.scaffold import init_workspace
from tests.core.modes import MODES
from tests.core.sandbox.test_home import _environ_of
from tests.forge_standin import TOKEN

PY = sys.executable
AGENTS = Path(__file__).resolve().parents[2] / "agents"
REPO = "octo-org/shop"
BLOCK = "```memento\nverify: test -f {id}.txt\ncontext_files: [{id}.txt]\n```\n"

PLAN = """# MASTER_PLAN: shop

## Meta
- tick_mode: auto
- max_retries: {retries}
- max_tasks_per_tick: 1
"""


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def env_with(token: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_TOKEN", "GH_TOKEN")}
    env["PATH"] = "/usr/bin:/bin"  # no gh: the token is GITHUB_TOKEN's or none
    if token is not None:
        env["GITHUB_TOKEN"] = token
    return env


def make_project(tmp_path: Path, github, *, agent: str = "", sandbox: str = "none", retries: int = 2) -> Path:
    root = tmp_path / "shop"
    init_workspace(root, project="shop", commit=False)
    (root / "docs" / "MASTER_PLAN.md").write_text(PLAN.format(retries=retries))
    command = agent or f"{PY} {AGENTS / 'does_task.py'} {{task_id}}.txt"
    (root / "memento.toml").write_text(
        f'[agent]\npreset = "command"\ncommand = """{command}"""\ntimeout = "90s"\n'
        f'[verify]\ntimeout = "60s"\n[sandbox]\nmode = "{sandbox}"\n[forge]\napi = "{github.api}"\n')
    git(root, "add", "-A")
    git(root, "commit", "-qm", "setup")
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(root, "remote", "add", "origin", str(bare))
    git(root, "push", "-q", "-u", "origin", "HEAD:main")
    return root


@pytest.fixture
def project(tmp_path, git_identity, github) -> Path:
    return make_project(tmp_path, github)


def do_import(root: Path, token: str = TOKEN) -> None:
    out = subprocess.run([PY, "-m", "memento_core.cli", "plan", "import", "github", REPO, str(root)],
                         capture_output=True, text=True, timeout=120, env=env_with(token))
    assert out.returncode in (0, 1), out.stdout + out.stderr


def tick(root: Path, token: str | None = TOKEN) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "memento_core.tick", "--project", str(root)], capture_output=True,
                          text=True, timeout=300, env=env_with(token))


def pending(root: Path) -> list[dict]:
    path = root / ".memento" / "forge_comments.json"
    return json.loads(path.read_text())["pending"] if path.exists() else []


def cron_log(root: Path) -> str:
    path = root / "logs" / "cron.log"
    return path.read_text() if path.exists() else ""


def completed(root: Path, task_id: str) -> str:
    return git(root, "log", "-1", "--format=%H", f"--grep=^memento: complete {task_id} ").strip()


def test_a_passed_task_gets_one_comment_with_its_commit_even_after_a_502_that_hid_it(project, github):
    github.issue(1, "Write one", BLOCK.format(id="GH-1"))
    do_import(project)
    github.fail("POST", r"/issues/1/comments$", 502, after=True)  # GitHub made it, then said 502
    first = tick(project)
    assert first.returncode == 0, first.stdout + first.stderr
    assert parse_plan(project / "docs" / "MASTER_PLAN.md").task("GH-1").status == "x"
    assert len(github.posted(1)) == 1
    assert len(pending(project)) == 1 and "forge: 1 comment(s) wait for GitHub" in cron_log(project)
    doctor = subprocess.run([PY, "-m", "memento_core.cli", "doctor", str(project)], capture_output=True, text=True,
                            timeout=120, env=env_with(None))
    assert "[WARNING]" in doctor.stdout and f"1 status comment(s) wait to be posted on GitHub ({REPO}#1)" \
        in doctor.stdout and "HTTP 502" in doctor.stdout
    second = tick(project)
    assert second.returncode == 0, second.stdout + second.stderr
    (body,) = github.posted(1)  # found on the issue, not posted again
    assert pending(project) == []
    sha = completed(project, "GH-1")
    assert sha and f"in commit {sha}" in body and "GH-1 passed" in body
    assert git(project, "rev-parse", "HEAD").strip() in (sha, git(project, "rev-parse", "HEAD").strip())
    third = tick(project)
    assert third.returncode == 0 and len(github.posted(1)) == 1  # one comment per change of state
    posts = [r for r in github.requests if r["method"] == "POST"]
    assert len(posts) == 1


def test_github_down_for_ticks_never_fails_one_and_the_comment_lands_once_later(project, github):
    github.issue(1, "Write one", BLOCK.format(id="GH-1"))
    github.issue(2, "Write two", BLOCK.format(id="GH-2"))
    do_import(project)
    github.fail("POST", r"/comments$", 502, times=1)
    github.fail("GET", r"/comments$", 502, times=4)  # tick 2's look before its second try: all four attempts
    for _ in range(2):
        out = tick(project)
        assert out.returncode == 0, out.stdout + out.stderr
    plan = parse_plan(project / "docs" / "MASTER_PLAN.md")
    assert plan.task("GH-1").status == "x" and plan.task("GH-2").status == "x"
    assert github.posted(1) == [] and github.posted(2) == []
    assert [p["task"] for p in pending(project)] == ["GH-1", "GH-2"]
    assert cron_log(project).count("wait for GitHub") == 2
    out = tick(project)
    assert out.returncode == 0
    assert len(github.posted(1)) == 1 and len(github.posted(2)) == 1 and pending(project) == []
    assert completed(project, "GH-2") in github.posted(2)[0]


def test_a_blocked_task_says_why_on_its_issue(tmp_path, git_identity, github):
    root = make_project(tmp_path, github, agent=f"{PY} {AGENTS / 'does_task.py'} other.txt", retries=1)
    github.issue(5, "Cannot be done", "```memento\nverify: test -f GH-5.txt\ncontext_files: [other.txt]\n```")
    do_import(root)
    out = tick(root)
    assert out.returncode == 1, out.stdout + out.stderr  # blocked: needs attention
    assert parse_plan(root / "docs" / "MASTER_PLAN.md").task("GH-5").status == "!"
    (body,) = github.posted(5)
    assert "GH-5 is blocked" in body and "```\n" in body and "memento reset GH-5" in body
    assert re.search(r"<!-- memento:GH-5:!:1 -->$", body)


def test_a_refused_token_keeps_the_comment_and_the_next_tick_with_a_good_one_posts_it(project, github):
    github.issue(1, "Write one", BLOCK.format(id="GH-1"))
    do_import(project)
    out = tick(project, token="ghp_revoked")
    assert out.returncode == 0, out.stdout + out.stderr
    assert parse_plan(project / "docs" / "MASTER_PLAN.md").task("GH-1").status == "x"
    assert "GitHub refused the token from GITHUB_TOKEN (HTTP 401" in cron_log(project)
    assert "ghp_revoked" not in cron_log(project) and len(pending(project)) == 1
    out = tick(project, token=None)
    assert out.returncode == 0 and "no GitHub token" in cron_log(project) and len(pending(project)) == 1
    out = tick(project)
    assert out.returncode == 0 and len(github.posted(1)) == 1 and pending(project) == []


def _files_holding(needle: bytes, *folders: Path) -> list[str]:
    found = []
    for folder in folders:
        for path in folder.rglob("*"):
            try:
                if path.is_file() and not path.is_symlink() and needle in path.read_bytes():
                    found.append(str(path))
            except OSError:
                continue
    return found


@pytest.mark.parametrize("mode", MODES)
def test_the_token_is_never_written_nor_in_the_agents_environment(tmp_path, git_identity, github, mode,
                                                                     monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = tmp_path / "shop"
    worker = root / ".memento" / "worker"
    agent = f"{PY} {AGENTS / 'steals_secrets.py'} --wait {worker}"
    root = make_project(tmp_path, github, agent=agent, sandbox=mode)
    github.issue(1, "Say hello", "```memento\nverify: grep -q done hello.txt\ncontext_files: [hello.txt]\n```")
    do_import(root)
    seen: list[list[bytes]] = []

    def watch() -> None:
        deadline = time.monotonic() + 120
        while not (worker / "waiting").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        seen.append(_environ_of("steals_secrets.py"))
        (worker / "go").write_text("")

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        out = tick(root)
    finally:
        (worker / "go").parent.mkdir(parents=True, exist_ok=True)
        (worker / "go").write_text("")
        watcher.join()
    assert out.returncode == 0, out.stdout + out.stderr
    assert parse_plan(root / "docs" / "MASTER_PLAN.md").task("GH-1").status == "x"
    assert len(github.posted(1)) == 1  # the token was there, and used
    assert all(r["authorization"] == f"Bearer {TOKEN}" for r in github.requests)
    needle = TOKEN.encode()
    assert seen and seen[0], "the agent was not seen in /proc"
    for environ in seen[0]:
        names = {item.split(b"=", 1)[0] for item in environ.split(b"\0") if item}
        assert b"GITHUB_TOKEN" not in names and needle not in environ
    assert "done" in (root / "hello.txt").read_text() and "ENVIRON" in (root / "hello.txt").read_text()
    objects = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch"], cwd=root, capture_output=True,
                             check=True).stdout
    assert b"ENVIRON" in objects and needle not in objects  # the agent's loot was committed, without it
    bare = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch"], cwd=tmp_path / "remote.git",
                          capture_output=True, check=True).stdout
    assert needle not in bare
    assert _files_holding(needle, root, tmp_path / "state") == []
    assert needle not in (out.stdout + out.stderr).encode()


@pytest.mark.parametrize("mode", MODES)
def test_an_agent_that_queues_a_comment_of_its_own_posts_nothing(tmp_path, git_identity, github, mode):
    """With the person's token Memento would post what the queue holds: the agent's entries are
    put back at its guards, its attempt fails naming the file, and GitHub hears only Memento."""
    root = make_project(tmp_path, github, agent=f"{PY} {AGENTS / 'forges_forge_comments.py'} {{task_id}}.txt",
                        sandbox=mode, retries=1)
    github.issue(1, "Write one", BLOCK.format(id="GH-1"))
    do_import(root)
    out = tick(root)
    posted = github.posted(1)
    assert not any("@everyone" in body for body in posted), posted
    assert all("GH-9" not in json.dumps(p) for p in pending(root))
    state = json.loads((root / ".memento" / "forge_import.json").read_text())
    assert set(state["tasks"]) == {"GH-1"}
    log = "".join(p.read_text(errors="replace") for p in (root / "logs").glob("tick_*.log"))
    if mode == "none":
        assert "forged .memento/forge_comments.json" in log
        assert parse_plan(root / "docs" / "MASTER_PLAN.md").task("GH-1").status == "!", out.stdout
        status = (root / "docs" / "TICK_STATUS.md").read_text()
        assert "changed Memento's own state" in status and ".memento/forge_comments.json" in status
        (body,) = posted  # Memento's own: the task is blocked
        assert "GH-1 is blocked" in body and "forge_comments.json" in body
    else:
        assert "refused .memento/forge_comments.json" in log
        assert parse_plan(root / "docs" / "MASTER_PLAN.md").task("GH-1").status == "x"
        (body,) = posted
        assert "GH-1 passed" in body


def test_a_comment_already_on_the_issue_is_not_posted_again(tmp_path, github):
    """A fleet's hosts each see GH-1 pass: with ``look_first`` the second finds the first's comment."""
    from memento_core.forge.comments import post_pending
    from memento_core.forge.github import GitHub, Token
    from memento_core.workspace import Workspace

    github.issue(1, "One")
    marker = "memento:GH-1:x:1"
    github._comment(1, f"passed\n\n<!-- {marker} -->")
    comment = {"task": "GH-1", "repo": REPO, "number": 1, "marker": marker, "body": f"again <!-- {marker} -->",
               "tries": 0}
    gh = GitHub(github.api, Token(TOKEN))
    data = {"pending": [dict(comment)]}
    assert post_pending(Workspace(tmp_path), data, gh, look_first=True) == (1, "")
    assert data["pending"] == [] and len(github.posted(1)) == 1
    data = {"pending": [dict(comment)]}  # without looking (one host, first try): posted
    assert post_pending(Workspace(tmp_path), data, gh) == (1, "")
    assert len(github.posted(1)) == 2
