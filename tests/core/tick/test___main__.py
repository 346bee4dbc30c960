"""tick/__main__.py (step 1): `python -m memento_core.tick` as cron runs it. The lock taken
without waiting (a busy lock skips, exit 0), a paused plan answered before anything else runs,
a folder where Memento's belongs moved aside, what is printed and with which tag, and the command
lines cron and people write read without argparse. Real subprocesses, a real flock."""

from __future__ import annotations

import subprocess
import sys

import pytest

from memento_core.runlog import Outcome, TaskResult
from memento_core.tick.__main__ import _plain_project, outcome_tag, run_locked
from tests.core.scenarios.test_engine import make_ws


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


def _tick(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memento_core.tick", *args], capture_output=True, text=True,
                          timeout=120)


def test_a_paused_plan_is_answered_with_exit_0_and_one_line(tmp_path):
    ws = make_ws(tmp_path, "true")
    ws.plan_path.write_text(ws.plan_path.read_text().replace("tick_mode: auto", "tick_mode: paused"))
    ws.config_path.write_text("[agent]\npreset = 3\n")  # never read on the paused path (no [chat], no remote)
    done = _tick("--project", str(ws.root))
    assert (done.returncode, done.stdout, done.stderr) == (0, "[ok] tick skipped: tick_mode is paused\n", "")
    assert ws.cron_log.read_text().count("tick skipped: tick_mode is paused") == 1


def test_a_busy_lock_skips_the_tick_and_an_odd_folder_is_moved_first(tmp_path):
    ws = make_ws(tmp_path, "true")
    ws.tick_lock_path.parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, sys, time; fh = open(sys.argv[1], 'a'); "
                               "fcntl.flock(fh, fcntl.LOCK_EX); print(1, flush=True); time.sleep(60)",
                               str(ws.tick_lock_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "1\n"
        outcome = run_locked(ws)
        assert (outcome.exit_code, outcome.message) == (0, "tick skipped: previous tick still running")
    finally:
        holder.kill()
        holder.wait(timeout=10)
        holder.stdout.close()
    (ws.root / "logs").rename(ws.root / "logs-was")
    (ws.root / "logs").write_text("a file where Memento's logs/ belongs\n")
    ws.plan_path.write_text(ws.plan_path.read_text().replace("tick_mode: auto", "tick_mode: paused"))
    assert run_locked(ws).message == "tick skipped: tick_mode is paused"
    assert (ws.root / "logs").is_dir() and "moved aside what stood where Memento's folders belong" in \
        ws.cron_log.read_text()


def test_a_folder_without_a_workspace_is_an_error_on_stderr_with_exit_2(tmp_path):
    done = _tick("--project", str(tmp_path))
    assert done.returncode == 2 and done.stdout == "" and done.stderr.startswith("[error] ")


def test_the_usual_command_lines_are_read_without_argparse_and_the_tag_says_how_it_went():
    assert _plain_project(["--project", "/p"]) == "/p" and _plain_project(["/p"]) == "/p"
    assert _plain_project([]) == "" and _plain_project(["--project=/p"]) is None
    assert _plain_project(["-x"]) is None and _plain_project(["--project", "-p"]) is None
    assert outcome_tag(Outcome(2, "x")) == "[error]" and outcome_tag(Outcome(1, "x")) == "[warn]"
    assert outcome_tag(Outcome(0, "x", results=[TaskResult("T-1", False, "failed")])) == "[warn]"
    assert outcome_tag(Outcome(0, "x", results=[TaskResult("T-1", True)])) == "[ok]"


# exit_now, as the last thing cron's tick process does: what a normal exit does that matters
# (the exit functions, the flushed output, a thread's end) is done; the interpreter's teardown is not.
_EXIT = """
import atexit, os, sys, threading, time
from memento_core.tick.__main__ import exit_now
out = sys.argv[1]
atexit.register(lambda: open(os.path.join(out, "atexit"), "w").close())

class Teardown:
    def __del__(self, open=open, path=os.path.join(out, "teardown")):  # builtins may be gone by then
        open(path, "w").close()

kept_until_teardown = Teardown()
if sys.argv[2] == "thread":
    def late():
        time.sleep(0.3)
        open(os.path.join(out, "thread"), "w").close()
    threading.Thread(target=late).start()
if sys.argv[2] == "daemon":
    threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
sys.stdout.write("said, not yet flushed")
sys.stderr.write("warned, not yet flushed")  # line-buffered: held until a newline or a flush
exit_now(3)
"""


def _exit_now(tmp_path, mode: str, **kw) -> subprocess.CompletedProcess:
    import os

    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # stdout buffered, as cron's is
    return subprocess.run([sys.executable, "-c", _EXIT, str(tmp_path), mode], text=True, timeout=60, env=env, **kw)


@pytest.mark.parametrize("mode", ["alone", "daemon"])
def test_exit_now_runs_the_exit_functions_flushes_and_skips_the_teardown(tmp_path, mode):
    done = _exit_now(tmp_path, mode, capture_output=True)
    assert (done.returncode, done.stdout, done.stderr) == (3, "said, not yet flushed", "warned, not yet flushed")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["atexit"]  # no object freed one by one


def test_exit_now_waits_for_a_thread_that_still_runs_as_a_normal_exit_does(tmp_path):
    done = _exit_now(tmp_path, "thread", capture_output=True)
    assert (done.returncode, done.stdout, done.stderr) == (3, "said, not yet flushed", "warned, not yet flushed")
    assert {"atexit", "thread"} <= {p.name for p in tmp_path.iterdir()}


def test_exit_now_with_nowhere_to_write_exits_as_python_does_120(tmp_path):
    import os

    read, write = os.pipe()
    os.close(read)  # cron's pipe closed: the flush fails (EPIPE)
    try:
        done = _exit_now(tmp_path, "alone", stdout=write, stderr=subprocess.PIPE)
    finally:
        os.close(write)
    assert done.returncode == 120
    assert "BrokenPipeError" in done.stderr
    assert (tmp_path / "atexit").exists()


def test_crons_tick_process_collects_cyclic_garbage_seldom_and_still_collects(tmp_path):
    """The threshold is cron's process's own (python -m), never the dashboard's or a test's; a
    cycle made past it is still collected."""
    code = ("import atexit, gc, runpy, sys\n"
            "atexit.register(lambda: print(gc.get_threshold()[0], gc.isenabled(), file=sys.stderr))\n"
            f"sys.argv = ['memento_core.tick', '--project', {str(tmp_path)!r}]\n"
            "runpy.run_module('memento_core.tick', run_name='__main__', alter_sys=True)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stderr.splitlines()[-1] == "20000 True"
    here = subprocess.run([sys.executable, "-c", "import gc, memento_core.tick.__main__; print(gc.get_threshold()[0])"],
                          capture_output=True, text=True, check=True, timeout=60)
    plain = subprocess.run([sys.executable, "-c", "import gc; print(gc.get_threshold()[0])"],
                           capture_output=True, text=True, check=True, timeout=60)
    assert here.stdout == plain.stdout  # imported, as the dashboard does: Python's own
    seldom = ("import gc, weakref\n"
              "from memento_core.tick.__main__ import collect_seldom\n"
              "gc.set_threshold(500, 10, 10)\n"
              "collect_seldom(young=2000)\n"
              "class C: pass\n"
              "a = C(); a.me = a; gone = weakref.ref(a); del a\n"
              "keep = [[] for _ in range(1500)]\n"
              "print(gone() is not None, gc.get_threshold())\n"
              "keep += [[] for _ in range(1000)]\n"
              "print(gone() is None)\n"
              "collect_seldom(young=100)\n"
              "print(gc.get_threshold())\n")
    got = subprocess.run([sys.executable, "-c", seldom], capture_output=True, text=True, check=True, timeout=60)
    assert got.stdout.splitlines() == ["True (2000, 10, 10)", "True", "(2000, 10, 10)"]
