"""The rollback's own steps (SPEC §4 step 14) where no other step hides them: what an agent hid
behind a new `.gitignore` in a subfolder is found once the rollback removed that file.

The rate-limited agent is tests/agents/reports_like_a_cli.py through the real `command` preset; its
work is rolled back before the fallback preset runs in the same tick (tick/limits.py), with no
ignored-files step between: the rollback alone must find what was hidden.
"""

from __future__ import annotations

import pytest

from memento_core.tick.__main__ import run_tick

from .test_limits import git, make_ws


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


def test_what_a_refused_agent_hid_behind_a_new_gitignore_is_gone_before_the_fallback_starts(tmp_path):
    ws = make_ws(tmp_path, "claude-limit", cost="hides", extra='fallback = ["script"]')
    # the fallback preset's own work fails when the refused agent's hidden file is still there
    ws.plan_path.write_text(ws.plan_path.read_text().replace("- do: `printf", "- do: `test ! -e sub/hidden.txt && printf"))
    git(ws.root, "commit", "-qam", "the script checks first")
    outcome = run_tick(ws.root)
    assert [(r.task_id, r.passed) for r in outcome.results] == [("T-1", True)], outcome.message
    assert not (ws.root / "sub").exists()
    saved = [p.relative_to(ws.rollback_dir).as_posix() for p in ws.rollback_dir.rglob("hidden.txt")]
    assert len(saved) == 1 and saved[0].endswith("/hidden/files/sub/hidden.txt"), saved
