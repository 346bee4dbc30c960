"""Scratch (SPEC §13 "A project's own tools keep working"): what a project's tools regenerate is
writable for verify in the sandbox as unconfined, never a task's change, and what the agent made
of it is gone before verify.

One test per cache kind, in both modes: a person's earlier run of the project's own command
(bytecode on, caches on) left the tool's cache; the task changes a file; verify, the same
command exactly, rewrites the cache. Before the scratch rule, under the default sandbox the
cache was "a person's ignored file", bound read-only: pytest left ``X.pyc.<pid>`` beside a
read-only ``X.pyc`` (committed with the task, or blamed as "outside context_files"), ruff and
mypy stopped with exit 2, the others wrote nothing. Each test judges the commit, the files on
disk and the cache's content, which says which run wrote it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sqlite3
import stat
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from memento_core import scratch
from memento_core.tick.__main__ import run_tick
from memento_core.workspace import own_file
from tests.core.scenarios.test_engine import PY, agent, git, make_ws

from .modes import MODES

JS = Path(__file__).resolve().parent / "fixtures" / "js_cache_writers.py"
CALC = "def add(a, b):\n    return a + b\n"
CALC_MORE = "def add(a, b):\n    total = a + b\n    return total\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n"
TEST_MORE = TEST + "\n\ndef test_more():\n    assert add(1, 2) == 3\n"
PROPERTY = ("from hypothesis import given, strategies as st\n\nfrom calc import add\n\n\n"
            "@given(st.integers(), st.integers())\ndef test_add(a, b):\n    assert add(a, b) == a + b\n")
PROPERTY_MORE = PROPERTY + ("\n\n@given(st.text())\ndef test_text(s):\n    assert add(s, '') == s\n")


@dataclass(frozen=True)
class Kind:
    """A tool, the project's command that runs it, and what it leaves."""

    name: str
    verify: str
    changed: str  # the file the task changes
    new_text: str
    gitignore: str = ""
    files: dict = field(default_factory=dict)  # more files of the project (committed)
    persons: dict = field(default_factory=dict)  # a person's ignored files (node_modules/…)
    earlier: tuple = ()  # (path, text) written for the person's earlier run only, then put back


PYTEST = f"{PY} -m pytest"
KINDS = [
    Kind("bytecode, .gitignore has *.pyc only", PYTEST, "tests/test_calc.py", TEST_MORE, "*.pyc\n"),
    Kind("bytecode, .gitignore says nothing", PYTEST, "tests/test_calc.py", TEST_MORE),
    Kind("pytest's cache", PYTEST, "tests/test_calc.py", TEST_MORE, "__pycache__/\n.pytest_cache/\n"),
    Kind("ruff's cache", f"{PY} -m ruff check .", "src/calc.py", CALC_MORE, "__pycache__/\n"),
    Kind("mypy's cache", f"{PY} -m mypy src", "src/calc.py", CALC_MORE, "__pycache__/\n"),
    Kind("hypothesis' database and unicode data", PYTEST, "tests/test_calc.py", PROPERTY_MORE,
         "__pycache__/\n.hypothesis/\n", files={"tests/test_calc.py": PROPERTY},
         earlier=(("src/calc.py", "def add(a, b):\n    return a + b + (a > 9)\n"),)),
    Kind("coverage's data file", f"{PY} -m coverage run -m pytest", "src/calc.py", CALC_MORE,
         "__pycache__/\n.coverage\n"),
    Kind("a runner's node_modules/.cache", f"{PY} {JS} runner tests/test_calc.py", "tests/test_calc.py",
         TEST_MORE, "node_modules/\n", persons={"node_modules/left-pad/index.js": b"module.exports = 1;\n"}),
    Kind("eslint's .eslintcache", f"{PY} {JS} eslint src/calc.py", "src/calc.py", CALC_MORE, ".eslintcache\n"),
    Kind("tsc's tsbuildinfo, not ignored", f"{PY} {JS} tsc src/calc.py", "src/calc.py", CALC_MORE),
]


def tools_env() -> dict[str, str]:
    """The person's shell for the earlier run: bytecode on (this machine may switch it off)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    return env


def cache_project(tmp_path: Path, kind: Kind, mode: str, command: str | None = None):
    """The project with the person's earlier run of ``kind.verify`` behind it; one task changing
    ``kind.changed``, verified by ``kind.verify``."""
    task = (f"- [ ] `T-1` Change {kind.changed}\n  - verify: `{kind.verify}`\n"
            f"  - context_files: [src/, tests/]\n  - retries: 0\n")
    command = command or agent("does_task.py", kind.changed, shlex.quote(kind.new_text.rstrip("\n")))
    ws = make_ws(tmp_path, command, tasks=task, sandbox=mode)
    root = ws.root
    files = {"src/calc.py": CALC, "tests/test_calc.py": TEST, "pytest.ini": "[pytest]\npythonpath = src\n",
             **kind.files}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    with (root / ".gitignore").open("a") as fh:
        fh.write(kind.gitignore)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "the project")
    for rel, data in kind.persons.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    for rel, text in kind.earlier:
        (root / rel).write_text(text)
    subprocess.run(kind.verify, shell=True, cwd=root, env=tools_env(), capture_output=True, timeout=120)
    for rel, _ in kind.earlier:
        (root / rel).write_text(files[rel])
    time.sleep(0.02)  # the task's change gets an mtime of its own (bytecode is keyed on it)
    return ws


def not_tracked(root: Path) -> dict[str, bytes]:
    """Every file git does not track, Memento's own aside: path -> bytes."""
    out = subprocess.run(["git", "ls-files", "-z", "--others", "--", "."], cwd=root, capture_output=True,
                         check=True).stdout.decode()
    return {p: (root / p).read_bytes() for p in out.split("\0")
            if p and not own_file(p) and (root / p).is_file()}


def judge_cache(root: Path, kind: Kind, started: float) -> None:
    """The cache holds what verify wrote for the changed file, not the earlier run's."""
    src = root / kind.changed
    if kind.name.startswith("bytecode"):
        # verify rewrote it (its print changed), and bytecode verify wrote never outlives the attempt
        # (a forged .pyc stamped like the source would be imported later: tests/core/scenarios/test_bytecode_left.py)
        log = next((root / "logs").glob("tick_*.log")).read_text()
        assert "[memento] bytecode verify made or rewrote, removed: tests/__pycache__/test_calc." in log, log
        assert not list((root / "tests" / "__pycache__").glob("test_calc.*.pyc"))
    elif kind.name == "pytest's cache":
        ids = json.loads((root / ".pytest_cache" / "v" / "cache" / "nodeids").read_text())
        assert "tests/test_calc.py::test_more" in ids
    elif kind.name.startswith(("ruff", "mypy")):
        folder = root / (".ruff_cache" if kind.name.startswith("ruff") else ".mypy_cache")
        assert max(p.stat().st_mtime for p in folder.rglob("*") if p.is_file()) >= started
    elif kind.name.startswith("hypothesis"):
        assert list((root / ".hypothesis" / "unicode_data").rglob("charmap.json.gz"))
    elif kind.name.startswith("coverage"):
        with sqlite3.connect(root / ".coverage") as db:
            lines = db.execute("select numbits from line_bits join file on file.id = line_bits.file_id "
                               "where file.path like '%/src/calc.py'").fetchone()[0]
        assert lines[0] & 0b1110 == 0b1110  # lines 1, 2 and 3 of the new calc.py ran
    else:
        made = {"runner": root / "node_modules/.cache/runner/results.json", "eslint": root / ".eslintcache",
                "tsc": root / "tsconfig.tsbuildinfo"}[kind.verify.split()[2]]
        assert str(src.stat().st_mtime_ns) in made.read_text()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", KINDS, ids=[k.name for k in KINDS])
def test_verify_rewrites_a_tools_cache_as_it_would_unconfined(tmp_path, kind, mode):
    ws = cache_project(tmp_path, kind, mode)
    root = ws.root
    persons = {rel: (root / rel).read_bytes() for rel in kind.persons}
    before = git(root, "rev-parse", "HEAD").strip()
    started = time.time() - 1
    (result,) = run_tick(root).results
    log = next((root / "logs").glob("tick_*.log")).read_text()
    assert result.passed, f"{result.reason}\n{log[-3000:]}"
    assert ("sandbox: bwrap" in log) == (mode == "bwrap")
    committed = git(root, "diff", "--name-only", before, "HEAD").split()
    assert [p for p in committed if not p.startswith("docs/")] == [kind.changed]
    left = not_tracked(root)
    assert not [p for p in left if re.search(r"\.py[co]\.\d+$", p)]  # no atomic-write temporary left
    assert all(scratch.is_scratch_name(p) for p in left if p not in persons), sorted(left)
    assert {rel: left.get(rel) for rel in persons} == persons
    judge_cache(root, kind, started)


# ---------------------------------------------------------------- the agent among scratch

def hostile(tmp_path: Path, mode: str, gitignore: str, *what: str, earlier: bool = True):
    """A project whose person ran its tests before (or not), and the hostile agent doing ``what``."""
    kind = Kind("bytecode", PYTEST, "tests/test_calc.py", TEST, gitignore)
    ws = cache_project(tmp_path, kind, mode, agent("tampers_with_scratch.py", *what))
    if not earlier:
        for cache in ws.root.rglob("__pycache__"):
            if ".memento" not in cache.parts:
                subprocess.run(["rm", "-rf", str(cache)], check=True)
    return ws, git(ws.root, "rev-parse", "HEAD").strip()


def committed_paths(root: Path, start: str) -> list[str]:
    return [p for p in git(root, "diff", "--name-only", start, "HEAD").split() if not p.startswith("docs/")]


@pytest.mark.parametrize("mode", MODES)
def test_a_forged_pyc_over_the_persons_fools_no_verify(tmp_path, mode):
    """The person's src/__pycache__/calc.*.pyc is writable in the sandbox now: what the agent made of
    it is removed before verify, which then imports the broken source and fails."""
    ws, start = hostile(tmp_path, mode, "*.pyc\n", "forge-pyc")
    root = ws.root
    assert list((root / "src" / "__pycache__").glob("calc.*.pyc"))  # the person's run left it
    (result,) = run_tick(root).results
    log = next((root / "logs").glob("tick_*.log")).read_text()
    assert "DID forge-pyc" in log
    assert not result.passed and result.reason == "verify failed with exit code 1", result.reason
    assert "assert 0 == 4" in log  # verify ran the broken add(), not the forged bytecode
    assert committed_paths(root, start) == []
    assert (root / "src" / "calc.py").read_text() == CALC


@pytest.mark.parametrize("mode", MODES)
def test_a_pyc_planted_where_git_sees_it_is_never_imported_nor_committed(tmp_path, mode):
    """No .gitignore line for bytecode: a new src/__pycache__/calc.*.pyc is untracked, inside the
    task's context_files. Before the scratch rule verify imported it and passed, and it was committed."""
    ws, start = hostile(tmp_path, mode, "", "plant-pyc", earlier=False)
    root = ws.root
    (result,) = run_tick(root).results
    log = next((root / "logs").glob("tick_*.log")).read_text()
    assert "DID plant-pyc" in log
    assert "scratch the agent made, removed before verify: src/__pycache__/calc.cpython" in log
    assert not result.passed and result.reason == "verify failed with exit code 1", result.reason
    assert committed_paths(root, start) == []
    assert not [p for p in (root / "src").rglob("*.pyc")
                if p.stat().st_mtime < (root / "src" / "calc.py").stat().st_mtime]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("where", ["in", "out"])
def test_a_cache_folder_made_a_link_is_never_followed(tmp_path, mode, where):
    """.pytest_cache swapped for a link: into src/ pytest would write its files there (committed
    with the task); out of the tree Memento once walked it and removed what it found there."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("a person's file outside the project\n")
    (outside / "v").mkdir()
    (outside / "v" / "data").write_text("theirs\n")
    what = "link-in" if where == "in" else f"link-out={outside}"
    ws, start = hostile(tmp_path, mode, "__pycache__/\n", "improve", what)
    root = ws.root
    assert (root / ".pytest_cache").is_dir()
    listing = sorted(p.relative_to(outside) for p in outside.rglob("*"))
    (result,) = run_tick(root).results
    log = next((root / "logs").glob("tick_*.log")).read_text()
    assert f"DID {what.split('=')[0]}" in log
    assert result.passed, f"{result.reason}\n{log[-2000:]}"
    assert committed_paths(root, start) == ["tests/test_calc.py"]
    assert not (root / ".pytest_cache").is_symlink()
    assert sorted(p.relative_to(outside) for p in outside.rglob("*")) == listing
    assert (outside / "keep.txt").read_text() == "a person's file outside the project\n"
    assert not [p for p in (root / "src").iterdir() if p.name not in ("calc.py", "__pycache__")]


@pytest.mark.parametrize("mode", MODES)
def test_fifos_named_like_caches_are_removed_unread_before_verify(tmp_path, mode):
    """A FIFO where Python reads its bytecode would hang verify; one named .coverage, coverage."""
    ws, start = hostile(tmp_path, mode, "*.pyc\n.coverage\n", "improve", "fifo")
    root = ws.root
    (root / ".coverage").write_bytes(b"a person's coverage data\n")
    (result,) = run_tick(root).results
    log = next((root / "logs").glob("tick_*.log")).read_text()
    assert "DID fifo" in log
    assert result.passed, f"{result.reason}\n{log[-2000:]}"
    assert committed_paths(root, start) == ["tests/test_calc.py"]
    assert not os.path.lexists(root / ".coverage")  # scratch the agent changed: removed, not restored
    # verify wrote it again (then removed: bytecode verify writes never outlives the attempt)
    assert "bytecode verify made or rewrote, removed: tests/__pycache__/test_calc." in log
    for path in (root / "tests" / "__pycache__").iterdir():
        assert stat.S_ISREG(os.lstat(path).st_mode), path


def test_the_rule_by_name():
    yes = ["src/__pycache__/", "src/__pycache__/a.cpython-311.pyc", "a.pyc", "a.pyo", "pkg/a.cpython-311.pyc.12345",
           "tests/__pycache__/t.cpython-311-pytest-8.4.2.pyc.5", ".pytest_cache/v/cache/nodeids", ".mypy_cache/",
           "sub/.ruff_cache/0.1/x", ".hypothesis/examples/a/b", ".coverage", ".coverage.host.12.345", ".coverage-journal",
           "node_modules/.cache/", "web/node_modules/.cache/ava/x.json", ".eslintcache", "tsconfig.tsbuildinfo",
           "app/tsconfig.app.tsbuildinfo", ".aider.tags.cache.v4/cache.db", "htmlcov/index.html",
           ".nyc_output/processinfo/x.json", "node_modules/.vite/vitest/results.json"]
    no = ["", "src/app.py", ".coveragerc", "coverage.xml", "pyc_tools.py", "a.pyc.tmp", "a.pyc.12a", "node_modules/",
          "node_modules/pkg/.cachex", "node_modules/pkg/.cache/x", ".cache/x", "cache.pyc/", "src/pycache/a.py",
          ".eslintcache.bak", "notes.tsbuildinfo.txt"]
    assert [p for p in yes if not scratch.is_scratch_name(p)] == []
    assert [p for p in no if scratch.is_scratch_name(p)] == []


def test_only_a_regular_file_or_a_real_folder_is_scratch(tmp_path):
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "a.pyc").write_bytes(b"\0")
    os.mkfifo(tmp_path / ".coverage")
    os.symlink(tmp_path / "__pycache__", tmp_path / ".pytest_cache")
    os.symlink("/etc/passwd", tmp_path / "b.pyc")
    assert scratch.is_scratch(tmp_path, "__pycache__/") and scratch.is_scratch(tmp_path, "a.pyc")
    assert scratch.is_scratch(tmp_path, "gone.pyc")  # judged by its name
    assert not any(scratch.is_scratch(tmp_path, p) for p in (".coverage", ".pytest_cache", "b.pyc", "src/app.py"))


def test_node_modules_cache_inside_a_persons_folder(tmp_path):
    (tmp_path / "node_modules" / "x").mkdir(parents=True)
    (tmp_path / "web" / "node_modules" / ".cache").mkdir(parents=True)
    (tmp_path / "bad" / "node_modules").mkdir(parents=True)
    os.symlink("/etc", tmp_path / "bad" / "node_modules" / ".cache")
    (tmp_path / "linked").mkdir()
    os.symlink(tmp_path / "linked", tmp_path / "node_modules2")
    found = scratch.nested_folders(tmp_path, ["node_modules/", "web/node_modules", "bad/node_modules/", ".venv/",
                                              "node_modules2/"])
    assert found == ["bad/node_modules/.vite/", "node_modules/.cache/", "node_modules/.vite/",
                     "web/node_modules/.cache/", "web/node_modules/.vite/"]  # never bad/'s linked .cache
