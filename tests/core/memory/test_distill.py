"""memory/distill.py on a fixture journal: the digest and the proposals (`memento memory distill --apply` is
tests/core/cli/commands/test_memory.py)."""

from __future__ import annotations

import shutil

from memento_core.memory.distill import distill
from tests.core.memory.memhelp import FIXTURE


def test_distill_digest_and_proposals_on_a_fixture_journal(ws):
    shutil.copy(FIXTURE, ws.memory_dir / "journal" / "2026-05-01.md")
    digest = distill(ws, "2026-05-01")
    assert digest.text.splitlines()[:4] == [
        "# Distill of journal/2026-05-01.md", "",
        "- ticks: 3 (#12–#14); attempts: 3 — 1 passed, 1 failed, 1 blocked",
        "- notes: 1",
    ]
    assert "- T-201 (failed, tick #12, 09:00:00Z): verify failed (exit code 1)" in digest.text
    assert "  - Error Analysis: the db module exports `get_pool`, not `pool`" in digest.text
    assert "- T-202 (blocked, tick #14, 10:00:00Z): the agent moved HEAD" in digest.text
    assert "- 09:30:12Z — flaky CI runner (source=human): The CI runner was restarted; ignore the 09:20 failure." \
        in digest.text
    assert "- T-201: used get_pool(); decided to keep one pool per process." in digest.text
    assert [(p.path, p.summary) for p in digest.proposals] == [
        ("knowledge/lessons/t-201.md", "T-201: verify failed (exit code 1)"),
        ("knowledge/lessons/t-202.md", "T-202: the agent moved HEAD"),
        ("knowledge/decisions/t-201.md", "T-201: decided to keep one pool per process."),
    ]
    assert "T-201 passed later the same day (tick #13)" in digest.proposals[0].content
    assert distill(ws, "2026-05-01").text == digest.text  # deterministic
