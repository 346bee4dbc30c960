"""cli/main.py's error boundary, `memento` run as a real subprocess: a bad plan, a huge one, a missing
workspace or a plan that is a folder get one clear line and exit 2, never a traceback (each command's
own tests: commands/test_<name>.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.core.cli.runs import FIXTURES, PLAN, memento

BAD_INPUTS = {
    "empty": (b"", "docs/MASTER_PLAN.md:1: the plan is empty"),
    "non_utf8": (b"# MASTER_PLAN: x\n\n## Phase 1: a\n\xc3\x28 broken\n", "docs/MASTER_PLAN.md:4: not valid UTF-8"),
    "binary": (bytes(range(256)) * 20, "docs/MASTER_PLAN.md:2: not valid UTF-8 (byte 0x80)"),
    "duplicate": ((FIXTURES / "spec_example_plan.md").read_bytes().replace(
        b"## Phase 2", b"- [ ] T-101 again\n  - verify: true\n  - context_files: []\n\n## Phase 2"),
        "T-101 duplicate task id (first defined on line 23)"),
    "cycle": (b"# MASTER_PLAN: c\n## Meta\n- max_retries: 3\n## Phase 1: a (depends on Phase 2)\n## Phase 2: b (depends on Phase 1)\n",
              "dependency cycle: Phase 1 → Phase 2 → Phase 1"),
    "no_verify": (b"# MASTER_PLAN: v\n## Meta\n- max_retries: 3\n## Phase 1: a\n- [ ] T-1 t\n  - context_files: []\n",
                  "docs/MASTER_PLAN.md:5: T-1 has no verify command"),
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_plans_get_one_clear_line_and_exit_2(ws: Path, name: str):
    data, expected = BAD_INPUTS[name]
    (ws / PLAN).write_bytes(data)
    for cmd in (("lint",), ("status",), ("status", "--json")):
        r = memento(*cmd, str(ws))
        out = r.stdout + r.stderr
        assert "Traceback" not in out
        if cmd == ("lint",) or name in ("non_utf8", "binary"):
            assert r.returncode == 2, (cmd, out)
            assert expected in out, (cmd, out)


def test_huge_plan_and_missing_workspace(tmp_path: Path, ws: Path):
    sys.path.insert(0, str(Path(__file__).parents[3] / "bench"))
    from plangen import big_plan

    text = big_plan(22_000)
    assert len(text) > 5_000_000
    (ws / PLAN).write_text(text)
    r = memento("status", "--json", str(ws))
    assert r.returncode == 1, r.stderr  # nothing will tick here (no cron entry): it says IDLE
    assert json.loads(r.stdout)["counts"]["total"] == 22_000
    empty = tmp_path / "nothing"
    empty.mkdir()
    r = memento("status", cwd=empty)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.startswith("[error] no Memento workspace at or above")
    r = memento("lint", str(tmp_path / "missing"))
    assert r.returncode == 2 and "no such directory" in r.stderr
    (ws / "docs" / "MASTER_PLAN.md").unlink()
    (ws / "docs" / "MASTER_PLAN.md").mkdir()
    r = memento("lint", str(ws))
    assert r.returncode == 2 and "is a directory" in r.stderr and "Traceback" not in r.stderr
