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


def test_the_readme_note_keeps_its_quotes_in_a_shell(tmp_path, git_identity):
    """Issue 38 item 18: `memento note --task T-102 use the company signature, not "memento"` lost its
    quotes to the shell. The README's own line, run by bash, writes the note the README shows."""
    from memento_core.notes import parse_notes
    from tests.first_project import section

    line = next(ln for ln in section("With a real agent").splitlines() if ln.startswith("memento note "))
    root = tmp_path / "my-project"
    root.mkdir()
    env = {**os.environ, "PY": sys.executable}
    subprocess.run([sys.executable, "-m", "memento_core.cli", "init"], cwd=root, env=env, check=True,
                   capture_output=True)
    (root / "docs" / "MASTER_PLAN.md").write_text(first_plan())
    done = subprocess.run(["bash", "-c", f'memento() {{ "$PY" -m memento_core.cli "$@"; }}; {line}'], cwd=root,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    (note,) = parse_notes(root / "docs" / "HUMAN_NOTES.md")
    assert (note.target, note.text) == ("T-102", 'use the company signature, not "memento"')


def test_the_readme_says_where_memento_comes_from_and_installs_it_to_run():
    """Issue 38 item 18: where to get the code was not said, and `pip install -e ".[dev]"` (a
    developer's install) was what a user was told to run first."""
    from tests.first_project import blocks, section

    install = section("Install")
    assert "pipx install memento-tick" in install and "pip install memento-tick" in install
    first = [ln for block in blocks("Install", "bash") for ln in block.splitlines() if "install" in ln][0]
    assert first.startswith("pipx install memento-tick")
    assert all("-e" not in ln.split() for block in blocks("Install", "bash") for ln in block.splitlines())
    assert "clone of this repository" in install
