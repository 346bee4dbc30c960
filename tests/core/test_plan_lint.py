"""`memento lint` says when verify starts a program that is not there (issue 38, item 6).

`verify: pytset -q tests/` linted clean, and every retry then ended with exit
127. Now lint warns at the verify line, offers the program that is there, and
exits 1; a verify whose programs exist (the README's) stays clean.
"""

from __future__ import annotations

import shutil

import pytest

from memento_core.plan_lint import verify_programs
from tests.first_project import first_plan, memento, write_plan


@pytest.fixture
def greeter(tmp_path, git_identity):
    root = tmp_path / "greeter"
    root.mkdir()
    assert memento(root, "init").returncode == 0
    return root


def test_a_verify_program_not_on_path_is_a_lint_warning_with_the_near_one(greeter):
    assert shutil.which("pytest"), "the test needs pytest on PATH, as the person's machine has"
    write_plan(greeter)
    assert memento(greeter, "lint").returncode == 0  # grep is there: clean
    write_plan(greeter, first_plan().replace("grep -qx hello greeting.txt", "pytset -q tests/"))
    lint = memento(greeter, "lint")
    assert lint.returncode == 1, lint.stdout + lint.stderr
    line = next(ln for ln in lint.stdout.splitlines() if "pytset" in ln)
    assert line.startswith("[warn] docs/MASTER_PLAN.md:") and "T-101 verify runs `pytset`, which is not on PATH" in line
    assert "did you mean `pytest`?" in line and "exit 127" in line
    plan_lines = (greeter / "docs" / "MASTER_PLAN.md").read_text().splitlines()
    number = int(line.split(":")[1])
    assert "verify: `pytset" in plan_lines[number - 1]


def test_the_programs_of_a_verify_command_line():
    assert verify_programs("cd src && FOO=1 pytest -q tests/ | tee out.txt") == ["pytest", "tee"]
    assert verify_programs("test -f HELLO.md") == []
    assert verify_programs("./scripts/check.sh && bash -c 'exit 0'") == ["bash"]
