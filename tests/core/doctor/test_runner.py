"""memento doctor: one fixture workspace per check, exact lines and exit codes (SPEC §8)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memento_core import checkpoint, doctor, sandbox
from memento_core.cli.main import main
from memento_core.config.model import Config
from memento_core.demo import create_demo
from memento_core.locks import file_lock
from memento_core.notes import add_note
from memento_core.state import Claim, TickState, this_host, write_claim
from memento_core.tick.__main__ import run_tick
from memento_core.workspace import Workspace

T0 = datetime(2026, 1, 1, tzinfo=UTC).timestamp()
# What a `memento doctor` subprocess says about a healthy workspace here: where bubblewrap cannot
# run, its sandbox check warns (the agent would run unconfined), so the exit code is 1.
HEALTHY_EXIT = 0 if sandbox.resolve(Config()).confined else 1


@pytest.fixture(autouse=True)
def _sandbox_runs(monkeypatch):
    """Judge the other checks as on a machine where bubblewrap runs, whatever this one has:
    without it the `sandbox` check warns (unconfined) by design; test_sandbox.py judges that check."""
    from memento_core import sandbox

    monkeypatch.setattr(sandbox, "resolve", lambda config: sandbox.Resolution("bwrap", True, None, "bwrap"))


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """A demo project after one tick whose result was acknowledged: healthy."""
    with pytest.MonkeyPatch.context() as mp:
        for var, value in (("GIT_AUTHOR_NAME", "Test Person"), ("GIT_AUTHOR_EMAIL", "test@example.invalid"),
                           ("GIT_COMMITTER_NAME", "Test Person"), ("GIT_COMMITTER_EMAIL", "test@example.invalid")):
            mp.setenv(var, value)
        root = create_demo(tmp_path_factory.mktemp("doctor") / "calc")
        assert run_tick(root).exit_code == 0
        assert checkpoint.acknowledge(Workspace(root)) == 1
    return root


@pytest.fixture
def ws(template: Path, tmp_path: Path, git_identity) -> Workspace:
    root = tmp_path / "calc"
    shutil.copytree(template, root, symlinks=True)
    return Workspace(root)


def problems(ws: Workspace) -> tuple[list[str], int]:
    findings = doctor.check_workspace(ws)
    return [str(f) for f in findings if f.severity != "OK"], doctor.exit_code(findings)


def line_of(path: Path, needle: str) -> int:
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in {path}")


def commit(ws: Workspace, *paths: str) -> None:
    """Commit a person's change with plain git, so the tree is clean again."""
    subprocess.run(["git", "-C", str(ws.root), "commit", "-q", "-m", "a person's change", "--", *paths], check=True)


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


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


# --------------------------------------------------------------------------- one case per check


def _missing(ws):
    ws.checkpoint_path.unlink()
    return ["[CRITICAL] docs/CURRENT_STATE.md does not exist: no deterministic recovery point "
            "(the next tick writes it)"], 2


def _stale(ws):
    state = TickState.load(ws)
    state.last_tick_finished = "2026-01-01T02:00:00Z"
    state.save(ws)
    os.utime(ws.checkpoint_path, (T0, T0))
    for log in ws.logs_dir.glob("tick_*.log"):
        os.utime(log, (T0 + 3600, T0 + 3600))
    return ["[WARNING] docs/CURRENT_STATE.md is stale: written 2026-01-01T00:00:00Z, 2h00m before "
            "the last tick (#1) finished (2026-01-01T02:00:00Z)"], 1


def _stale_log(ws):
    state = TickState.load(ws)
    state.last_tick_finished = "2026-01-01T00:00:00Z"
    state.save(ws)
    os.utime(ws.checkpoint_path, (T0, T0))
    log = sorted(ws.logs_dir.glob("tick_*.log"))[-1]
    os.utime(log, (T0 + 90, T0 + 90))
    return [f"[WARNING] docs/CURRENT_STATE.md is stale: written 2026-01-01T00:00:00Z, 1m30s before "
            f"the newest tick log {ws.rel(log)} was written (2026-01-01T00:01:30Z)"], 1


def _section_missing(ws):
    text = ws.checkpoint_path.read_text()
    start = text.index("## Blockers")
    end = text.index("## Unsurfaced Results")
    ws.checkpoint_path.write_text(text[:start] + text[end:])
    return ["[WARNING] docs/CURRENT_STATE.md: the `## Blockers` section is missing "
            "(every section is mandatory; write None)"], 1


def _placeholder(ws):
    edit(ws.checkpoint_path, "## Key Decisions\n", "## Key Decisions\n- [Decision 1: what was decided and why]\n")
    line = line_of(ws.checkpoint_path, "[Decision 1")
    return [f"[INFO] docs/CURRENT_STATE.md:{line}: the `## Key Decisions` section still shows placeholder text: "
            "[Decision 1: what was decided and why]"], 0


def _objective_placeholder(ws):
    text = ws.checkpoint_path.read_text()
    objective = checkpoint.parse_checkpoint(text).objective
    edit(ws.checkpoint_path, objective, "[One sentence: what are we trying to accomplish]")
    line = line_of(ws.checkpoint_path, "[One sentence")
    return [
        f"[WARNING] docs/CURRENT_STATE.md:{line}: the `## Objective` section still shows placeholder text: "
        "[One sentence: what are we trying to accomplish]",
        f"[WARNING] docs/CURRENT_STATE.md:{line - 1}: 7 task(s) are open but the Objective is empty or "
        "placeholder text",
        f"[INFO] docs/CURRENT_STATE.md:{line - 1}: the Objective does not name the active phase (Phase 1: Foundation)",
    ], 1


def _next_action_none(ws):
    text = ws.checkpoint_path.read_text()
    action = " ".join(checkpoint.read_sections(text)["Next Action"])
    edit(ws.checkpoint_path, action, "None")
    line = line_of(ws.checkpoint_path, "## Next Action")
    return [
        f"[WARNING] docs/CURRENT_STATE.md:{line}: recovery state exists but Next Action is empty, None or "
        "placeholder text",
        f"[INFO] docs/CURRENT_STATE.md:{line}: Next Action names no task, but the next task is T-102 "
        "(Add and subtract)",
    ], 1


def _unsurfaced(ws):
    edit(ws.checkpoint_path, "## Unsurfaced Results\nNone", "## Unsurfaced Results\n- T-101 passed, commit abc1234")
    line = line_of(ws.checkpoint_path, "## Unsurfaced Results")
    return [f"[WARNING] docs/CURRENT_STATE.md:{line}: Unsurfaced Results lists 1 result(s) nobody acknowledged "
            "(T-101): review them, then `memento ack`"], 1


def _archive(ws):
    folder = ws.memory_dir / "session_archive"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "2026-01-01T000000Z.md").write_text(
        "# Current State\n> Last updated: 2026-01-01T00:00:00Z\n\n## Objective\nShop API: Phase 9 (0/1 tasks done)\n")
    return ['[INFO] archive objective differs from current objective (task switch?): '
            'memory/session_archive/2026-01-01T000000Z.md says "Shop API: Phase 9 (0/1 tasks done)", the checkpoint '
            'says "calc (Memento demo): Phase 1: Foundation (1/8 tasks done)"'], 0


def _prompt_without_checkpoint(ws):
    prompt = ws.memento_dir / "prompts" / "T-101.md"
    text = prompt.read_text()
    prompt.write_text(text.split("## docs/CURRENT_STATE.md")[0])
    return ["[WARNING] the worker of T-101 (tick #1) was not given the checkpoint: "
            ".memento/prompts/T-101.md has no docs/CURRENT_STATE.md section"], 1


def _system_prompt_without_rule(ws):
    ws.system_prompt_path.write_text("# Worker\nDo the task.\n")
    commit(ws, "scripts/tick_worker_system_prompt.md")
    return ["[WARNING] scripts/tick_worker_system_prompt.md does not tell the worker to surface the recovered "
            "state of CURRENT_STATE.md first"], 1


def _greeting(ws):
    log = sorted(ws.logs_dir.glob("tick_*.log"))[0]
    text = log.read_text()
    lines = text.splitlines(keepends=True)
    lines.insert(1, "Hello! How can I help you today?\n")
    log.write_text("".join(lines))
    os.utime(ws.checkpoint_path)  # the checkpoint stays the newest file
    return [f"[WARNING] {ws.rel(log)}:2: the worker of T-101 opened with a greeting instead of the recovered "
            "state: Hello! How can I help you today?"], 1


def _misaligned(ws):
    edit(ws.checkpoint_path, "Next tick runs T-102", "Next tick runs T-201")
    line = line_of(ws.checkpoint_path, "## Next Action")
    return [f"[INFO] docs/CURRENT_STATE.md:{line}: Next Action names T-201, but the next task is T-102 "
            "(Add and subtract)"], 0


def _task_error(ws):
    edit(ws.plan_path, "## Phase 3: Polish\n", "## Phase 3: Polish\n- [ ] `T-399` [MODULE:x] No verify here\n"
         "  - context_files: [x.py]\n")
    line = line_of(ws.plan_path, "T-399")
    return [f"[WARNING] docs/MASTER_PLAN.md:{line}: T-399 has no verify command"], 1


def _plan_error(ws):
    text = ws.plan_path.read_text()
    block = text[text.index("- [ ] `T-303`"):text.index("- [ ] `T-304`")]
    edit(ws.plan_path, "- [ ] `T-304`", block + "- [ ] `T-304`")
    first = line_of(ws.plan_path, "`T-303`")
    second = first + block.count("\n")
    return [f"[CRITICAL] docs/MASTER_PLAN.md:{second}: T-303 duplicate task id (first defined on line {first})"], 2


def _meta_key(ws):
    edit(ws.plan_path, "- max_retries: 3\n", "- max_retries: 3\n- colour: blue\n")
    line = line_of(ws.plan_path, "colour")
    return [f"[WARNING] docs/MASTER_PLAN.md:{line}: unknown Meta key `colour` (kept as written; "
            "Memento does not use it)"], 1


def _stale_claim(ws):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    edit(ws.plan_path, "- [ ] `T-102`", "- [~] `T-102`")
    write_claim(ws, Claim(task="T-102", pid=gone.pid, host=this_host(), started="2026-01-01T00:00:00Z",
                          heartbeat=datetime.now(UTC).timestamp(), tick=2, base=None))
    line = line_of(ws.plan_path, "`T-102`")
    return [f"[WARNING] docs/MASTER_PLAN.md:{line}: T-102 is [~] but its worker is gone (worker pid {gone.pid} "
            "is gone); the next tick resets it to [ ]"], 1


def _old_notes(ws):
    old = datetime.now(UTC) - timedelta(days=3)
    add_note(ws.notes_path, "Prefer small functions.", target="global", now=old)
    add_note(ws.notes_path, "Use Shor's algorithm.", target="T-304", now=old)
    add_note(ws.notes_path, "Name the package calc.", target="T-101", now=old)
    stamp = old.strftime("%Y-%m-%dT%H:%M:%S")
    lines = [line_of(ws.notes_path, t) - 1 for t in ("Prefer small", "Shor's", "Name the package")]
    return [
        f"[WARNING] docs/HUMAN_NOTES.md:{lines[0]}: note for global from {stamp} is unread after more than a day "
        "(no worker has taken it)",
        f"[INFO] docs/HUMAN_NOTES.md:{lines[1]}: note for T-304 from {stamp} is unread after more than a day "
        "(T-304 has not run yet)",
        f"[WARNING] docs/HUMAN_NOTES.md:{lines[2]}: note for T-101 from {stamp} is unread after more than a day "
        "(T-101 is done, so no worker will read it)",
    ], 1


def _map_path(ws):
    edit(ws.map_path, "### [MODULE:cli]\n", "### [MODULE:cli]\n- Entry: src/gone.py\n")
    line = line_of(ws.map_path, "src/gone.py")
    return [f"[WARNING] docs/PROJECT_MAP.md:{line}: `src/gone.py` does not exist and no open task will create it"], 1


def _breaker(ws):
    state = TickState.load(ws)
    state.breaker_reason = "5 consecutive ticks attempted work and passed nothing"
    state.breaker_at = "2026-01-01T00:00:00Z"
    state.save(ws)
    return ["[CRITICAL] .memento/state.json: circuit breaker tripped at 2026-01-01T00:00:00Z: 5 consecutive ticks "
            "attempted work and passed nothing; the pipeline is paused — fix the cause, then `memento resume`"], 2


def _alert(ws):
    ws.alert_path.write_text("timestamp: 2026-01-01T00:00:00Z\nblocked_tasks: 1\nblocked: T-304\n"
                             "circuit_breaker: OK\n")
    return ["[WARNING] .memento_alert is present: the pipeline needs attention (blocked: T-304)"], 1


def _dirty(ws):
    (ws.root / "calc" / "__init__.py").write_text("# a person's work in progress\n")
    (ws.root / "scratch.txt").write_text("untracked files do not stop a tick\n")
    return ["[WARNING] uncommitted changes to tracked files: calc/__init__.py; the next tick refuses to run "
            "(commit, stash or remove them)"], 1


def _bad_config(ws):
    (ws.root / "memento.toml").write_text("[agent]\npreset = 3\n")
    commit(ws, "memento.toml")
    return ["[CRITICAL] memento.toml:2: [agent] preset: expected a string, got 3"], 2


def _bad_toml(ws):
    (ws.root / "memento.toml").write_text("[agent\npreset = 'script'\n")
    commit(ws, "memento.toml")
    findings = [f for f in doctor.check_workspace(ws) if f.check == "config"]
    assert findings[0].line == 1
    return [str(findings[0])], 2


def _missing_agent(ws):
    (ws.root / "memento.toml").write_text('[agent]\npreset = "command"\n'
                                          'command = "no-such-agent-binary-4711 {prompt_file}"\n')
    commit(ws, "memento.toml")
    return ["[CRITICAL] memento.toml: agent binary 'no-such-agent-binary-4711' not found on PATH "
            "(preset command): every task would fail"], 2


CASES = {
    "checkpoint missing": _missing,
    "checkpoint older than the last tick": _stale,
    "checkpoint older than the newest log": _stale_log,
    "section missing": _section_missing,
    "placeholder text": _placeholder,
    "objective placeholder": _objective_placeholder,
    "next action none": _next_action_none,
    "unsurfaced results": _unsurfaced,
    "archive differs": _archive,
    "prompt without checkpoint": _prompt_without_checkpoint,
    "system prompt without the rule": _system_prompt_without_rule,
    "worker greets": _greeting,
    "next action names another task": _misaligned,
    "task error": _task_error,
    "plan error": _plan_error,
    "unknown meta key": _meta_key,
    "stale claim": _stale_claim,
    "old unread notes": _old_notes,
    "map path missing": _map_path,
    "breaker tripped": _breaker,
    "alert present": _alert,
    "dirty tree": _dirty,
    "invalid config": _bad_config,
    "invalid toml": _bad_toml,
    "agent binary missing": _missing_agent,
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_check_reports_its_exact_line_and_exit_code(ws, case, capsys):
    expected, code = CASES[case](ws)
    lines, worst = problems(ws)
    assert lines == expected
    assert worst == code
    assert main(["doctor", str(ws.root)]) == code
    printed = capsys.readouterr().out.splitlines()
    assert [ln for ln in printed if not ln.startswith("[OK] ")] == expected


def test_doctor_reads_only(ws):
    _dirty(ws)
    _breaker(ws)
    before = {p: p.read_bytes() for p in ws.root.rglob("*") if p.is_file() and ".git" not in p.parts}
    doctor.check_workspace(ws)
    after = {p: p.read_bytes() for p in ws.root.rglob("*") if p.is_file() and ".git" not in p.parts}
    assert after == before


def test_a_lock_held_by_a_dead_process_is_critical(ws):
    if not Path("/proc/locks").exists():
        pytest.skip("no /proc/locks on this system")
    code = (
        "import os, fcntl, sys\n"
        f"fd = os.open({str(ws.tick_lock_path)!r}, os.O_RDWR | os.O_CREAT)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    null = os.open(os.devnull, os.O_RDWR)\n"
        "    [os.dup2(null, f) for f in (0, 1, 2)]\n"
        "    import time; time.sleep(60); os._exit(0)\n"
        "print(os.getpid(), pid, flush=True)\n"
        "os._exit(0)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    parent, child = (int(x) for x in out.split())
    try:
        lines, worst = problems(ws)
        assert lines == [f"[CRITICAL] .memento/tick.lock is held by process {parent}, which is gone: a surviving "
                         "child inherited the lock and every tick is skipped until it exits "
                         "(find it with `fuser .memento/tick.lock`)"]
        assert worst == 2
    finally:
        os.kill(child, 9)


def test_a_running_tick_is_info(ws):
    if not Path("/proc/locks").exists():
        pytest.skip("no /proc/locks on this system")
    with file_lock(ws.tick_lock_path, blocking=False):
        lines, worst = problems(ws)
    assert lines == [f"[INFO] a tick is running now (pid {os.getpid()} holds .memento/tick.lock)"]
    assert worst == 0


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
