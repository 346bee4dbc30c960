"""forge/phase_branch.py: a phase's branch name, ASCII and never shaped like a task id."""

from __future__ import annotations

import re

import pytest

from memento_core.forge import phase_branch as pb

TASK_ID = re.compile(r"[A-Z][A-Z0-9]*-\d+", re.I)


@pytest.mark.parametrize(("title", "slug"), [
    ("Phase 2: Integration", "phase-2-integration"),
    ("Phase 2", "phase-2-work"),                       # "PHASE-2" would read as a task id
    ("T-101", "t-101-work"),
    ("Ünïcödé & <b>markup</b> — done!", "unicode-b-markup-b-done"),
    ("\x1b[31mred\x1b[0m\u202eevil", "31mred-0mevil"),
    ("", "phase"),
    ("!!!", "phase"),
    ("x" * 200, "x" * 60),
])
def test_a_phases_branch_is_ascii_never_a_task_id(title, slug):
    assert pb.slug(title) == slug
    name = pb.branch_name(title, set())
    assert name == "memento/" + slug
    assert re.fullmatch(r"memento/[a-z0-9-]+", name) and not TASK_ID.fullmatch(name.split("/", 1)[1])


def test_a_taken_name_gets_a_number():
    taken = {"memento/phase-1-foundation", "memento/phase-1-foundation-2"}
    assert pb.branch_name("Phase 1: Foundation", taken) == "memento/phase-1-foundation-3"
