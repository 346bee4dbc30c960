"""Red team, both modes (SPEC §13): the agent's `.gitattributes` changes nothing Memento measures or
commits, a rollback restores modes and removes what the agent hid with `.gitignore`, and a
change may not add a symbolic link out of the work tree or at a guarded or Memento file.

Each hostile agent is in tests/agents/; each test judges the commits and the files on disk.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from memento_core.tick.__main__ import run_tick
from tests.core.modes import MODES

from .test_engine import PY, agent, git
from .test_ignored import GOOD, TASK, calc_ws

IN_SRC = TASK.replace("[src/calc.py]", "[src/]")


def committed(root: Path, rev: str, path: str) -> bytes:
    return subprocess.run(["git", "cat-file", "blob", f"{rev}:{path}"], cwd=root, capture_output=True,
                          check=True).stdout


def only_docs_since(root: Path, start: str) -> None:
    for sha in git(root, "rev-list", f"{start}..HEAD").split():
        files = git(root, "show", "--name-only", "--format=", sha).split()
        assert all(f.startswith("docs/") for f in files), files


# ---------------------------------------------------------------- attributes


@pytest.mark.parametrize("mode", MODES)
def test_a_working_tree_encoding_commits_the_bytes_verify_ran(tmp_path, mode):
    ws = calc_ws(tmp_path, agent("bends_attributes.py", "encoding"), mode, tasks=IN_SRC)
    (result,) = run_tick(ws.root).results
    assert result.passed, result.reason
    on_disk = (ws.root / "src" / "calc.py").read_bytes()
    assert b"a + b" in on_disk
    assert committed(ws.root, "HEAD", "src/calc.py") == on_disk  # not UTF-7 decoded: "a  b"


@pytest.mark.parametrize("mode", MODES)
def test_a_binary_attribute_hides_no_line_of_a_rewrite(tmp_path, mode):
    ws = calc_ws(tmp_path, agent("bends_attributes.py", "binary"), mode, tasks=IN_SRC)
    start = git(ws.root, "rev-parse", "HEAD").strip()
    (result,) = run_tick(ws.root).results
    assert not result.passed
    assert "diff too large: 602 lines > max_diff_lines 50" in result.reason, result.reason
    only_docs_since(ws.root, start)
    assert (ws.root / "src" / "calc.py").read_text() == GOOD
    assert not (ws.root / "src" / ".gitattributes").exists()


# ---------------------------------------------------------------- modes, .gitignore


@pytest.mark.parametrize("mode", MODES)
def test_the_rollback_restores_modes(tmp_path, mode):
    ws = calc_ws(tmp_path, agent("chmods_tracked.py", "other.txt=000", "run.sh=644", "guarded.txt=755",
                                 "src=700", "tests/test_calc.py=640", "pkg=777"), mode)
    root = ws.root
    (root / "run.sh").write_text("#!/bin/sh\necho run\n")
    (root / "run.sh").chmod(0o755)
    (root / "pkg" / "sub").mkdir(parents=True)  # pkg holds no file itself: only its folder sub/ does
    (root / "pkg" / "sub" / "mod.py").write_text("X = 1\n")
    git(root, "add", "run.sh", "pkg")
    git(root, "commit", "-qm", "a script and a package")
    paths = ["other.txt", "run.sh", "guarded.txt", "src", "tests/test_calc.py", "src/calc.py", "pkg", "pkg/sub"]
    before = {p: stat.S_IMODE(os.lstat(root / p).st_mode) for p in paths}
    (result,) = run_tick(root).results
    assert not result.passed
    assert {p: stat.S_IMODE(os.lstat(root / p).st_mode) for p in paths} == before
    assert not git(root, "status", "--porcelain", "--", "other.txt", "run.sh", "guarded.txt", "src", "tests")


@pytest.mark.parametrize("mode", MODES)
def test_the_rollback_removes_what_the_agent_hid_with_gitignore(tmp_path, mode):
    ws = calc_ws(tmp_path, agent("hides_with_gitignore.py"), mode)
    root = ws.root
    ignore = (root / ".gitignore").read_bytes()
    (result,) = run_tick(root).results
    assert not result.passed
    assert (root / ".gitignore").read_bytes() == ignore
    assert not (root / "stash").exists()
    assert not (root / "helper.py").exists()


@pytest.mark.parametrize("mode", MODES)
def test_the_rollback_removes_what_a_new_gitignore_in_a_subfolder_hid(tmp_path, mode):
    ws = calc_ws(tmp_path, agent("hides_with_gitignore.py", "nested"), mode)
    root = ws.root
    (result,) = run_tick(root).results
    assert not result.passed
    assert sorted(p.name for p in (root / "src").iterdir()) == ["calc.py"]
    saved = [p.relative_to(ws.rollback_dir).as_posix() for p in ws.rollback_dir.rglob("helper.py")]
    assert len(saved) == 1 and saved[0].endswith("/files/src/helper.py"), saved  # saved before removal


# ---------------------------------------------------------------- links


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("what", ["outside", "guarded", "own"])
def test_a_link_out_of_the_tree_or_at_a_guarded_or_memento_file_is_refused(tmp_path, mode, what):
    outside = tmp_path / "a-persons-file.txt"
    outside.write_text("a person's, outside the project\n")
    tasks = IN_SRC.replace("  - retries", "  - guard_files: [guarded.txt]\n  - retries")
    ws = calc_ws(tmp_path, agent("adds_links.py", what, str(outside)), mode, tasks=tasks)
    start = git(ws.root, "rev-parse", "HEAD").strip()
    (result,) = run_tick(ws.root).results
    assert not result.passed
    assert "added symbolic link(s) that may not be committed: src/" in result.reason, result.reason
    only_docs_since(ws.root, start)
    assert not [p for p in (ws.root / "src").iterdir() if p.is_symlink()]
    assert outside.read_text() == "a person's, outside the project\n"


@pytest.mark.parametrize("mode", MODES)
def test_a_link_inside_the_tree_is_committed(tmp_path, mode):
    ws = calc_ws(tmp_path, agent("adds_links.py", "inside"), mode, tasks=IN_SRC)
    (result,) = run_tick(ws.root).results
    assert result.passed, result.reason
    assert committed(ws.root, "HEAD", "src/calc_link") == b"calc.py"


@pytest.mark.parametrize("mode", MODES)
def test_a_link_replacing_a_tracked_folder_is_rolled_back(tmp_path, mode):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "calc.py").write_text("a person's other project\n")
    ws = calc_ws(tmp_path, agent("adds_links.py", "replace", str(elsewhere)), mode)
    (result,) = run_tick(ws.root).results
    assert not result.passed
    src = ws.root / "src"
    assert src.is_dir() and not src.is_symlink()
    assert (src / "calc.py").read_text() == GOOD
    assert [p.name for p in elsewhere.iterdir()] == ["calc.py"]
    assert (elsewhere / "calc.py").read_text() == "a person's other project\n"


def test_the_fixture_verify_really_runs_pytest(tmp_path):
    """The guard against a vacuous suite: the tests above see verify's own verdict."""
    ws = calc_ws(tmp_path, agent("does_task.py", "src/calc.py", "x"), "none")
    (result,) = run_tick(ws.root).results
    assert not result.passed and "verify failed" in result.reason
    assert PY in (ws.root / "docs" / "MASTER_PLAN.md").read_text()
