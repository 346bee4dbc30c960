"""agents/logpipe.py: a command's output copied from its pipe to the log as readable lines while it
runs, the raw stream captured for the parsers, and the budget watch's tap of usage lines."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

from memento_core.agents import logpipe
from memento_core.agents.presets import claude, codex
from memento_core.agents.stream import StreamLog
from tests.core.agents.outputs import CLAUDE, CLAUDE_LINES, assistant, ev


def test_the_log_pipe_writes_readable_lines_and_captures_the_raw_stream(tmp_path):
    """Through a real pipe and its copying thread: the log gets the lines, the capture the events."""
    log_path = tmp_path / "tick.log"
    script = ("import sys,time\n"
              f"data = {CLAUDE!r}\n"
              "sys.stdout.buffer.write(data[:150]); sys.stdout.flush(); time.sleep(0.3)\n"
              "sys.stdout.buffer.write(data[150:]); sys.stdout.buffer.write(b'half a line')\n")
    from memento_core.agents.process import run_in_group

    with logpipe.capture(log_path) as printed:
        result = run_in_group([sys.executable, "-c", script], cwd=tmp_path, log_path=log_path, timeout=30,
                              env=dict(os.environ),
                              stream=StreamLog(claude.SPEC.stream(), claude.SPEC.stream_wanted, "/p"))
    assert result.exit_code == 0
    assert log_path.read_text().splitlines() == [*CLAUDE_LINES, "half a line"]
    assert printed.text() == CLAUDE.decode() + "half a line"  # the parsers still read the events


def test_a_tool_line_reaches_the_log_while_the_cli_still_runs(tmp_path):
    """The CLI prints a tool call and keeps working: the line is in the log within a second."""
    log_path = tmp_path / "tick.log"
    go = tmp_path / "go"
    line = assistant({"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "pytest -q"}})
    script = ("import sys,time,os\n"
              f"sys.stdout.buffer.write({line!r}); sys.stdout.flush()\n"
              f"while not os.path.exists({str(go)!r}): time.sleep(0.02)\n")
    from memento_core.agents.process import run_in_group

    seen: dict[str, float] = {}

    def watch():
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if log_path.exists() and "[tool] Bash: pytest -q" in log_path.read_text():
                seen["alive"] = subprocess.run(["pgrep", "-f", str(go)], capture_output=True).returncode == 0
                break
            time.sleep(0.02)
        go.touch()

    watcher = threading.Thread(target=watch)
    watcher.start()
    result = run_in_group([sys.executable, "-c", script], cwd=tmp_path, log_path=log_path, timeout=60,
                          env=dict(os.environ), stream=StreamLog(claude.SPEC.stream(), claude.SPEC.stream_wanted))
    watcher.join()
    assert result.exit_code == 0
    assert seen == {"alive": True}  # the line was there while the CLI was still running


def test_the_budget_watch_tap_picks_usage_lines_across_reads_and_holds_no_flood():
    tap = logpipe.LineTap(b"turn.completed")
    done = ev({"type": "turn.completed", "usage": {"input_tokens": 7, "cached_input_tokens": 0, "output_tokens": 1}})
    data = ev({"type": "turn.started"}) + done + b"x" * (3 << 20) + b"\n" + done
    for i in range(0, len(data), 1000):  # the usage line split across reads
        tap.add(data[i:i + 1000])
    assert tap.picked == 2 and tap.text() == (done[:-1] + b"\n" + done[:-1]).decode()
    assert len(tap._partial) <= logpipe.TAP_LINE  # the 3 MB line was never held whole
    assert codex.parse_usage(tap.text()).tokens == 16
