"""No orphan after kill -9 (SPEC §13): nothing of a killed tick's attempt writes on.

The hostile agent (tests/agents/leaves_orphans.py) keeps three writers going in
the work tree: itself, a child in its group, and a double-forked ``setsid`` child
exec'd through ``env -i`` (no marker, no group, no session of the run's). The
tick is killed with SIGKILL, from cron or while it runs the agent from a thread
as the dashboard does. The run's guard ends all three at once (agents/guard.py);
when the agent stopped its guard, the next tick does, before its recovery starts
(tick/orphans.py). Judged in /proc and on disk: no writer alive and the work
tree still once the next tick reaches its recovery (it is killed right there,
crash point ``tick:recovering``), nothing back after the recovery rolled the
tree back; a person's own processes in the project, started before the tick and
after it died, are never touched.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memento_core.agents import process
from memento_core.plan.scan import parse_plan
from tests.core.modes import needs_bwrap
from tests.core.sandbox.test_sandbox import marked_processes
from tests.core.scenarios.test_engine import _alive, _wait_for, agent, entries, git, make_ws

PY = sys.executable
WRITERS = ("agent", "group", "escaped")
FILES = ("agent.txt", "group.txt", "escaped.txt")
DAEMON = """import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        open(sys.argv[1], "w").write(str(os.getpid()))
        while True:
            time.sleep(1)
    os._exit(0)
os.wait()
"""


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


def tick_env(crash_at: str = "") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "MEMENTO_CRASH_AT"}
    if crash_at:
        env["MEMENTO_CRASH_AT"] = crash_at
    return env


def next_tick(root: Path, crash_at: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "memento_core.tick", "--project", str(root)], env=tick_env(crash_at),
                          capture_output=True, text=True, timeout=120)


IN_A_THREAD = """import sys, threading
from memento_core.tick.__main__ import run_tick
runner = threading.Thread(target=run_tick, args=(sys.argv[1],), daemon=True)  # as the dashboard runs it
runner.start()
runner.join()
"""


def start_tick(root: Path, how: str) -> subprocess.Popen:
    argv = [PY, "-c", IN_A_THREAD, str(root)] if how == "thread" else [PY, "-m", "memento_core.tick",
                                                                        "--project", str(root)]
    return subprocess.Popen(argv, env=tick_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def seen(life: Path) -> set[str]:
    try:
        return {line.split()[0] for line in life.read_text().splitlines() if line.strip()}
    except OSError:
        return set()


def writers(life: Path) -> list[int]:
    """The agent, its writers and its guard still alive (their command lines name LIFE), as the
    host sees them."""
    return marked_processes(str(life))


def in_the_tree(root: Path, spare: set[int]) -> list[int]:
    """Live processes, but ``spare`` and this one, whose working folder is in the work tree."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) in spare or int(entry.name) == os.getpid():
            continue
        try:
            cwd = os.readlink(f"/proc/{entry.name}/cwd")
            state = Path(f"/proc/{entry.name}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if state not in (b"Z", b"X") and (cwd == str(root) or cwd.startswith(f"{root}/")):
            found.append(int(entry.name))
    return found


def on_disk(root: Path) -> dict[str, tuple[int, int] | None]:
    out = {}
    for name in (*FILES, "hello.txt"):
        try:
            st = (root / name).stat()
            out[name] = (st.st_size, st.st_mtime_ns)
        except FileNotFoundError:
            out[name] = None
    return out


def persons_processes(root: Path, tmp_path: Path, when: str) -> list[int]:
    """A person's own processes in the project: an editor holding other.txt open (their own session,
    started before the tick), or a daemonized shell (double fork, ``setsid``, re-parented to init,
    started after the tick died): neither is the agent's."""
    if when == "before":
        editor = subprocess.Popen([PY, "-c", "import time; f = open('other.txt'); time.sleep(600)"], cwd=root,
                                  start_new_session=True)
        return [editor.pid]
    pidfile = tmp_path / "persons-daemon.pid"
    subprocess.run([PY, "-c", DAEMON, str(pidfile)], cwd=root, check=True, timeout=30)
    _wait_for(lambda: pidfile.exists() and pidfile.read_text().strip(), 10)
    return [int(pidfile.read_text())]


def _kill_all(pids) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def killed_mid_task(tmp_path: Path, sandbox: str, *, stop_guard: bool = False, how: str = "cron",
                    persons: list[int] | None = None):
    """A workspace whose tick was killed with SIGKILL while leaves_orphans.py wrote; its LIFE file.
    ``persons``: a person's editor is started in the project before the tick (its pid added)."""
    outside = tmp_path / "outside"  # where the writers say they live: bound writable in the sandbox
    outside.mkdir()
    life = outside / "life"
    ws = make_ws(tmp_path, agent("leaves_orphans.py", str(life), *(["stop-guard"] if stop_guard else [])),
                 sandbox=sandbox)
    with open(ws.config_path, "a", encoding="utf-8") as fh:
        fh.write(f'writable = ["{outside}"]\n')
    git(ws.root, "commit", "-qam", "the writers' log is writable")
    if persons is not None:
        persons += persons_processes(ws.root, tmp_path, "before")
    tick = start_tick(ws.root, how)
    try:
        # agent.txt: the agent is past its last step (stopping its guard, with stop-guard).
        _wait_for(lambda: seen(life) >= set(WRITERS) and (ws.root / "agent.txt").exists(), 60)
        os.kill(tick.pid, signal.SIGKILL)
        tick.wait(timeout=30)
    finally:
        if tick.poll() is None:
            tick.kill()
            tick.wait()
    return ws, life


def recovered_without_them(ws, life: Path, spare: set[int]) -> None:
    """The next tick, killed the instant its recovery starts: nothing of the attempt runs by then
    and the tree stays still; then a whole tick rolls the attempt back and nothing comes back."""
    crashed = next_tick(ws.root, crash_at="tick:recovering")
    assert crashed.returncode == -signal.SIGKILL, (crashed.stdout, crashed.stderr)
    assert writers(life) == [] and in_the_tree(ws.root, spare) == []
    still = on_disk(ws.root)
    time.sleep(0.3)  # six writes' time
    assert on_disk(ws.root) == still
    recovered = next_tick(ws.root)
    assert recovered.returncode in (0, 1) and "Traceback" not in recovered.stderr, recovered.stderr
    assert [e.status for e in entries(ws)][:1] == ["STALE"]
    assert all(not (ws.root / name).exists() for name in FILES)  # rolled back, and none written again
    assert not (ws.root / "hello.txt").exists()  # the agent's, untracked before it: gone with it
    assert writers(life) == [] and in_the_tree(ws.root, spare) == []


@pytest.mark.parametrize("sandbox", [pytest.param("none", id="unconfined"),
                                     pytest.param("bwrap", id="bwrap", marks=needs_bwrap)])
def test_the_guard_ends_every_writer_when_the_tick_is_killed(tmp_path, sandbox):
    life = tmp_path / "outside" / "life"
    try:
        ws, life = killed_mid_task(tmp_path, sandbox)
        # No next tick needed: the run's guard ends them all within moments of its tick's death.
        _wait_for(lambda: writers(life) == [], 10)
        assert seen(life) == set(WRITERS)
        recovered_without_them(ws, life, set())
    finally:
        _kill_all(writers(life))


def test_a_stopped_guard_leaves_them_to_the_next_tick_which_spares_a_persons_processes(tmp_path):
    root = tmp_path / "proj"
    life = tmp_path / "outside" / "life"
    spare: list[int] = []
    try:
        ws, life = killed_mid_task(tmp_path, "none", stop_guard=True, persons=spare)
        spare += persons_processes(root, tmp_path, "after")
        size = life.stat().st_size
        time.sleep(0.3)
        assert life.stat().st_size > size  # the stopped guard did nothing: they still write
        recovered_without_them(ws, life, set(spare))
        assert all(_alive(pid) for pid in spare)
    finally:
        _kill_all(writers(life) + spare)


def test_a_paused_plan_still_ends_them(tmp_path):
    """The tick that only says "paused" ends a killed tick's processes too: they do not write on
    until someone resumes the plan."""
    life = tmp_path / "outside" / "life"
    try:
        ws, life = killed_mid_task(tmp_path, "none", stop_guard=True)
        ws.plan_path.write_text(ws.plan_path.read_text().replace("tick_mode: auto", "tick_mode: paused"))
        paused = next_tick(ws.root)
        assert "tick skipped: tick_mode is paused" in paused.stdout, (paused.stdout, paused.stderr)
        assert writers(life) == []
        assert "a killed tick had left running" in ws.cron_log.read_text()
        assert parse_plan(ws.plan_path).task("T-1").status == "~"  # the recovery waits for the resume
    finally:
        _kill_all(writers(life))


def test_a_tick_run_in_a_thread_like_the_dashboards_takes_its_run_along(tmp_path):
    life = tmp_path / "outside" / "life"
    try:
        ws, life = killed_mid_task(tmp_path, "none", how="thread")
        _wait_for(lambda: writers(life) == [], 10)
        assert parse_plan(ws.plan_path).task("T-1").status == "~"
    finally:
        _kill_all(writers(life))


def test_a_run_outlives_the_thread_that_started_it(tmp_path):
    """The parent-death signal comes when the *thread* that started the guard ends: the guard
    checks that its tick is really gone before it believes it (the tick is still its parent, its
    end of the lifeline open), so a run started from a worker thread that ends goes on."""
    box: dict = {}
    command = process._Command(("/bin/sh", "-c", "sleep 1; echo done > out.txt"), "/bin/sh", None)

    def start() -> None:  # as run_in_group does, up to the guard's word that the command started
        box["run"] = process._spawn(command, cwd=tmp_path, log_path=tmp_path / "log", stdin_path=None,
                                    env=dict(os.environ))
        box["run"][2].hello(command, box["run"][0])

    starter = threading.Thread(target=start)
    starter.start()
    starter.join()
    proc, pipe, line = box["run"]
    try:
        assert proc.wait(timeout=30) == 0
        assert (tmp_path / "out.txt").read_text() == "done\n"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        line.close()
        pipe.finish()
