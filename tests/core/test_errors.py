"""errors.py: a PlanError and a MementoError say where (path:line, or the path once) before what; the
exit codes every command and the tick share."""

from __future__ import annotations

from memento_core import errors
from memento_core.errors import EditConflict, MementoError, PlanError


def test_a_plan_error_names_its_place_and_task():
    assert str(PlanError("docs/MASTER_PLAN.md", 12, "T-3", "has no verify command")) == (
        "docs/MASTER_PLAN.md:12: T-3 has no verify command")
    assert str(PlanError("docs/MASTER_PLAN.md", 0, None, "the plan is empty")) == (
        "docs/MASTER_PLAN.md: the plan is empty")
    error = PlanError("p", 1, None, "m")
    assert (error.severity, error.scope) == ("error", "plan")


def test_a_memento_error_says_its_path_once_and_its_line():
    assert str(MementoError("[agent] preset: unknown", path="memento.toml", line=4)) == (
        "memento.toml:4: [agent] preset: unknown")
    assert str(MementoError("cannot be read", path="memento.toml")) == "memento.toml: cannot be read"
    assert str(MementoError("memento.toml is a folder", path="memento.toml")) == "memento.toml is a folder"
    plain = MementoError("no workspace")
    assert (str(plain), plain.path, plain.line) == ("no workspace", None, 0)
    conflict = EditConflict("the line changed", path="docs/MASTER_PLAN.md", line=9)
    assert isinstance(conflict, MementoError) and str(conflict) == "docs/MASTER_PLAN.md:9: the line changed"


def test_the_exit_codes():
    assert (errors.EXIT_OK, errors.EXIT_ATTENTION, errors.EXIT_ERROR) == (0, 1, 2)
