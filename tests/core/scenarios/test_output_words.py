"""What the commands print is said one way (issue 38, item 11): files as a person finds them in
the project, counts in words, each file's problems under its own name, the doctor's grades as
docs/cli.md says they are."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.first_project import memento

DOCS = Path(__file__).resolve().parents[3] / "docs"


@pytest.fixture
def fresh(tmp_path, git_identity):
    root = tmp_path / "greeter"
    root.mkdir()
    assert memento(root, "init").returncode == 0  # its plan: one task in one phase
    return root


def every_output(root, *commands) -> str:
    out = []
    for words in commands:
        done = memento(root, *words)
        out.append(done.stdout + done.stderr)
    return "\n".join(out)


def test_counts_are_words_and_files_are_named_as_in_the_project(fresh):
    text = every_output(fresh, ["doctor"], ["lint"], ["status"], ["tasks"])
    assert "1 task in 1 phase" in text
    assert not re.search(r"\b1 (tasks|phases|errors|warnings|ticks)\b", text), text

    toml = fresh / "memento.toml"
    good = toml.read_text()
    toml.write_text(good.replace('timeout = "30min"', 'timout = "30min"'))
    lint = memento(fresh, "lint")
    assert lint.stdout.splitlines()[-1] == \
        "[warn] docs/MASTER_PLAN.md: 1 task in 1 phase, no problems; memento.toml: 1 warning"

    toml.write_text("[agent\n")
    text = every_output(fresh, ["lint"], ["status"], ["tick"], ["doctor"])
    assert "memento.toml:1: invalid TOML" in text
    assert str(fresh) + "/memento.toml" not in text and str(toml) not in text

    toml.write_text(good)
    plan = fresh / "docs" / "MASTER_PLAN.md"
    plan.write_text(plan.read_text().replace("- [ ] `T-101`", "- [x] `T-101`"))
    reset = memento(fresh, "reset", "T-101")  # a done task is not reset: said with the plan's line
    assert reset.returncode == 2 and reset.stderr.startswith("[error] docs/MASTER_PLAN.md:"), reset.stderr
    missing = memento(fresh, "reset", "T-999")
    for out in (reset.stdout + reset.stderr, missing.stdout + missing.stderr):
        assert str(fresh) not in out, out


def test_the_doctors_grades_are_the_ones_docs_cli_md_names(fresh):
    lines = memento(fresh, "doctor").stdout.splitlines()
    grades = {line.split("]", 1)[0] + "]" for line in lines if line.startswith("[")}
    assert grades <= {"[CRITICAL]", "[WARNING]", "[INFO]", "[OK]"} and "[OK]" in grades
    cli = (DOCS / "cli.md").read_text()
    assert "`memento doctor`'s findings, which keep the doctor's own" in cli and "`[CRITICAL]`, `[WARNING]`" in cli


def test_a_memento_toml_typo_gets_the_name_it_meant(fresh):
    toml = fresh / "memento.toml"
    toml.write_text(toml.read_text().replace('timeout = "30min"', 'timout = "30min"').replace("[budget]", "[budgt]"))
    lint = memento(fresh, "lint").stdout
    assert "unknown [agent] timout is ignored (did you mean timeout? the default applies)" in lint
    assert "unknown [budgt] is ignored (did you mean [budget]? the default applies)" in lint
    assert "did you mean timeout?" in memento(fresh, "doctor").stdout
