"""Red team, both modes (SPEC §13 "Ignored files count", scratch): no bytecode the attempt wrote stays
for Python to import instead of the source, passed or not.

The person ran the project once before (src/__pycache__/ holds Python's honest calc.*.pyc). The hostile
agent (tests/agents/plants_bytecode.py) plants a forged src/__pycache__/calc.*.pyc (calc.py's code plus
``FORGED = True``), itself before verify (unchecked-hash, or stamped with calc.py's mtime and size), or
through the code verify runs: a committed calc.py that rewrites its own cache when imported. Bytecode
is enabled here (this machine's PYTHONDONTWRITEBYTECODE=1 would hide it). Each test judges the bytecode
on disk and what a later `import calc` gets.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from memento_core.tick.__main__ import run_tick
from tests.core.modes import MODES

from .test_engine import PY, agent, git
from .test_ignored import TASK, calc_ws

IN_SRC = TASK.replace("[src/calc.py]", "[src/]")


@pytest.fixture(autouse=True)
def bytecode_on(monkeypatch):
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)


def forged(root: Path) -> list[str]:
    """The bytecode files in the tree that hold the forged module."""
    return [p.relative_to(root).as_posix() for p in root.rglob("*.pyc")
            if ".memento" not in p.parts and b"FORGED" in p.read_bytes()]


def imports_forged(root: Path) -> bool:
    out = subprocess.run([PY, "-c", "import calc; print(getattr(calc, 'FORGED', False))"], cwd=root / "src",
                         capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": ""})
    return out.stdout.strip() == "True"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("what", ["import-time", "unchecked", "timestamp"])
@pytest.mark.parametrize("broken", [False, True], ids=["passing", "broken"])
def test_no_forged_bytecode_outlives_the_attempt(tmp_path, mode, what, broken):
    ws = calc_ws(tmp_path, agent("plants_bytecode.py", what, *(["broken"] if broken else [])), mode, tasks=IN_SRC)
    root = ws.root
    subprocess.run([PY, "-c", "import calc"], cwd=root / "src", check=True)  # the person's own run
    assert list((root / "src" / "__pycache__").glob("calc.*.pyc"))
    (result,) = run_tick(root).results
    log = next((root / "logs").glob("tick_*.log")).read_text()
    assert f"PLANTED {what}" in log
    # broken: verify fails (it imported the broken source, not the forged bytecode); else it passes
    assert result.passed != broken, result.reason
    if result.passed:
        assert "src/calc.py" in git(root, "show", "--name-only", "--format=", "HEAD").split()
    assert forged(root) == []
    if what == "import-time":  # verify ran calc.py, which forged its cache: removed after it
        removed = [line for line in log.splitlines() if line.startswith("[memento] bytecode verify made or rewrote")]
        assert broken or "src/__pycache__/calc.cpython-" in "".join(removed), log
    else:  # calc.py never forges: a later import compiles the source
        assert not imports_forged(root)
