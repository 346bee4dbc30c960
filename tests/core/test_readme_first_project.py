"""README's "Your first project", followed exactly as a person types it (issue 38, item 14).

The commands are read from the README's own bash blocks and run in order in a
fresh folder (the `$EDITOR` step writes the README's plan); each does what the
README's comment says, and the walk ends with `memento doctor` clean: exit 0, no
finding but [OK] (it used to exit 1: init's PROJECT_MAP.md named a HELLO.md the
README's plan never makes, and the passed tasks were never acknowledged).
"""

from __future__ import annotations

import os
import subprocess
import sys

from tests.first_project import commands, first_plan


def test_readme_first_project_end_to_end(tmp_path, git_identity):
    root = tmp_path / "my-project"
    root.mkdir()
    env = {**os.environ, "MEMENTO_CRONTAB_FILE": str(tmp_path / "crontab")}
    walked = commands("Your first project")
    assert [w[:2] for w in walked][:2] == [["memento", "init"], ["memento", "lint"]]
    said: dict[str, subprocess.CompletedProcess] = {}
    for argv in walked:
        program = [sys.executable, "-m", "memento_core.cli"] if argv[0] == "memento" else [argv[0]]
        done = subprocess.run([*program, *argv[1:]], cwd=root, env=env, capture_output=True, text=True, timeout=180)
        said[" ".join(argv)] = done
        assert "Traceback" not in done.stderr, done.stderr
        if argv == ["memento", "init"]:
            (root / "docs" / "MASTER_PLAN.md").write_text(first_plan())  # $EDITOR docs/MASTER_PLAN.md
    assert all(done.returncode == 0 for done in said.values()), {k: (v.returncode, v.stdout, v.stderr)
                                                                 for k, v in said.items() if v.returncode}
    assert "T-102 passed" in said["memento tick"].stdout  # the second tick (the dict keeps the last)
    assert said["memento status"].stdout.startswith("[ok] greeter: COMPLETE")
    assert "2 passed tasks not yet reviewed: T-101, T-102" in said["memento status"].stdout
    log = said["git log --oneline"].stdout
    assert "memento: complete T-101 Write the greeting" in log and "memento: complete T-102 Sign it" in log
    doctor = said["memento doctor"]
    findings = [line for line in doctor.stdout.splitlines() if line.startswith("[")]
    assert findings and all(line.startswith("[OK]") for line in findings), doctor.stdout
    assert (root / "greeting.txt").read_text() == "hello\n-- memento\n"
