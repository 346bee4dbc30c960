"""The real agent presets: exact argv for each, and each one driven through a full tick.

The integration tests put a stub executable with the preset's binary name
(`claude`, `codex`, …) first on PATH. The stub records its argv, its working
directory and everything it read on stdin, then makes the task's edit, so
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
from memento_core.agents import Invocation, build_invocation
from memento_core.agents.check import probe, probe_all
from memento_core.agents.presets.gemini import GEMINI_PROMPT_SUFFIX
from memento_core.agents.presets.openclaw import openclaw_message
from memento_core.config.model import Config
from memento_core.errors import MementoError
from memento_core.scaffold import init_workspace
from memento_core.tick.__main__ import run_tick
from memento_core.tick.architect.run import run_architect
from memento_core.workspace import Workspace
from tests.core.agents.test_process import command_config
from tests.core.agents.test_process import request as command_request
from tests.core.sandbox.test_sandbox import needs_bwrap

REAL_PRESETS = ("claude", "codex", "aider", "gemini", "openclaw")


@pytest.fixture(autouse=True)
def no_process_left_behind():
    yield
    assert agents.process._RUNNING == {}


def request(tmp_path: Path, **kw) -> dict:
    prompt = tmp_path / ".memento" / "prompts" / "T-1.md"
    prompt.parent.mkdir(parents=True, exist_ok=True)
    prompt.write_text("SYSTEM\n\n---\n\n# Your task: T-1\n", encoding="utf-8")
    system = tmp_path / "scripts" / "tick_worker_system_prompt.md"
    system.parent.mkdir(parents=True, exist_ok=True)
    system.write_text("SYSTEM\n", encoding="utf-8")
    args = dict(task_id="T-1", do_command=None, prompt_file=prompt, system_prompt_file=system,
                workdir=tmp_path)
    args.update(kw)
    return args


def config(preset: str, model: str = "", extra: tuple[str, ...] = ()) -> Config:
    return Config(agent_preset=preset, agent_model=model, agent_extra_args=extra,
                  agent_timeout=1200.0)


# ------------------------------------------------------------------ exact argv


def test_claude_argv(tmp_path):
    req = request(tmp_path)
    inv = build_invocation(config("claude"), **req)
    assert inv.argv == (
        "claude", "-p", "--permission-mode", "acceptEdits", "--output-format", "stream-json", "--verbose",
        "--append-system-prompt-file", str(req["system_prompt_file"]),
    )
    assert inv.stdin_path == req["prompt_file"] and not inv.shell and inv.preset == "claude"
    inv = build_invocation(config("claude", "opus", ("--max-turns", "40")), **req)
    assert inv.argv[-4:] == ("--model", "opus", "--max-turns", "40")
    assert inv.env == {}  # unconfined: edits accepted, any other tool (Bash) needs a person


def test_confined_claude_runs_every_tool_without_asking(tmp_path):
    """In the sandbox (SPEC §13) the worker must run the project's tests: bypassPermissions, and
    IS_SANDBOX=1, without which Claude Code refuses that mode as root."""
    req = request(tmp_path)
    inv = build_invocation(config("claude"), **req, confined=True)
    assert inv.argv == (
        "claude", "-p", "--permission-mode", "bypassPermissions", "--output-format", "stream-json", "--verbose",
        "--append-system-prompt-file", str(req["system_prompt_file"]),
    )
    assert inv.env == {"IS_SANDBOX": "1"}


def test_claude_without_a_system_prompt_file_leaves_the_flag_out(tmp_path):
    req = request(tmp_path)
    req["system_prompt_file"].unlink()
    inv = build_invocation(config("claude"), **req)
    assert inv.argv == ("claude", "-p", "--permission-mode", "acceptEdits", "--output-format", "stream-json", "--verbose")


def test_codex_argv(tmp_path):
    req = request(tmp_path)
    inv = build_invocation(config("codex"), **req)
    assert inv.argv == (
        "codex", "exec", "--json", "--sandbox", "workspace-write", "--cd", str(tmp_path), "--color", "never",
        "-",
    )
    assert inv.stdin_path == req["prompt_file"]
    inv = build_invocation(config("codex", "gpt-5-codex", ("-c", "x=1")), **req)
    # extra arguments come before the trailing "-" (the prompt is read from stdin)
    assert inv.argv[9:] == ("--model", "gpt-5-codex", "-c", "x=1", "-")
    # In Memento's sandbox codex's own bubblewrap cannot nest: Memento's sandbox confines it instead.
    # `codex exec` never asks for approval; confined, codex's own sandbox is off too (full access).
    inv = build_invocation(config("codex"), **req, confined=True)
    assert inv.argv == (
        "codex", "exec", "--json", "--sandbox", "danger-full-access", "--cd", str(tmp_path),
        "--color", "never", "-",
    )
    assert inv.env == {}


def test_gemini_argv(tmp_path):
    req = request(tmp_path)
    inv = build_invocation(config("gemini"), **req)
    assert inv.argv == ("gemini", "--approval-mode", "auto_edit", "--output-format", "stream-json",
                        "--prompt", GEMINI_PROMPT_SUFFIX)
    assert inv.stdin_path == req["prompt_file"]
    # A fresh install refuses an untrusted folder (exit 55): the project is trusted for the run.
    assert inv.env == {"GEMINI_CLI_TRUST_WORKSPACE": "true"}
    inv = build_invocation(config("gemini", "gemini-2.5-pro", ("--debug",)), **req)
    assert inv.argv == ("gemini", "--approval-mode", "auto_edit", "--output-format", "stream-json",
                        "--model", "gemini-2.5-pro", "--debug", "--prompt", GEMINI_PROMPT_SUFFIX)
    # Confined (SPEC §13): every tool approved, its run_shell_command included.
    inv = build_invocation(config("gemini"), **req, confined=True)
    assert inv.argv == ("gemini", "--approval-mode", "yolo", "--output-format", "stream-json",
                        "--prompt", GEMINI_PROMPT_SUFFIX)
    assert inv.env == {"GEMINI_CLI_TRUST_WORKSPACE": "true"}


AIDER_COMMON = (
    "--no-auto-commits", "--no-dirty-commits", "--no-gitignore", "--no-git",
    "--no-check-update", "--no-show-release-notes", "--analytics-disable",
    "--no-detect-urls", "--no-pretty", "--no-stream", "--no-fancy-input",
)
AIDER_FLAGS = ("--yes-always", "--no-suggest-shell-commands", *AIDER_COMMON)


def test_aider_argv(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "docs").mkdir()
    for doc in ("MASTER_PLAN.md", "PROJECT_MAP.md", "HUMAN_NOTES.md"):  # no CURRENT_STATE.md yet
        (tmp_path / "docs" / doc).write_text("x\n")
    req = request(tmp_path, context_files=["src/app.py", "src/", "tests/*.py", "src", "README.md",
                                           "docs/PROJECT_MAP.md"])
    inv = build_invocation(config("aider", "sonnet", ("--map-tokens", "2048")), **req)
    state = tmp_path / ".memento" / "worker"
    assert inv.argv == (
        "aider", "--message-file", str(req["prompt_file"]),
        "--read", str(req["system_prompt_file"]),
        # Memento's documents are read-only for aider, even when a task names one
        "--read", "docs/MASTER_PLAN.md", "--read", "docs/PROJECT_MAP.md", "--read", "docs/HUMAN_NOTES.md",
        *AIDER_FLAGS,
        "--input-history-file", str(state / "aider.input.history"),
        "--chat-history-file", str(state / "aider.chat.history.md"),
        "--model", "sonnet", "--map-tokens", "2048",
        "src/app.py", "README.md",  # folders and patterns are not files aider can open
    )
    assert inv.stdin_path is None  # the prompt comes from --message-file; stdin is /dev/null


def test_confined_aider_runs_the_shell_commands_it_suggests(tmp_path):
    """--yes-always answers no to "Run shell command?": confined, aider gets no --yes-always and
    answers each question with its default (yes) from /dev/null, its shell commands suggested."""
    req = request(tmp_path, context_files=["a.py"])
    inv = build_invocation(config("aider", "sonnet"), **req, confined=True)
    state = tmp_path / ".memento" / "worker"
    assert inv.argv == (
        "aider", "--message-file", str(req["prompt_file"]), "--read", str(req["system_prompt_file"]),
        "--suggest-shell-commands", *AIDER_COMMON,
        "--input-history-file", str(state / "aider.input.history"),
        "--chat-history-file", str(state / "aider.chat.history.md"),
        "--model", "sonnet", "a.py",
    )
    assert "--yes-always" not in inv.argv and inv.stdin_path is None


def test_aider_reads_context_files_from_the_plan_when_not_given(tmp_path):
    plan = tmp_path / "docs" / "MASTER_PLAN.md"
    plan.parent.mkdir(parents=True)
    plan.write_text(
        "# MASTER_PLAN: x\n\n## Meta\n- tick_mode: auto\n\n## Phase 1: A\n\n"
        "- [ ] `T-1` Do it\n  - verify: `true`\n  - context_files: [a.py, docs/]\n",
        encoding="utf-8")
    inv = build_invocation(config("aider", "sonnet"), **request(tmp_path))
    assert inv.argv[-1] == "a.py" and "docs/" not in inv.argv


def test_aider_without_a_model_refuses_to_start_naming_the_setting(tmp_path):
    with pytest.raises(MementoError, match=r"\[agent\] model"):
        build_invocation(config("aider"), **request(tmp_path))


def test_openclaw_argv(tmp_path):
    req = request(tmp_path)
    inv = build_invocation(config("openclaw", "mock/model", ("--thinking", "high")), **req)
    argv = inv.argv
    assert argv[:4] == ("openclaw", "agent", "--local", "--session-id")
    assert argv[4].startswith("memento-T-1-") and len(argv[4]) == len("memento-T-1-") + 12
    assert argv[5:] == ("--timeout", "1200", "--model", "mock/model", "--thinking", "high",
                        "--message", openclaw_message(agents.AgentRequest(
                            "T-1", None, req["prompt_file"], req["system_prompt_file"], tmp_path)))
    assert str(req["prompt_file"]) in argv[-1] and str(tmp_path) in argv[-1]
    assert inv.stdin_path is None
    # openclaw has no per-run permission flag: its own default (tools.exec.mode unset, no
    # sandbox of its own) runs exec without approval, confined or not.
    assert build_invocation(config("openclaw", "mock/model", ("--thinking", "high")), **req,
                            confined=True).argv == argv
    # A new prompt (a retry carries its failed attempts) is a new session.
    req["prompt_file"].write_text("other prompt\n", encoding="utf-8")
    assert build_invocation(config("openclaw"), **req).argv[4] != argv[4]


@pytest.mark.parametrize("preset", REAL_PRESETS)
def test_every_real_preset_names_its_binary_first(tmp_path, preset):
    inv = build_invocation(config(preset, "some-model"), **request(tmp_path))
    assert inv.argv[0] == preset == agents.PRESETS[preset].binary


# ------------------------------------------------------------------ stub binaries through a tick

STUB = """#!{python}
import json, os, sys
stdin = sys.stdin.read()
record = {{"argv": sys.argv[1:], "cwd": os.getcwd(), "stdin": stdin,
          "task": os.environ.get("MEMENTO_TASK_ID"),
          "trust": os.environ.get("GEMINI_CLI_TRUST_WORKSPACE")}}
with open(os.environ["STUB_RECORD"], "w", encoding="utf-8") as fh:
    json.dump(record, fh)
with open("hello.txt", "w", encoding="utf-8") as fh:
    fh.write("edited by the {name} stub\\n")
print("{name} stub: edited hello.txt")
"""

PLAN = """# MASTER_PLAN: stubs

## Meta
- tick_mode: auto
- max_retries: 3
- max_tasks_per_tick: 1

---

## Phase 1: One
<!-- depends: none -->

- [ ] `T-101` [MODULE:hello] Write hello.txt
  - verify: `grep -q 'edited by the' hello.txt`
  - context_files: [hello.txt]
  - retries: 0
"""


def make_stub(bin_dir: Path, name: str) -> Path:
    bin_dir.mkdir(parents=True, exist_ok=True)
    stub = bin_dir / name
    stub.write_text(STUB.format(python=sys.executable, name=name), encoding="utf-8")
    stub.chmod(0o755)
    return stub


def workspace(root: Path, preset: str) -> Path:
    init_workspace(root, project="stubs")
    (root / "docs" / "MASTER_PLAN.md").write_text(PLAN, encoding="utf-8")
    (root / "memento.toml").write_text(
        f'[agent]\npreset = "{preset}"\ntimeout = "1min"\nmodel = "stub-model"\n'
        f'extra_args = ["--stub-extra"]\n\n[verify]\ntimeout = "1min"\n'
        '[sandbox]\nmode = "none"\nenv = ["STUB_RECORD"]\n', encoding="utf-8")  # the stubs live in (and record to) /tmp
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "stub plan"], cwd=root, check=True)
    return root


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


def test_probe_finds_the_stub_and_its_version(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stub = bin_dir / "claude"
    stub.write_text("#!/bin/sh\necho '9.9.9 (Claude Code)'\n", encoding="utf-8")
    stub.chmod(0o755)
    found = probe(agents.PRESETS["claude"], selected=True, env={"PATH": str(bin_dir)})
    assert found.path == str(stub) and found.version == "9.9.9 (Claude Code)"
    assert found.selected and found.runnable and found.note == ""
    missing = probe(agents.PRESETS["codex"], env={"PATH": str(bin_dir)})
    assert missing.path is None and not missing.runnable
    assert missing.note == "'codex' not found on PATH"


def test_probe_of_a_hanging_version_is_bounded_and_leaves_nothing(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stub = bin_dir / "gemini"
    stub.write_text("#!/bin/sh\necho starting\nsleep 61.25 &\nsleep 61.25\n", encoding="utf-8")
    stub.chmod(0o755)
    found = probe(agents.PRESETS["gemini"], env={"PATH": f"{bin_dir}:/usr/bin:/bin"}, timeout=0.5)
    assert found.version == "starting"
    assert "did not answer within 0.5s" in found.note
    assert sleepers("61.25") == []  # the whole process group is gone, background child included


def sleepers(mark: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
                state = (entry / "stat").read_bytes().rsplit(b")", 1)[1].split()[0]
            except OSError:
                continue
            if argv[:2] == [b"sleep", mark.encode()] and state not in (b"Z", b"X"):
                found.append(int(entry.name))
    return found


def test_probe_all_lists_every_preset_and_marks_the_selected_one():
    probes = probe_all("script", env={"PATH": "/nonexistent"})
    assert [p.preset for p in probes] == list(agents.PRESETS)
    assert [p.preset for p in probes if p.selected] == ["script"]


def test_memento_agents_command(tmp_path, git_identity):
    root = workspace(tmp_path / "project", "gemini")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gemini").write_text("#!/bin/sh\necho 0.9.0\n", encoding="utf-8")
    (bin_dir / "gemini").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.path.dirname(sys.executable)}:/usr/bin:/bin"}
    run = subprocess.run([sys.executable, "-m", "memento_core.cli", "agents", str(root)],
                         capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    gemini = next(ln for ln in lines if ln.split()[1] == "gemini")
    assert gemini.startswith("[ok]") and "0.9.0" in gemini and gemini.endswith("<- memento.toml")
    assert any(ln.startswith("[warn] claude") for ln in lines)
    run = subprocess.run([sys.executable, "-m", "memento_core.cli", "agents", "--json",
                          "--project", str(root)], capture_output=True, text=True, env=env)
    doc = json.loads(run.stdout)
    assert doc["selected"] == "gemini" and doc["root"] == str(root)
    assert {p["preset"]: p["version"] for p in doc["presets"]}["gemini"] == "0.9.0"
    # the selected preset's CLI missing: exit 1, so scripts notice
    (bin_dir / "gemini").unlink()
    run = subprocess.run([sys.executable, "-m", "memento_core.cli", "agents", str(root)],
                         capture_output=True, text=True, env=env)
    assert run.returncode == 1


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


def node_cli(tmp_path: Path, *, node_version: str, engines: str) -> dict:
    """A claude installed as npm does it: bin/claude -> the package's cli.js, run by `env node`.

    The fake node answers ``--version`` with ``node_version`` and runs "cli.js --version"
    as Claude Code does, with a warning on stderr that is not the version.
    """
    bin_dir = tmp_path / "bin"
    package = tmp_path / "lib" / "node_modules" / "@anthropic-ai" / "claude-code"
    package.mkdir(parents=True)
    bin_dir.mkdir()
    (package / "package.json").write_text(json.dumps({"name": "@anthropic-ai/claude-code",
                                                      "engines": {"node": engines}}))
    (package / "cli.js").write_text("#!/usr/bin/env node\nconsole.log('2.1.332 (Claude Code)')\n")
    (package / "cli.js").chmod(0o755)
    (bin_dir / "claude").symlink_to(package / "cli.js")
    (bin_dir / "node").write_text(
        "#!/bin/sh\nif [ \"$1\" = --version ]; then echo " + node_version + "; exit 0; fi\n"
        "echo 'WARNING: proceeding, even though we could not create PATH aliases' >&2\n"
        "echo '2.1.332 (Claude Code)'\n")
    (bin_dir / "node").chmod(0o755)
    return {"PATH": f"{bin_dir}:/usr/bin:/bin"}


def test_agents_reads_the_version_from_stdout_and_checks_the_node_it_runs_on(tmp_path):
    env = node_cli(tmp_path, node_version="v20.11.1", engines=">=22.0.0")
    found = probe(agents.PRESETS["claude"], env=env)
    assert found.version == "2.1.332 (Claude Code)"  # not the stderr warning
    assert found.runtime == "node v20.11.1 (the package needs >=22.0.0) — install a newer Node"
    assert not found.runtime_ok


def test_a_new_enough_node_is_reported_and_accepted(tmp_path):
    env = node_cli(tmp_path, node_version="v22.12.0", engines=">=22")
    found = probe(agents.PRESETS["claude"], env=env)
    assert found.runtime == "node v22.12.0 (the package needs >=22)" and found.runtime_ok


def test_agents_flags_aider_without_a_model_with_what_to_do(tmp_path, git_identity):
    root = workspace(tmp_path / "project", "aider")
    toml = root / "memento.toml"
    toml.write_text(toml.read_text().replace('model = "stub-model"\n', ""))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "aider").write_text("#!/bin/sh\necho 'aider 0.86.2'\n")
    (bin_dir / "aider").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.path.dirname(sys.executable)}:/usr/bin:/bin"}
    run = subprocess.run([sys.executable, "-m", "memento_core.cli", "agents", str(root)],
                         capture_output=True, text=True, env=env)
    assert run.returncode == 1  # the selected preset cannot run unattended
    assert any(ln.startswith("[warn] aider") and "[agent] model" in ln for ln in run.stdout.splitlines())
    doc = json.loads(subprocess.run([sys.executable, "-m", "memento_core.cli", "agents", "--json", str(root)],
                                    capture_output=True, text=True, env=env).stdout)
    aider = next(p for p in doc["presets"] if p["preset"] == "aider")
    assert "[agent] model" in aider["unattended"] and aider["version"] == "aider 0.86.2"


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


def test_command_preset_argv_with_spaces_in_paths(tmp_path):
    req = command_request(tmp_path)
    cfg = command_config(
        "python3 tools/agent.py --prompt={prompt_file} {system_prompt_file} "
        "'task {task_id}' {workdir} --model {model} '{unknown}'",
        agent_model="m-1",
        agent_extra_args=("--yes",),
    )
    inv = build_invocation(cfg, **req)
    assert inv == Invocation(
        (
            "python3",
            "tools/agent.py",
            f"--prompt={req['prompt_file']}",
            str(req["system_prompt_file"]),
            "task T-1",
            str(tmp_path),
            "--model",
            "m-1",
            "{unknown}",
            "--yes",
        ),
        False,
        req["prompt_file"],
        "command",
    )
    assert " " in str(req["prompt_file"])


def test_command_preset_errors(tmp_path):
    with pytest.raises(MementoError, match="needs a command"):
        build_invocation(command_config("   "), **command_request(tmp_path))
    with pytest.raises(MementoError, match="cannot be split"):
        build_invocation(command_config("agent 'unclosed"), **command_request(tmp_path))


def test_script_preset_without_do_and_unknown_presets(tmp_path):
    with pytest.raises(
        MementoError, match=r"task T-1 has no `do:` command; the script preset needs one"
    ):
        build_invocation(Config(agent_preset="script"), **command_request(tmp_path))
    # Every preset name memento.toml accepts is built (tests/core/agents/test_presets.py has their argv).
    assert build_invocation(Config(agent_preset="claude"), **command_request(tmp_path)).preset == "claude"
    with pytest.raises(MementoError) as info:
        build_invocation(Config(agent_preset="robot"), **command_request(tmp_path))
    assert "unknown agent preset 'robot'" in str(info.value) and "codex" in str(info.value)
