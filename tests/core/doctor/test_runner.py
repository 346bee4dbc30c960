"""doctor/runner.py: every check in its fixed order on a healthy workspace, a reading that writes
nothing, and `memento doctor` over several workspaces (--json, --fail-on, --watch) (SPEC §8).
Each check's own cases are in tests/core/doctor/checks/test_<module>.py."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memento_core import doctor, sandbox
from memento_core.cli.main import main
from memento_core.config.model import Config
from memento_core.workspace import Workspace
from tests.core.doctor.checks.test_pipeline import _alert, _breaker, _dirty

# What a `memento doctor` subprocess says about a healthy workspace here: where bubblewrap cannot
# run, its sandbox check warns (the agent would run unconfined), so the exit code is 1.
HEALTHY_EXIT = 0 if sandbox.resolve(Config()).confined else 1


# --------------------------------------------------------------------------- healthy


def test_a_healthy_workspace_prints_only_ok_lines_and_exits_0(ws, capsys):
    findings = doctor.check_workspace(ws)
    assert {f.severity for f in findings} == {"OK"}
    assert [f.check for f in findings] == [name for name, _ in doctor.CHECKS]
    assert main(["doctor", str(ws.root)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == len(doctor.CHECKS)
    assert all(line.startswith("[OK] ") for line in out)
    assert "[OK] template compliance: all sections present, no placeholder text" in out


def test_doctor_reads_only(ws):
    _dirty(ws)
    _breaker(ws)
    before = {p: p.read_bytes() for p in ws.root.rglob("*") if p.is_file() and ".git" not in p.parts}
    doctor.check_workspace(ws)
    after = {p: p.read_bytes() for p in ws.root.rglob("*") if p.is_file() and ".git" not in p.parts}
    assert after == before


# --------------------------------------------------------------------------- the command


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memento_core.cli", *args], capture_output=True, text=True,
                          cwd=cwd)


def test_json_is_one_document_with_a_stable_schema_and_the_worst_exit_code(ws, tmp_path):
    sick = Workspace(tmp_path / "sick")
    shutil.copytree(ws.root, sick.root, symlinks=True)
    _breaker(sick)
    warned = Workspace(tmp_path / "warned")
    shutil.copytree(ws.root, warned.root, symlinks=True)
    _alert(warned)
    r = _run("doctor", "--json", str(ws.root), str(warned.root), str(sick.root))
    assert r.returncode == 2, r.stderr
    doc = json.loads(r.stdout)
    assert set(doc) == {"schema", "checked_at", "exit_code", "workspaces"}
    assert doc["schema"] == "memento-doctor/1"
    assert doc["exit_code"] == 2
    assert [w["workspace"] for w in doc["workspaces"]] == [str(ws.root), str(warned.root), str(sick.root)]
    assert [w["exit_code"] for w in doc["workspaces"]] == [HEALTHY_EXIT, 1, 2]
    for w in doc["workspaces"]:
        assert set(w) == {"workspace", "exit_code", "findings"}
        for f in w["findings"]:
            assert set(f) == {"severity", "check", "message", "path", "line"}
            assert f["severity"] in ("CRITICAL", "WARNING", "INFO", "OK")
    breaker = [f for f in doc["workspaces"][2]["findings"] if f["check"] == "circuit-breaker"]
    assert breaker[0]["severity"] == "CRITICAL" and breaker[0]["path"] == ".memento/state.json"
    # --fail-on critical: warnings alone exit 0
    r = _run("doctor", "--fail-on", "critical", str(ws.root), str(warned.root))
    assert r.returncode == 0
    assert f"{warned.root}:" in r.stdout.splitlines()
    assert "[WARNING] .memento_alert is present: the pipeline needs attention (blocked: T-304)" in r.stdout


def test_several_workspaces_in_text_and_a_missing_one(ws, tmp_path):
    r = _run("doctor", str(ws.root), str(tmp_path / "nowhere"))
    assert r.returncode == 2
    assert r.stdout.splitlines()[0] == f"{ws.root}:"
    assert f"[CRITICAL] {tmp_path / 'nowhere'}: no such directory" in r.stdout.splitlines()
    assert "Traceback" not in r.stdout + r.stderr


def test_watch_prints_again_only_when_something_changed(ws):
    r = _run("doctor", "--watch", "0.01", "--count", "3", str(ws.root))
    assert r.returncode == HEALTHY_EXIT, r.stderr
    assert r.stdout.count(f"doctor (exit {HEALTHY_EXIT}):") == 1
    r = _run("doctor", "--watch", "0.01", "--count", "2", "--json", str(ws.root))
    assert [json.loads(line)["exit_code"] for line in r.stdout.splitlines()] == [HEALTHY_EXIT]


@pytest.mark.parametrize("args", [
    ["doctor", "--watch", "-1"],
    ["doctor", "--fail-on", "sometimes"],
    ["doctor", "--watch", "soon"],
    ["ack", "/no/such/dir"],
    ["doctor", "--json", "/no/such/dir"],
])
def test_bad_input_never_prints_a_traceback(args, tmp_path):
    r = _run(*args, cwd=tmp_path)
    assert r.returncode == 2
    assert "Traceback" not in r.stdout + r.stderr
