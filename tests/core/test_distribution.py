"""The distribution's name is our own on PyPI ("memento" is an unrelated 2006 package), the
commands keep their names, and the GitHub workflow installs this project, never `memento`."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

from memento_core.cron import DISTRIBUTION, default_requirement, github_workflow

ROOT = Path(__file__).resolve().parents[2]


def test_the_distribution_name_is_ours_and_the_commands_keep_theirs():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == DISTRIBUTION == "memento-tick"
    assert set(project["scripts"]) == {"memento", "memento-tui"}


def _install_step(text: str) -> str:
    steps = yaml.safe_load(text)["jobs"]["tick"]["steps"]
    return next(s["run"] for s in steps if s.get("name") == "Install Memento")


def test_the_workflow_never_installs_the_unrelated_memento(tmp_path, git_identity):
    assert _install_step(github_workflow("p")[0]) == f"python -m pip install {DISTRIBUTION}"
    assert default_requirement(ROOT) == "."  # Memento's own checkout installs itself
    assert default_requirement(tmp_path) == DISTRIBUTION
    root = tmp_path / "proj"
    env = {**os.environ, "MEMENTO_CRONTAB_FILE": str(tmp_path / "crontab")}
    subprocess.run([sys.executable, "-m", "memento_core.cli", "init", str(root)], check=True, env=env,
                   capture_output=True)

    def workflow() -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "memento_core.cli", "cron", "install", "--github", str(root)],
                              capture_output=True, text=True, env=env)

    proc = workflow()
    assert proc.returncode == 0, proc.stderr
    assert _install_step(proc.stdout) == "python -m pip install memento-tick" and "--pip" in proc.stderr
    # A project that is Memento's own repository (Memento run on itself) installs the checkout.
    (root / "pyproject.toml").write_text(f'[project]\nname = "{DISTRIBUTION}"\n')
    assert _install_step(workflow().stdout) == "python -m pip install ."


def test_ci_uninstalls_the_old_distribution_before_installing():
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    uninstall = run.index("pip uninstall --quiet -y memento")
    assert uninstall < run.index('pip install --quiet -e ".[dev]"')
