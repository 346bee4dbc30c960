"""`memento doctor --agent` (SPEC §20): one real call of the agent through the tick's own path.

The `command` preset with a fake agent (tests/agents/answers_doctor.py): an answer is OK with how
long it took; a refusal, a login missing, an exit 0 whose last words or JSON say it gave up are
CRITICAL with those words; the call runs in the sandbox with `[sandbox] network` as a tick's
would (a local "model" reached under `allow`, not under `network = "none"`). The real CLIs
against the mock model are in tests/e2e/test_real_doctor.py.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memento_core.doctor import CRITICAL, OK, WARNING, check_workspace
from memento_core.locks import file_lock
from memento_core.scaffold import init_workspace
from memento_core.workspace import Workspace
from tests.core.sandbox.test_network import Listener
from tests.core.sandbox.test_sandbox import needs_bwrap

AGENTS = Path(__file__).resolve().parents[3] / "agents"
PY = sys.executable
SRC = str(Path(__file__).resolve().parents[4])


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def make_ws(tmp_path: Path, mode: str, *, sandbox: str = 'mode = "none"', output: str = "",
            url: str = "") -> tuple[Workspace, Path]:
    root, out = tmp_path / "proj", tmp_path / "out"
    out.mkdir(parents=True, exist_ok=True)
    init_workspace(root, project="proj", commit=False)
    command = f"{PY} {AGENTS / 'answers_doctor.py'} {{prompt_file}} {out} {mode} {url}".rstrip()
    (root / "memento.toml").write_text(
        f'[agent]\npreset = "command"\ncommand = "{command}"\ntimeout = "30s"\n{output}'
        f'[sandbox]\n{sandbox}\nwritable = ["{out}"]\n', encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "setup")
    return Workspace(root), out


def agent_call(ws: Workspace):
    found = [f for f in check_workspace(ws, agent=True) if f.check == "agent-call"]
    assert len(found) == 1, found
    return found[0]


def test_an_agent_that_answers_is_ok_and_got_the_one_line_prompt(tmp_path, git_identity):
    ws, out = make_ws(tmp_path, "ok")
    before = git(ws.root, "status", "--porcelain")
    found = agent_call(ws)
    assert found.severity == OK, found
    assert found.message.startswith("agent-call: command answered (no model endpoint of its own: command preset) in ")
    assert found.message.endswith(" s")
    assert (out / "prompt.md").read_text().startswith("This is Memento's preflight check")
    seen = (out / "seen.txt").read_text()
    assert f"cwd {ws.root}" in seen and "config writable True" in seen  # in the project, unconfined here
    logs = list(ws.logs_dir.glob("doctor-agent_*.log"))
    assert len(logs) == 1 and "agent (command)" in logs[0].read_text() and "OK" in logs[0].read_text()
    assert git(ws.root, "status", "--porcelain") == before  # the doctor's run leaves the project as it was
    assert not [f for f in check_workspace(ws) if f.check == "agent-call"]  # only with --agent


@pytest.mark.parametrize("mode, output, why, words", [
    ("not-logged-in", "", "(not logged in: agent exited with code 1)", "Invalid API key · Please run /login"),
    ("error-json-0", 'output = "claude"\n', "(endpoint unreachable, though it exited 0)",
     "API Error: Connection error."),
    ("says-error-0", "", "(endpoint unreachable, though it exited 0)", "Error: connect ECONNREFUSED 127.0.0.1:9"),
])
def test_an_agent_that_gave_up_is_critical_with_its_last_words(tmp_path, git_identity, mode, output, why, words):
    ws, _ = make_ws(tmp_path, mode, output=output)
    found = agent_call(ws)
    assert found.severity == CRITICAL, found
    assert found.message.startswith("agent-call: command did not answer (no model endpoint of its own: command "
                                    f"preset) {why}; its last words: '"), found.message
    assert words in found.message.split("its last words: ")[1], found.message
    assert "(log logs/doctor-agent_" in found.message


def test_a_running_tick_is_never_joined_by_the_doctors_agent(tmp_path, git_identity):
    ws, out = make_ws(tmp_path, "ok")
    with file_lock(ws.tick_lock_path, blocking=False):
        found = agent_call(ws)
    assert found.severity == WARNING and "a tick is running" in found.message
    assert not (out / "prompt.md").exists()  # the agent never ran


@needs_bwrap
def test_the_call_runs_confined_under_the_network_a_tick_has(tmp_path, git_identity):
    model = Listener(answer=b"the model says hi")
    try:
        url = f"http://127.0.0.1:{model.port}/v1/messages"
        allow = f'mode = "bwrap"\nnetwork = "model"\nallow = ["127.0.0.1:{model.port}"]'
        ws, out = make_ws(tmp_path / "model", "get", sandbox=allow, url=url)
        found = agent_call(ws)
        assert found.severity == OK, found
        assert model.data.startswith(b"GET /v1/messages ")  # reached, through the sandbox's proxy
        assert "config writable False" in (out / "seen.txt").read_text()  # confined: memento.toml read-only
        ws, _ = make_ws(tmp_path / "none", "get", sandbox='mode = "bwrap"\nnetwork = "none"', url=url)
        before = model.others()[0]
        found = agent_call(ws)
        assert found.severity == CRITICAL and "(endpoint unreachable: agent exited with code 1)" in found.message, found
        assert f"could not reach {url}" in found.message
        assert model.others()[0] == before == 1  # never reached under network = "none"
    finally:
        model.close()


def test_the_command_exits_as_the_doctor_does(tmp_path, git_identity):
    ws, _ = make_ws(tmp_path, "not-logged-in")
    env = {"PYTHONPATH": SRC, "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    proc = subprocess.run([PY, "-m", "memento_core.cli", "doctor", "--agent", str(ws.root)], capture_output=True,
                          text=True, timeout=120, env=env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "[CRITICAL] agent-call: command did not answer" in proc.stdout
    refused = subprocess.run([PY, "-m", "memento_core.cli", "doctor", "--agent", "--watch", "5", str(ws.root)],
                             capture_output=True, text=True, timeout=60, env=env)
    assert refused.returncode != 0 and "--agent runs the agent once" in refused.stdout + refused.stderr
