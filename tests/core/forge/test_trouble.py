"""GitHub refusing the token (SPEC §19 "Errors"): one ⚠️ FORGE entry naming where the token came
from, never the token; a needs-you item in `memento status --json` until GitHub takes a token
again; no task's retry counted. Real ticks, the GitHub stand-in."""

from __future__ import annotations

import json
import subprocess

import pytest

from memento_core.plan.scan import parse_plan
from memento_core.status_log import parse_status
from tests.core.forge.test_comments import (
    BLOCK,
    PY,
    cron_log,
    do_import,
    env_with,
    git,
    make_project,
    tick,
)


@pytest.fixture
def project(tmp_path, git_identity, github):
    return make_project(tmp_path, github)


def status_json(root) -> dict:
    out = subprocess.run([PY, "-m", "memento_core.cli", "status", "--json", str(root)], capture_output=True,
                         text=True, timeout=120, env=env_with(None))
    return json.loads(out.stdout)


def forge_entries(root) -> list:
    return [e for e in parse_status(root / "docs" / "TICK_STATUS.md") if e.status == "FORGE"]


def test_a_refused_token_is_said_once_and_needs_you_until_a_token_works(project, github):
    github.issue(1, "Write one", BLOCK.format(id="GH-1"))
    github.issue(2, "Write two", BLOCK.format(id="GH-2"))
    do_import(project)
    out = tick(project, token="ghp_revoked")
    assert out.returncode == 0, out.stdout + out.stderr
    (entry,) = forge_entries(project)
    assert "GITHUB_TOKEN" in entry.field("Event") and "HTTP 401" in entry.field("Reason")
    assert "issue #1" in entry.field("Doing")
    assert git(project, "status", "--porcelain") == ""  # the entry is committed with the tick
    plan = parse_plan(project / "docs" / "MASTER_PLAN.md")
    assert plan.task("GH-1").status == "x" and plan.task("GH-1").retries == 0
    (need,) = [n for n in status_json(project)["needs_you"] if n["kind"] == "forge"]
    assert "GITHUB_TOKEN" in need["text"] and "GITHUB_TOKEN" in need["command"]
    out = tick(project, token="ghp_revoked")  # still refused: nothing more in the log
    assert out.returncode == 0 and len(forge_entries(project)) == 1
    assert parse_plan(project / "docs" / "MASTER_PLAN.md").task("GH-2").retries == 0
    for place in (project / "docs" / "TICK_STATUS.md", project / "logs" / "cron.log",
                  project / ".memento" / "forge_trouble.json"):
        assert "ghp_revoked" not in place.read_text()
    out = tick(project)
    assert out.returncode == 0 and len(github.posted(1)) == 1
    assert [n for n in status_json(project)["needs_you"] if n["kind"] == "forge"] == []
    assert not (project / ".memento" / "forge_trouble.json").exists()
    assert "GitHub accepts the token again" in cron_log(project)
