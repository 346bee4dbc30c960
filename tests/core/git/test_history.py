"""history.py against real git: a commit's diff and the last commits' subjects."""

from __future__ import annotations

from memento_core.git.commit import commit_paths
from memento_core.git.history import diff, log_subjects

from .conftest import write


def test_diff_and_log_subjects(seeded):
    root, base = seeded
    assert log_subjects(root, 5) == [(base, "seed")]
    write(root, "task.py", "print(1)\n")
    sha = commit_paths(root, ["task.py"], "memento: complete T-1 Thing\n\nbody")
    assert log_subjects(root, 1) == [(sha, "memento: complete T-1 Thing")]
    assert [s for _, s in log_subjects(root, 10)] == ["memento: complete T-1 Thing", "seed"]
    text = diff(root, sha)
    assert "task.py | 1 +" in text
    assert "+print(1)" in text


def test_log_subjects_on_unborn_branch(repo):
    assert log_subjects(repo, 3) == []
