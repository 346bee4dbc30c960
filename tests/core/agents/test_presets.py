"""agents/presets/__init__.py: the presets by name and build_invocation, and each real preset driven
through a full tick (each preset's own argv and parsers: tests/core/agents/presets/test_<name>.py).

The integration tests put a stub executable with the preset's binary name
(`claude`, `codex`, …) first on PATH (tests/core/agents/stubs.py). The stub records its argv, its
working directory and everything it read on stdin, then makes the task's edit, so
the whole path — prompt file, stdin, timeout, log, verify, commit — is the
real one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from memento_core import agents
from memento_core.agents import build_invocation
from memento_core.config.model import Config
from memento_core.errors import MementoError
from memento_core.scaffold import init_workspace
from memento_core.tick.__main__ import run_tick
from memento_core.tick.architect.run import run_architect
from memento_core.workspace import Workspace
from tests.core.agents.presets.requests_of import config, request
from tests.core.agents.presets.requests_of import spaced_request as command_request
from tests.core.agents.stubs import PLAN, make_stub, workspace
from tests.core.sandbox.test_sandbox import needs_bwrap

REAL_PRESETS = ("claude", "codex", "aider", "gemini", "openclaw")


@pytest.fixture(autouse=True)
def no_process_left_behind():
    yield
    assert agents.process._RUNNING == {}


# ------------------------------------------------------------------ exact argv


@pytest.mark.parametrize("preset", REAL_PRESETS)
def test_every_real_preset_names_its_binary_first(tmp_path, preset):
    inv = build_invocation(config(preset, "some-model"), **request(tmp_path))
    assert inv.argv[0] == preset == agents.PRESETS[preset].binary


# ------------------------------------------------------------------ stub binaries through a tick


@pytest.mark.parametrize("preset", REAL_PRESETS)
def test_preset_runs_through_a_full_tick(tmp_path, monkeypatch, git_identity, preset):
    root = workspace(tmp_path / "project", preset)
    make_stub(tmp_path / "bin", preset)
    record_path = tmp_path / "record.json"
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("STUB_RECORD", str(record_path))

    outcome = run_tick(root)

    assert outcome.exit_code == 0, outcome.message
    assert [(r.task_id, r.passed) for r in outcome.results] == [("T-101", True)], outcome.message
    record = json.loads(record_path.read_text(encoding="utf-8"))
    prompt_file = root / ".memento" / "prompts" / "T-101.md"
    system_file = root / "scripts" / "tick_worker_system_prompt.md"
    expected = build_invocation(
        Config(agent_preset=preset, agent_model="stub-model", agent_extra_args=("--stub-extra",),
               agent_timeout=60.0),
        task_id="T-101", do_command=None, prompt_file=prompt_file,
        system_prompt_file=system_file, workdir=root)
    assert record["argv"] == list(expected.argv[1:])
    assert "--stub-extra" in record["argv"]
    assert Path(record["cwd"]) == root and record["task"] == "T-101"
    prompt = prompt_file.read_text(encoding="utf-8")
    assert "# Your task: T-101" in prompt
    if expected.stdin_path is not None:
        assert record["stdin"] == prompt  # the whole prompt, system prompt included
    else:
        assert record["stdin"] == ""  # /dev/null: nothing can wait for a keyboard
    assert "stub-model" in record["argv"]
    assert record["trust"] == ("true" if preset == "gemini" else None)
    # the edit was verified and committed; the log holds the command line and the agent's output
    assert (root / "hello.txt").read_text() == f"edited by the {preset} stub\n"
    log = (root / outcome.log).read_text(encoding="utf-8")
    assert f"agent ({preset}) in {root}: {expected.display()}" in log
    assert f"{preset} stub: edited hello.txt" in log
    assert "agent exited with code 0" in log
    subject = subprocess.run(["git", "log", "-1", "--format=%s"], cwd=root, check=True,
                             capture_output=True, text=True).stdout.strip()
    assert subject.startswith("memento: complete T-101")
    assert "hello.txt" in subprocess.run(["git", "show", "--name-only", "--format=", "HEAD"],
                                         cwd=root, check=True, capture_output=True, text=True).stdout


def test_missing_binary_is_the_tasks_failure_reason(tmp_path, monkeypatch, git_identity):
    root = workspace(tmp_path / "project", "codex")
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    outcome = run_tick(root)
    assert [r.passed for r in outcome.results] == [False]
    assert outcome.results[0].reason == "agent binary 'codex' not found on PATH (preset codex)"


# ------------------------------------------------------------------ memento agents


def test_a_hanging_agent_is_stopped_at_the_task_timeout(tmp_path, monkeypatch, git_identity):
    root = workspace(tmp_path / "project", "claude")
    plan = root / "docs" / "MASTER_PLAN.md"
    plan.write_text(plan.read_text().replace("  - retries: 0\n", "  - timeout: 1s\n  - retries: 0\n"))
    subprocess.run(["git", "commit", "-q", "-am", "timeout"], cwd=root, check=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "claude").write_text(f"#!{sys.executable}\nimport time\nprint('thinking', flush=True)\n"
                                    "time.sleep(61.5)\n", encoding="utf-8")
    (bin_dir / "claude").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    outcome = run_tick(root)
    assert [r.passed for r in outcome.results] == [False]
    assert outcome.results[0].reason.startswith("agent timed out after 1")
    log = (root / outcome.log).read_text(encoding="utf-8")
    assert "thinking" in log and "[memento] timed out after" in log


# ------------------------------------------------------------------ memento agents: runtime, unattended


# ------------------------------------------------------------------ limits and usage through the real presets

LIMITED_CLAUDE = """#!{python}
import json, sys
sys.stdin.read()
open("hello.txt", "w").write("scribbled by a refused claude\\n")
print(json.dumps({{"type": "result", "subtype": "success", "is_error": True, "num_turns": 1,
                  "result": "You've hit your limit \\u00b7 resets 3am (UTC)", "total_cost_usd": 0,
                  "usage": {{"input_tokens": 0, "output_tokens": 0}}}}))
sys.exit(1)
"""

WORKING_CODEX = """#!{python}
import json, sys
sys.stdin.read()
open("hello.txt", "w").write("edited by the codex stub\\n")
for event in ({{"type": "thread.started", "thread_id": "t"}}, {{"type": "turn.started"}},
              {{"type": "item.completed", "item": {{"id": "i", "type": "agent_message", "text": "Edited hello.txt."}}}},
              {{"type": "turn.completed", "usage": {{"input_tokens": 24763, "cached_input_tokens": 24448,
                                                   "output_tokens": 122}}}}):
    print(json.dumps(event))
"""


def test_a_rate_limited_claude_falls_back_to_codex_in_the_same_tick(tmp_path, monkeypatch, git_identity):
    root = workspace(tmp_path / "project", "claude")
    toml = root / "memento.toml"
    toml.write_text(toml.read_text().replace('extra_args = ["--stub-extra"]\n', 'fallback = ["codex"]\n'))
    subprocess.run(["git", "commit", "-q", "-am", "fallback"], cwd=root, check=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("claude", LIMITED_CLAUDE), ("codex", WORKING_CODEX)):
        (bin_dir / name).write_text(text.format(python=sys.executable), encoding="utf-8")
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")

    outcome = run_tick(root)

    assert [(r.task_id, r.passed) for r in outcome.results] == [("T-101", True)], outcome.message
    assert (root / "hello.txt").read_text() == "edited by the codex stub\n"
    from memento_core import status_log

    entry = status_log.parse_status(root / "docs" / "TICK_STATUS.md")[-1]
    # claude reported $0 for its refused run; codex reports tokens only
    assert entry.field("Usage") == "24.8k in / 122 out tokens, $0.000"
    assert entry.field("Fallback").startswith("claude rate limited until ") and entry.field(
        "Fallback").endswith("03:00 UTC; ran codex")
    log = (root / outcome.log).read_text(encoding="utf-8")
    assert "[memento] claude said:\nYou've hit your limit · resets 3am (UTC)" in log
    assert "[memento] codex said:\nEdited hello.txt." in log
    state = json.loads((root / ".memento" / "state.json").read_text())
    assert state["preset_limits"]["claude"].endswith("T03:00:00Z") and state["rate_limited_until"] == ""


# ------------------------------------------------------------------ confined: every role

ROLE_STUB = """#!{python}
import json, re, sys
from pathlib import Path
import os
prompt = sys.stdin.read()
system = sys.argv[sys.argv.index("--append-system-prompt-file") + 1]
criteria = re.search(r"## Acceptance criteria \\((\\d+)\\)", prompt)
role = ("architect" if system.endswith("architect_system_prompt.md")
        else "reviewer" if criteria else "worker")
print("ROLE " + json.dumps({{"role": role, "argv": sys.argv[1:],
                             "is_sandbox": os.environ.get("IS_SANDBOX")}}), flush=True)
if role == "worker":
    Path("hello.txt").write_text("done\\n", encoding="utf-8")
elif role == "reviewer":
    found = "".join(f"- [PASS] {{n}}: checked\\n" for n in range(1, int(criteria.group(1)) + 1))
    Path(".memento/worker/review.md").write_text("Verdict: PASS\\n\\n" + found, encoding="utf-8")
"""


def _roles(log: str) -> dict[str, dict]:
    return {r["role"]: r for r in (json.loads(line[5:]) for line in log.splitlines()
                                   if line.startswith("ROLE {"))}


@needs_bwrap
def test_the_worker_the_reviewer_and_the_architect_each_run_their_cli_confined(tmp_path, git_identity,
                                                                               monkeypatch):
    """Each role's run in the sandbox tells its preset so (AgentRequest.confined): the claude stub
    sees bypassPermissions and IS_SANDBOX=1 as the worker, the reviewer and the architect."""
    bin_dir = Path(tempfile.mkdtemp(prefix="memento-stub-", dir="/var/tmp"))  # /tmp is private inside
    try:
        stub = bin_dir / "claude"
        stub.write_text(ROLE_STUB.format(python=sys.executable), encoding="utf-8")
        stub.chmod(0o755)
        monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
        root = tmp_path / "proj"
        init_workspace(root, project="roles")
        (root / "docs" / "MASTER_PLAN.md").write_text(
            PLAN.replace("grep -q 'edited by the' hello.txt", "grep -q done hello.txt").replace(
                "  - retries: 0\n", "  - accept: hello.txt says done\n  - retries: 0\n"), encoding="utf-8")
        (root / "memento.toml").write_text(
            '[agent]\npreset = "claude"\ntimeout = "1min"\n[verify]\ntimeout = "1min"\n'
            '[review]\npreset = "claude"\n[sandbox]\nmode = "bwrap"\n', encoding="utf-8")
        subprocess.run(["git", "add", "-A"], cwd=root, check=True)
        subprocess.run(["git", "commit", "-q", "-m", "roles"], cwd=root, check=True)

        outcome = run_tick(root)
        log = (root / outcome.log).read_text(encoding="utf-8")
        assert [(r.task_id, r.passed) for r in outcome.results] == [("T-101", True)], log[-3000:]
        architect = run_architect(Workspace(root))
        seen = _roles(log) | _roles((root / architect.log).read_text(encoding="utf-8"))
    finally:
        shutil.rmtree(bin_dir, ignore_errors=True)

    assert sorted(seen) == ["architect", "reviewer", "worker"], seen
    for role, record in seen.items():
        argv = record["argv"]
        assert argv[argv.index("--permission-mode") + 1] == "bypassPermissions", (role, argv)
        assert record["is_sandbox"] == "1", role


# ------------------------------------------------------- the command and script presets' argv


def test_every_preset_name_is_built_and_an_unknown_one_names_the_presets(tmp_path):
    # Every preset name memento.toml accepts is built (tests/core/agents/presets/ has their argv).
    assert build_invocation(Config(agent_preset="claude"), **command_request(tmp_path)).preset == "claude"
    with pytest.raises(MementoError) as info:
        build_invocation(Config(agent_preset="robot"), **command_request(tmp_path))
    assert "unknown agent preset 'robot'" in str(info.value) and "codex" in str(info.value)
