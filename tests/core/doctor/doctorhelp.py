"""What the doctor's tests share: the problems a workspace shows, a case judged in process and
through `memento doctor`, and the small edits a case makes to break the healthy workspace."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path

from memento_core import doctor
from memento_core.cli.main import main
from memento_core.workspace import Workspace

T0 = datetime(2026, 1, 1, tzinfo=UTC).timestamp()


def problems(ws: Workspace) -> tuple[list[str], int]:
    findings = doctor.check_workspace(ws)
    return [str(f) for f in findings if f.severity != "OK"], doctor.exit_code(findings)


def judge(ws: Workspace, expected: list[str], code: int, capsys) -> None:
    """The case's exact lines and exit code, from check_workspace and from `memento doctor`."""
    lines, worst = problems(ws)
    assert lines == expected
    assert worst == code
    assert main(["doctor", str(ws.root)]) == code
    printed = capsys.readouterr().out.splitlines()
    assert [ln for ln in printed if not ln.startswith("[OK] ")] == expected


def line_of(path: Path, needle: str) -> int:
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in {path}")


def commit(ws: Workspace, *paths: str) -> None:
    """Commit a person's change with plain git, so the tree is clean again."""
    subprocess.run(["git", "-C", str(ws.root), "commit", "-q", "-m", "a person's change", "--", *paths], check=True)


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
