"""Files that change how Python or the test runner starts (tick/startup.py, SPEC §13): on values."""

from __future__ import annotations

import pytest

from memento_core.git.changes import FileChange
from memento_core.plan.scan import parse_plan_text
from memento_core.tick.guards import check
from memento_core.tick.startup import (
    added_startup_files,
    is_startup_file,
    named_exactly,
    runner_modules,
)

from .test_guards import SNAP, seen


@pytest.mark.parametrize(("verify", "module"), [
    ("PYTHONPATH=src python -m pytest -q", "pytest"),
    ("python3.11 -m mypkg.testing --fast", "mypkg"),
    ("uv run --frozen green -vv", "green"),
    ("timeout 60 ward test", "ward"),
    ("cd src && py.test -x", "pytest"),
    ("make check; ./bin/my-runner", "my_runner"),
    ("coverage run -m behave && coverage report", "behave"),
])
def test_the_verify_commands_program_and_module_are_runners(verify, module):
    assert module in runner_modules(verify)


def test_the_common_runners_are_runners_whatever_verify_says():
    found = runner_modules("npm test")
    assert {"pytest", "_pytest", "unittest", "nose2", "sitecustomize", "usercustomize"} <= found
    assert "python" not in runner_modules("python -m pytest") and "src" not in runner_modules("PYTHONPATH=src x")


@pytest.mark.parametrize("path", [
    "src/sitecustomize.py", "usercustomize.py", "src/sitecustomize/__init__.py", "lib/zz.pth", "tests/conftest.py",
    "src/pytest.py", "src/pytest/__init__.py", "src/pytest/__main__.py", "src/_pytest/__init__.py",
    "unittest.py", "nose2.py", "src/pytest.cpython-311-x86_64-linux-gnu.so", "src/pluggy.abi3.so",
])
def test_what_changes_how_python_or_the_runner_starts(path):
    assert is_startup_file(path, runner_modules("python -m pytest"))


@pytest.mark.parametrize("path", [
    "src/app.py", "tests/test_pytest.py", "tests/unittest/test_x.py", "src/my_pytest.py", "docs/conftest.md",
    "src/pytest.txt", "src/pth.py", "src/pytest/helpers.py",
])
def test_what_does_not(path):
    assert is_startup_file(path, runner_modules("python -m pytest")) is False


@pytest.mark.parametrize("path", [
    "memento_core.py", "memento_core/__init__.py", "memento_core/__main__.py", "memento_core/tick.py",
    "memento_core/tick/__init__.py", "memento_core/tick/__main__.py", "src/memento_core/__init__.py",
    "memento_tui.py", "memento_tui/__init__.py", "memento_tui/app.py", "memento_tui/app/__main__.py",
])
def test_a_shadow_of_memento_changes_how_the_next_tick_starts(path):
    """What `python -m memento_core.tick` or `-m memento_tui.app`, run by hand in the project's folder,
    would import first; the namespace package's entries only in the root (where that run starts)."""
    assert is_startup_file(path, runner_modules("npm test"))


@pytest.mark.parametrize("path", [
    "memento_core/cron.py", "memento_core/tick/run.py", "memento_tui/screens.py", "src/memento_core/tick/__main__.py",
    "docs/memento_core.md", "my_memento_core.py",
])
def test_a_file_of_a_memento_package_that_is_there_does_not(path):
    """Memento's own checkout as a project adds modules to its packages: only their entries count."""
    assert not is_startup_file(path, runner_modules("npm test"))


def test_only_the_exact_file_names_it():
    assert named_exactly("src/conftest.py", ["src/", "./src/conftest.py"])
    assert named_exactly("src/conftest.py", ["/src/conftest.py"])
    assert not named_exactly("src/conftest.py", ["src/", "src/*.py", "src/**", "conftest.py"])
    assert not named_exactly("src/conftest.py", ["src/conftest.py/"])


def test_only_what_the_task_added_counts():
    changes = [FileChange("src/conftest.py", 3, 1, "modified"), FileChange("src/sitecustomize.py", 2, 0, "created"),
               FileChange("src/pytest.py", 1, 0, "added"), FileChange("src/x.pth", 0, 3, "deleted"),
               FileChange("src/usercustomize.py", 1, 0, "added", was_untracked=True)]
    assert added_startup_files(changes, "pytest", ["src/"]) == ["src/sitecustomize.py", "src/pytest.py"]
    assert added_startup_files(changes, "pytest", ["src/", "src/pytest.py"]) == ["src/sitecustomize.py"]


PLAN = """# MASTER_PLAN: t

## Meta
- max_diff_lines: 50

## Phase 1: One

- [~] T-1 First task
  - verify: `PYTHONPATH=src python -m pytest -q`
  - context_files: [src/, tests/conftest.py]
  - retries: 0
"""


def test_the_guard_names_each_path_and_leaves_a_named_one_and_an_edit_alone():
    task = parse_plan_text(PLAN).task("T-1")
    verdict = check(task, SNAP, seen(FileChange("src/app.py", 1, 1, "modified"),
                                     FileChange("src/sitecustomize.py", 2, 0, "created"),
                                     FileChange("src/pytest/__init__.py", 0, 0, "created"),
                                     FileChange("src/conftest.py", 1, 1, "modified"),
                                     FileChange("tests/conftest.py", 4, 0, "created")), 50)
    assert verdict.reasons == ("the agent added a file that changes how Python or the test runner starts: "
                               "src/sitecustomize.py, src/pytest/__init__.py (a task adds one only when its "
                               "context_files name that exact file; a folder is not enough)",)
    after = check(task, SNAP, seen(FileChange("src/sitecustomize.py", 2, 0, "created")), 50, after_verify=True)
    assert after.reasons[0].startswith("verify added a file that changes how Python")


@pytest.mark.parametrize("path", [
    "memento_core/__init__.cpython-311-x86_64-linux-gnu.so", "memento_core/tick.abi3.so",
    "memento_core/tick/__main__.so", "memento_core/tick/__init__.pyw", "memento_core.abi3.so",
    "memento_tui/app.cpython-311-x86_64-linux-gnu.so", "src/pytest/__init__.cpython-311-x86_64-linux-gnu.so",
])
def test_an_extension_module_is_a_module_too(path):
    """Python imports ``name.<tag>.so`` (or ``.pyw``) where it would import ``name.py``."""
    assert is_startup_file(path, runner_modules("python -m pytest"))
