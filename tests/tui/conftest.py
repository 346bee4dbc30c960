"""Fixtures for the dashboard tests: the demo project in tmp_path, and a scripted, deterministic one."""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memento_core.demo import create_demo
from memento_core.git.commit import commit_paths
from memento_core.locks import atomic_write_text
from memento_core.notes import add_note, mark_read, parse_notes
from memento_core.plan.edits import edit_plan

FIXED_NOW = datetime(2026, 11, 29, 14, 0, 0, tzinfo=UTC)
HOSTILE = ("[x]", "[bold red]", "[link=file:///etc/passwd]x[/link]", "[/]")
OPS = (
    "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n\n\n"
    "def mul(a, b):\n    return a * b\n\n\ndef div(a, b):\n    return a / b\n"
)


@pytest.fixture(autouse=True)
def no_leaked_threads():
    """Every test stops its watchers and workers: no observer or worker thread outlives it."""
    before = set(threading.enumerate())
    yield
    leaked = []
    for thread in set(threading.enumerate()) - before:
        if thread.name == "memento-record-beacon":  # one per process, by design (tick/record.py)
            continue
        thread.join(timeout=5)
        if thread.is_alive():
            leaked.append(f"{type(thread).__name__}:{thread.name}")
    assert not leaked, f"threads left running: {leaked}"


@pytest.fixture(autouse=True)
def _state_home(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Memento's state folder (confined agents' private homes) in a temporary folder, never ~/.local/state."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))


@pytest.fixture
def git_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """A git identity and fixed commit dates, so commit ids are the same on every run."""
    for var, value in {
        "GIT_AUTHOR_NAME": "Test Person",
        "GIT_AUTHOR_EMAIL": "test@example.invalid",
        "GIT_COMMITTER_NAME": "Test Person",
        "GIT_COMMITTER_EMAIL": "test@example.invalid",
        "GIT_AUTHOR_DATE": "2026-11-29T14:00:00+00:00",
        "GIT_COMMITTER_DATE": "2026-11-29T14:00:00+00:00",
    }.items():
        monkeypatch.setenv(var, value)


@pytest.fixture
def demo(tmp_path: Path, git_env: None) -> Path:
    """The `memento demo` project, untouched (every task pending)."""
    return create_demo(tmp_path / "calc", now=FIXED_NOW)


def _status_text(sha: str) -> str:
    return f"""# TICK STATUS LOG

## [2026-11-29T14:01:00Z] Tick #1
- **Task**: T-101 [MODULE:core] Create the calc package
- **Status**: ✅ SUCCESS
- **Verify Output**: `(no output)` (exit code 0)
- **Duration**: 12s
- **Files Modified**: calc/__init__.py (+1 -0)
- **Git Commit**: `{sha[:7]}` — "memento: complete T-101 Create the calc package"
- **Log**: logs/tick_2026-11-29T140100Z.log

---

## [2026-11-29T14:02:00Z] Tick #2
- **Task**: T-102 [MODULE:core] Add and subtract
- **Status**: ✅ SUCCESS
- **Verify Output**: `(no output)` (exit code 0)
- **Duration**: 1m30s
- **Files Modified**: calc/ops.py (+13 -0)
- **Git Commit**: `{sha[:7]}` — "memento: complete T-102 Add and subtract"
- **Log**: logs/tick_2026-11-29T140200Z.log

---

## [2026-11-29T14:03:00Z] Tick #3
- **Task**: T-201 [MODULE:core] Multiply and divide
- **Status**: ❌ FAILED (retry 1/3)
- **Verify Output**: `AssertionError: mul` (exit code 1)
- **Duration**: 4s
- **Reason**: verify failed with exit code 1
- **Files Modified**: (rolled back)
- **Git Commit**: (none — rollback)
- **Log**: logs/tick_2026-11-29T140300Z.log

---

## [2026-11-29T14:04:00Z] Tick #4
- **Task**: T-201 [MODULE:core] Multiply and divide
- **Status**: 🚫 BLOCKED (retry 3/3 — max_retries exceeded)
- **Verify Output**: `AssertionError: mul` (exit code 1)
- **Duration**: 5s
- **Reason**: verify failed with exit code 1
- **Escalation**: ⚠️ NEEDS ARCHITECT ATTENTION
- **Files Modified**: (rolled back)
- **Git Commit**: (none — rollback)
- **Log**: logs/tick_2026-11-29T140400Z.log
- **Error Tail**:
```
Traceback (most recent call last):
  File "<string>", line 1, in <module>
AssertionError: mul
```
"""


LOG_TEXT = (
    "[memento] tick #4 task T-201 [MODULE:core] Multiply and divide\n"
    "[memento] agent (script) exited with code 0 after 0.1s\n"
    "[memento] verify T-201: python3 -c 'from calc.ops import mul'\n"
    "Traceback (most recent call last):\n"
    '  File "<string>", line 1, in <module>\n'
    "AssertionError: mul\n"
    "[memento] verify exit code: 1\n"
)


@pytest.fixture
def scripted(demo: Path) -> Path:
    """The demo, moved by hand to a fixed state: 2 done, 1 blocked, 1 retried, notes, logs, a commit."""
    root = demo
    atomic_write_text(root / "calc" / "__init__.py", '"""calc"""\n')
    atomic_write_text(root / "calc" / "ops.py", OPS)
    sha = commit_paths(root, ["calc/__init__.py", "calc/ops.py"], "memento: complete T-102 Add and subtract")

    def apply(e) -> None:
        e.set_status("T-101", "x")
        e.set_status("T-102", "x")
        e.set_status("T-201", "!")
        e.set_field("T-201", "retries", "3")
        e.set_field("T-202", "retries", "1")
        e.update_counters()
        e.set_meta("total_ticks", "4")

    edit_plan(root / "docs" / "MASTER_PLAN.md", apply)
    atomic_write_text(root / "docs" / "TICK_STATUS.md", _status_text(sha))
    for stamp in ("140100", "140200", "140300", "140400"):
        atomic_write_text(root / "logs" / f"tick_2026-11-29T{stamp}Z.log", LOG_TEXT)
    notes = root / "docs" / "HUMAN_NOTES.md"
    mark_read(notes, [n.key for n in parse_notes(notes)])
    add_note(notes, "Use integer division only when both operands are ints.", target="T-201", now=FIXED_NOW)
    add_note(notes, "Phase 3 can wait until the parser is solid.", target="global", now=FIXED_NOW)
    commit_paths(root, ["docs/MASTER_PLAN.md", "docs/TICK_STATUS.md", "docs/HUMAN_NOTES.md"],
                 "memento: sync docs")
    return root


Runner = Callable[..., Awaitable[None]]
