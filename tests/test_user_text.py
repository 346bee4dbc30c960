"""Text a person reads never says "SPEC §N" (issue 38, item 12): users have no SPEC.

Read here as a person meets it: the `--help` of every command and subcommand
(`memento`, `python -m memento_core.tick`, `memento-tui`), every file `memento
init` and `memento demo` write, the GitHub workflow and the systemd units `memento
cron install` prints, what `status`, `lint`, `doctor`, `tasks` and `report` say,
and an error memento.toml can cause. docs/ and code comments may cite the SPEC.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from memento_core.cli.main import build_parser

SPEC = re.compile(r"SPEC\s*§|SPEC\.md|\bSPEC\b")


def helps(parser: argparse.ArgumentParser, name: str):
    """(command line, --help text) of ``parser`` and every subcommand below it."""
    yield name, parser.format_help()
    for action in parser._actions:  # noqa: SLF001 - argparse keeps subparsers here only
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            for sub, subparser in action.choices.items():
                yield from helps(subparser, f"{name} {sub}")


def run(*argv: str, cwd: Path, env: dict | None = None) -> str:
    done = subprocess.run([sys.executable, *argv], cwd=cwd, capture_output=True, text=True, timeout=180,
                          env={**os.environ, **(env or {})})
    return done.stdout + done.stderr


def files_under(root: Path):
    for path in sorted(root.rglob("*")):
        if ".git" in path.relative_to(root).parts or not path.is_file():
            continue
        try:
            yield path, path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue


def test_no_help_of_any_command_cites_the_spec(tmp_path):
    said = {name: text for name, text in helps(build_parser(), "memento")}
    assert len(said) > 25  # every command and subcommand (cron install, memory write, plan draft, …)
    said["python -m memento_core.tick --help"] = run("-m", "memento_core.tick", "--help", cwd=tmp_path)
    said["memento-tui --help"] = run("-m", "memento_tui.app", "--help", cwd=tmp_path)
    cited = {name: [ln for ln in text.splitlines() if SPEC.search(ln)] for name, text in said.items()}
    assert not {k: v for k, v in cited.items() if v}


@pytest.fixture
def projects(tmp_path, monkeypatch):
    for var, value in {"GIT_AUTHOR_NAME": "Dev", "GIT_AUTHOR_EMAIL": "dev@example.invalid",
                       "GIT_COMMITTER_NAME": "Dev", "GIT_COMMITTER_EMAIL": "dev@example.invalid",
                       "MEMENTO_CRONTAB_FILE": str(tmp_path / "crontab")}.items():
        monkeypatch.setenv(var, value)
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    run("-m", "memento_core.cli", "init", cwd=fresh)
    demo = tmp_path / "demo"
    run("-m", "memento_core.cli", "demo", str(demo), cwd=tmp_path)
    return fresh, demo


def test_no_file_init_or_demo_writes_and_no_output_cites_the_spec(projects):
    fresh, demo = projects
    said: dict[str, str] = {}
    for root in (fresh, demo):
        for path, text in files_under(root):
            said[str(path.relative_to(root.parent))] = text
        for words in (["status"], ["lint"], ["doctor"], ["tasks"], ["report"], ["cron", "install", "--github"],
                      ["cron", "install", "--systemd"], ["agents"], ["tick"]):
            said[f"{root.name}: memento {' '.join(words)}"] = run("-m", "memento_core.cli", *words, cwd=root)
    assert any("GitHub Actions" in text for text in said.values())  # the workflow was read
    toml = fresh / "memento.toml"
    toml.write_text(toml.read_text().replace("env = []", 'env = ["SSH_AUTH_SOCK"]'))
    said["an env memento.toml may not pass"] = run("-m", "memento_core.cli", "lint", cwd=fresh)
    assert "SSH_AUTH_SOCK is never passed to the agent" in said["an env memento.toml may not pass"]
    cited = {name: [ln for ln in text.splitlines() if SPEC.search(ln)] for name, text in said.items()}
    assert not {k: v for k, v in cited.items() if v}
