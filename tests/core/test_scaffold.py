"""scaffold.py (SPEC §2): a workspace laid out from the bundled templates with the project's name and
the date filled in, what exists kept byte for byte, the runtime paths added to .gitignore once, and
one commit of exactly what was made. `memento init` run as a command is judged in
tests/core/cli/commands/test_init.py."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path

from memento_core.config.write import DEFAULT_CONFIG_TOML
from memento_core.scaffold import GITIGNORE_LINES, TEMPLATES, fill, init_workspace, template

NOW = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def test_fill_replaces_only_the_named_placeholders():
    assert fill('{project} on {date}: {"json": {x}}', {"project": "calc", "date": "2026-03-04"}) == \
        'calc on 2026-03-04: {"json": {x}}'


def test_a_new_workspace_is_every_template_filled_and_one_commit(tmp_path, git_identity):
    report = init_workspace(tmp_path / "calc", project="Calc API", now=NOW)
    root = report.root
    assert report.made_repo and report.kept == []
    assert report.created == [rel for _, rel in TEMPLATES] + ["memento.toml", ".gitignore"]
    assert (root / "memento.toml").read_text() == DEFAULT_CONFIG_TOML
    plan = (root / "docs" / "MASTER_PLAN.md").read_text()
    assert "Calc API" in plan and "{project}" not in plan
    assert (root / "docs" / "CURRENT_STATE.md").read_text() == fill(
        template("CURRENT_STATE.md"), {"project": "Calc API", "date": "2026-03-04", "now": "2026-03-04T05:06:07Z"})
    assert (root / "logs").is_dir() and (root / ".memento" / "claims").is_dir()
    assert (root / ".memento" / "locks").is_dir() and (root / "memory" / ".git").is_dir()
    assert git(root, "log", "--format=%s").splitlines() == ["memento: init workspace"]
    assert sorted(git(root, "show", "--name-only", "--format=", "HEAD").split()) == sorted(report.created)
    assert git(root, "status", "--porcelain") == ""


def test_again_nothing_is_overwritten_nothing_committed_and_the_name_is_the_folders(tmp_path, git_identity):
    root = tmp_path / "shop"
    first = init_workspace(root, commit=False)
    assert first.commit is None
    assert subprocess.run(["git", "rev-parse", "-q", "--verify", "HEAD"], cwd=root, capture_output=True).returncode
    assert "shop" in (root / "docs" / "MASTER_PLAN.md").read_text()
    (root / "docs" / "HUMAN_NOTES.md").write_text("mine\n")
    again = init_workspace(root)
    assert not again.made_repo and again.created == [] and again.commit is None
    assert sorted(again.kept) == sorted([rel for _, rel in TEMPLATES] + ["memento.toml"])
    assert (root / "docs" / "HUMAN_NOTES.md").read_text() == "mine\n"


def test_the_gitignore_gets_only_the_runtime_paths_it_lacks(tmp_path, git_identity):
    root = tmp_path / "proj"
    root.mkdir()
    (root / ".gitignore").write_text("*.log\nlogs\n.venv/")
    report = init_workspace(root)
    text = (root / ".gitignore").read_text()
    assert text.startswith("*.log\nlogs\n.venv/\n\n# Memento runtime state")
    assert [ln for ln in text.splitlines() if ln in GITIGNORE_LINES] == [".venv/", ".memento/", "memory/",
                                                                         ".memento_alert", ".aider*"]
    assert ".gitignore" in report.created
    assert ".gitignore" not in init_workspace(root).created  # nothing lacking now
    assert (root / ".gitignore").read_text() == text
