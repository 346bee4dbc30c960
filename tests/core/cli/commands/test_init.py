"""`memento init` run as a person runs it (a real subprocess): the workspace laid out and committed, again
without overwriting anything, and in an existing repository only its own files committed."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.core.cli.runs import PLAN, memento


def test_init_lays_out_the_workspace_and_commits_it(ws: Path):
    for rel in (PLAN, "docs/PROJECT_MAP.md", "docs/TICK_STATUS.md", "docs/HUMAN_NOTES.md",
                "docs/CURRENT_STATE.md", "scripts/tick_worker_system_prompt.md", "memento.toml",
                ".memento_ignore", ".memento_cleanignore", ".gitignore"):
        assert (ws / rel).is_file(), rel
    assert (ws / "logs").is_dir() and (ws / ".memento" / "claims").is_dir()
    gitignore = (ws / ".gitignore").read_text()
    for line in ("logs/", ".memento/", "memory/", ".memento_alert"):
        assert line in gitignore.splitlines()
    log = subprocess.run(["git", "log", "--format=%s"], cwd=ws, capture_output=True, text=True).stdout
    assert log.strip() == "memento: init workspace"
    assert subprocess.run(["git", "status", "--porcelain"], cwd=ws, capture_output=True, text=True).stdout == ""
    prompt = (ws / "scripts/tick_worker_system_prompt.md").read_text()
    assert "tick_result.md" in prompt and "context_files" in prompt and "Do not commit" in prompt
    assert memento("lint", str(ws)).returncode == 0


def test_init_is_idempotent_and_never_overwrites(ws: Path):
    (ws / PLAN).write_text((ws / PLAN).read_text() + "\n<!-- mine -->\n")
    r = memento("init", str(ws))
    assert r.returncode == 0
    assert "created" not in r.stdout and "already a Memento workspace" in r.stdout
    assert (ws / PLAN).read_text().endswith("<!-- mine -->\n")


def test_init_in_an_existing_repository_commits_only_its_own_files(tmp_path: Path, git_identity):
    root = tmp_path / "existing"
    root.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    (root / "work.py").write_text("print('uncommitted work')\n")
    (root / ".gitignore").write_text("*.log")
    assert memento("init", "--project", str(root)).returncode == 0
    status = subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True).stdout
    assert status == "?? work.py\n"
    assert (root / ".gitignore").read_text().startswith("*.log\n")
