"""Red team, both modes (SPEC §13 "Ignored files count"): what git ignores can neither fool verify
nor outlive the attempt, and a person's untracked and ignored files are kept byte for byte.

The project: src/calc.py (correct), a pytest test of it that also reads the project's
``.venv/site-packages`` like a venv's Python would, a person's ignored ``.env`` and ``.venv/``
and an untracked ``draft.txt``. The hostile agent (tests/agents/plants_ignored.py) breaks
calc.py and plants a .pyc, a .pth or a conftest.py among ignored paths so that verify would
pass; each test judges the files on disk and the commits.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import time
from pathlib import Path

import pytest

from memento_core.tick.__main__ import run_tick
from tests.core.modes import MODES

from .test_engine import PY, agent, git, make_ws

GOOD = "def add(a, b):\n    return a + b\n"
TEST = ("import site\nimport sys\n\nsite.addsitedir('.venv/site-packages')\nsys.path.insert(0, 'src')\n"
        "import calc  # noqa: E402\n\n\ndef test_add():\n    assert calc.add(2, 2) == 4\n")
TASK = f"""- [ ] `T-1` [MODULE:calc] Improve calc
  - verify: `{PY} -m pytest -q tests`
  - context_files: [src/calc.py]
  - retries: 0
"""
PERSONS = {".env": b"SECRET=a person's\n", "draft.txt": b"a person's draft\n",
           ".venv/site-packages/person_pkg.py": b"VALUE = 'a person'\n"}


def calc_ws(tmp_path: Path, command: str, mode: str, tasks: str = TASK):
    ws = make_ws(tmp_path, command, tasks=tasks, sandbox=mode)
    root = ws.root
    (root / "src").mkdir()
    (root / "src" / "calc.py").write_text(GOOD)
    (root / "tests").mkdir()
    (root / "tests" / "test_calc.py").write_text(TEST)
    with (root / ".gitignore").open("a") as fh:
        fh.write(".env\n.venv/\n__pycache__/\n.pytest_cache/\ntests/local/\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "calc")
    for rel, data in PERSONS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    os.chmod(root / ".env", 0o600)
    return ws


def stats(root: Path) -> dict[str, tuple]:
    return {rel: ((root / rel).read_bytes(), (root / rel).stat().st_mode, (root / rel).stat().st_mtime_ns)
            for rel in PERSONS if (root / rel).exists()}


def judge_rolled_back(ws, start: str) -> None:
    """calc.py as it was, nothing of the attempt committed, no planted file left, the person's kept."""
    root = ws.root
    assert (root / "src" / "calc.py").read_text() == GOOD
    for sha in git(root, "rev-list", f"{start}..HEAD").split():
        files = git(root, "show", "--name-only", "--format=", sha).split()
        assert all(f.startswith("docs/") for f in files), files
    assert not (root / "src" / "__pycache__").exists()
    assert not (root / ".venv" / "site-packages" / "zz_fake_calc.pth").exists()
    assert not (root / "tests" / "local").exists()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("what", ["pyc", "pth", "conftest"])
def test_a_planted_ignored_file_fools_no_verify_and_is_removed(tmp_path, mode, what):
    ws = calc_ws(tmp_path, agent("plants_ignored.py", what), mode)
    root, before = ws.root, stats(ws.root)
    start = git(root, "rev-parse", "HEAD").strip()
    outcome = run_tick(root)
    (result,) = outcome.results
    log = next((root / "logs").glob("tick_*.log")).read_text()
    planted = f"PLANTED {what}" in log
    if planted and what == "pyc":  # scratch (bytecode): removed before verify and named, not saved
        assert "untracked and ignored files: removed 1 new ignored path(s): src/__pycache__/" in log, log
        assert not list(root.glob("logs/rollback/*-T-1-ignored/files/src/__pycache__/*"))
    assert planted or (mode == "bwrap" and what == "pth"), log  # the .venv/ is read-only in the sandbox
    assert not result.passed
    assert "verify failed" in result.reason, result.reason
    judge_rolled_back(ws, start)
    assert stats(root) == before


@pytest.mark.parametrize("mode", MODES)
def test_a_persons_ignored_and_untracked_files_are_kept(tmp_path, mode):
    ws = calc_ws(tmp_path, agent("plants_ignored.py", "env", "draft", "venvfile"), mode)
    root, before = ws.root, stats(ws.root)
    start = git(root, "rev-parse", "HEAD").strip()
    (result,) = run_tick(root).results
    assert not result.passed
    judge_rolled_back(ws, start)
    now = stats(root)
    if mode == "bwrap":  # read-only to the agent: it changed nothing
        assert now == before
        return
    assert "changed a person's untracked or ignored file(s): .env, draft.txt (restored" in result.reason
    assert ".venv/site-packages/person_pkg.py (not copied at the snapshot: could not be restored)" in result.reason
    lost = ".venv/site-packages/person_pkg.py"
    saved = {p.read_text()
             for p in root.glob("logs/rollback/*-T-1-ignored/files/.env")}
    assert saved == {"SECRET=the agent's\n"}  # what was overwritten is saved first: nothing is lost
    assert {k: v for k, v in now.items() if k != lost} == {k: v for k, v in before.items() if k != lost}


@pytest.mark.parametrize("mode", MODES)
def test_a_new_file_whose_name_starts_with_a_persons_file_name_is_not_theirs(tmp_path, mode):
    """`.envrc` is not inside `.env` nor `draft.txt~` inside `draft.txt`: both go at the rollback,
    `.envrc` ignored like the person's `.env` (a `.env*` line, as many projects have)."""
    ws = calc_ws(tmp_path, agent("plants_ignored.py", "beside"), mode)
    root = ws.root
    with (root / ".gitignore").open("a") as fh:
        fh.write(".env*\n")
    git(root, "commit", "-qam", "every .env file ignored")
    before = stats(root)
    start = git(root, "rev-parse", "HEAD").strip()
    (result,) = run_tick(root).results
    assert not result.passed
    judge_rolled_back(ws, start)
    assert not (root / ".envrc").exists() and not (root / "draft.txt~").exists()
    assert stats(root) == before


@pytest.mark.parametrize("mode", MODES)
def test_verify_caches_after_a_pass_stay(tmp_path, mode):
    """An honest pass: the attempt's commit is calc.py, verify's caches stay (but for the bytecode it
    wrote: tests/core/scenarios/test_bytecode_left.py), the person's files too."""
    ws = calc_ws(tmp_path, agent("does_task.py", "src/calc.py", shlex.quote(GOOD + "# tidied")), mode)
    root, before = ws.root, stats(ws.root)
    (result,) = run_tick(root).results
    assert result.passed, result.reason
    assert "src/calc.py" in git(root, "show", "--name-only", "--format=", "HEAD").split()
    assert (root / ".pytest_cache").is_dir()
    log = next((root / "logs").glob("tick_*.log")).read_text()
    assert "bytecode verify made or rewrote, removed: src/__pycache__/calc." in log  # verify imported it
    assert not list((root / "src" / "__pycache__").glob("calc.*.pyc"))
    assert stats(root) == before


@pytest.mark.parametrize("mode", MODES)
def test_what_was_planted_is_gone_after_the_tick_is_killed(tmp_path, mode):
    """kill -9 of the tick mid-attempt: the stale recovery removes the planted .pyc (the record names
    the person's paths), so the next attempt's snapshot does not take it for the person's."""
    (tmp_path / "signal").mkdir()
    marker = tmp_path / "signal" / "planted.txt"
    ws = calc_ws(tmp_path, agent("plants_and_hangs.py", str(marker), "pyc"), mode)
    root = ws.root
    if mode == "bwrap":
        text = ws.config_path.read_text().replace('mode = "bwrap"', f'mode = "bwrap"\nwritable = ["{marker.parent}"]')
        ws.config_path.write_text(text)
        git(root, "commit", "-qam", "the agent may write its signal")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    tick = subprocess.Popen([PY, "-m", "memento_core.tick", "--project", str(root)], cwd=root, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not marker.exists() and tick.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marker.exists(), "the agent never planted"
        assert list((root / "src" / "__pycache__").glob("*.pyc"))
    finally:
        tick.kill()
        tick.wait()
    (result,) = run_tick(root).results  # the stale recovery, then an honest failure (exit 3)
    assert not result.passed and "code 3" in result.reason, result.reason
    assert not (root / "src" / "__pycache__").exists()
    assert (root / "src" / "calc.py").read_text() == GOOD
    assert "stale T-1: untracked and ignored files: removed 1 new ignored path(s): src/__pycache__/" in \
        (root / "logs" / "cron.log").read_text()
