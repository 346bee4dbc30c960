"""A CLI's event stream made readable as it arrives (SPEC §20): agents/stream.py and the renderers.

The events are the shapes the CLIs print (claude's stream-json, codex's
``exec --json`` items, gemini's stream-json); the bad input is what a pipe
really delivers: a line split across reads, a line that is not JSON, a
truncated object, 10 MB on one line, a stream cut off mid-line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from memento_core.agents import logpipe
from memento_core.agents.presets import claude, codex, gemini
from memento_core.agents.stream import MAX_LINE, TEXT_CAP, StreamLog

AGENT = Path(__file__).resolve().parents[2] / "agents" / "reports_like_a_cli.py"


def ev(obj: dict) -> bytes:
    return (json.dumps(obj, separators=(",", ":")) + "\n").encode()


def assistant(block: dict, parent: str | None = None) -> bytes:
    return ev({"type": "assistant", "message": {"role": "assistant", "content": [block]},
               "parent_tool_use_id": parent})


def run(spec, data: bytes, chunk: int | None = None, root: str | None = None) -> str:
    log = StreamLog(spec.stream(), spec.stream_wanted, root)
    step = chunk or len(data) or 1
    out = b"".join(log.feed(data[i:i + step]) for i in range(0, len(data), step)) + log.end()
    return out.decode("utf-8", "replace")


CLAUDE = (
    ev({"type": "system", "subtype": "init", "cwd": "/p", "tools": ["Bash"]})
    + assistant({"type": "text", "text": "I will run the tests."})
    + assistant({"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "pytest -q"}})
    + ev({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t1",
                                                   "content": "1 passed"}]}})
    + assistant({"type": "tool_use", "id": "t2", "name": "Edit",
                 "input": {"file_path": "/p/src/x.py", "old_string": "a", "new_string": "b"}})
    + assistant({"type": "tool_use", "id": "t3", "name": "Task", "input": {"description": "Review it"}})
    + assistant({"type": "tool_use", "id": "t4", "name": "Grep", "input": {"pattern": "def main"}}, "t3")
    + assistant({"type": "tool_use", "id": "t5", "name": "Task", "input": {"description": "Deeper"}}, "t3")
    + assistant({"type": "tool_use", "id": "t6", "name": "Read", "input": {"file_path": "/p/a.py"}}, "t5")
    + ev({"type": "result", "subtype": "success", "is_error": False, "result": "Done.",
          "total_cost_usd": 0.01, "usage": {"input_tokens": 5, "output_tokens": 7},
          "permission_denials": [{"tool_name": "Bash", "tool_use_id": "t7",
                                  "tool_input": {"command": "rm -rf build"}}]})
)
CLAUDE_LINES = [
    "[tool] Bash: pytest -q",
    "[tool] Edit: src/x.py",
    "[tool] Task: Review it",
    "  [tool] Grep: def main",
    "  [tool] Task: Deeper",
    "    [tool] Read: a.py",
    "[denied] Bash: rm -rf build",
]


def test_claude_tool_calls_become_one_line_each_sub_agents_indented():
    assert run(claude.SPEC, CLAUDE, root="/p").splitlines() == CLAUDE_LINES


def test_lines_split_across_reads_come_out_the_same():
    """A pipe hands over whatever is there: an event split anywhere, even inside a UTF-8 character."""
    data = CLAUDE + assistant({"type": "tool_use", "id": "t9", "name": "Bash", "input": {"command": "echo é✓"}})
    whole = run(claude.SPEC, data, root="/p")
    for chunk in (1, 2, 7, 64, 4096):
        assert run(claude.SPEC, data, chunk=chunk, root="/p") == whole
    assert whole.splitlines()[-1] == "[tool] Bash: echo é✓"


def test_each_line_is_written_when_its_newline_arrives_not_later():
    log = StreamLog(claude.SPEC.stream(), claude.SPEC.stream_wanted)
    line = assistant({"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "make"}})
    assert log.feed(line[:-1]) == b""  # no newline yet: nothing to write
    assert log.feed(line[-1:]) == b"[tool] Bash: make\n"


def test_bad_input_is_text_never_a_crash():
    data = (b"node: (warning) not JSON at all\n"
            + b'{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Ba\n'  # truncated
            + b"[1, 2, 3]\n"  # JSON, not an object
            + b'{"type":"assistant","message":"a string"}\n'  # an object of a shape not expected
            + b'{"type":"assistant","message":{"content":[{"type":"tool_use"}]}}\n'  # no name
            + b"\xff\xfe binary junk\n"
            + b'{"type":"weird"}\n'
            + assistant({"type": "tool_use", "id": "t", "name": "Bash", "input": {"command": "ok"}})
            + b'{"type":"assistant","message":{"content":[{"type":"tool_')  # cut off mid-line
    out = run(claude.SPEC, data).encode().decode("utf-8", "replace").splitlines()
    assert out == [
        "node: (warning) not JSON at all",
        '{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Ba',
        "[1, 2, 3]",
        "[tool] ?",
        "\ufffd\ufffd binary junk",  # the bytes as printed (decoded for this comparison)
        "[tool] Bash: ok",
        '{"type":"assistant","message":{"content":[{"type":"tool_',
    ]


def test_a_10_mb_tool_output_is_never_shown_and_10_mb_of_text_is_capped():
    big = "x" * (10 * 1024 * 1024)
    result = ev({"type": "user", "message": {"content": [{"type": "tool_result", "content": big}]}})
    text = ("y" * (10 * 1024 * 1024) + "\n").encode()
    data = result + text + assistant({"type": "tool_use", "id": "t", "name": "Bash", "input": {"command": "ls"}})
    out = run(claude.SPEC, data, chunk=1 << 20)
    lines = out.splitlines()
    assert len(out) < 3 * TEXT_CAP
    assert lines[0].startswith("y" * TEXT_CAP) and lines[0].endswith(
        f"[memento: {10 * 1024 * 1024 - TEXT_CAP} bytes of this line cut]")
    assert lines[1] == "[tool] Bash: ls"


def test_a_line_over_the_longest_kept_is_cut_without_holding_it(monkeypatch):
    from memento_core.agents import stream

    monkeypatch.setattr(stream, "MAX_LINE", 1000)
    log = StreamLog(claude.SPEC.stream(), claude.SPEC.stream_wanted)
    out = b"".join(log.feed(b'{"type":"assistant",' + b"z" * 500) for _ in range(20))
    assert out == b"" and len(log._partial) <= 1000
    out = log.feed(b"\n").decode()
    assert out.startswith('{"type":"assistant",') and "bytes of this line cut]" in out
    assert MAX_LINE >= 10 * 1024 * 1024  # a 10 MB event is still read whole


def test_codex_items_are_shown_once_when_they_start():
    item = {"id": "i1", "type": "command_execution", "command": "bash -lc 'pytest -q'",
            "aggregated_output": "", "exit_code": None, "status": "in_progress"}
    data = (ev({"type": "thread.started", "thread_id": "x"}) + ev({"type": "turn.started"})
            + ev({"type": "item.started", "item": item})
            + ev({"type": "item.completed", "item": dict(item, status="completed", exit_code=0)})
            + ev({"type": "item.completed", "item": {"id": "i2", "type": "file_change", "status": "completed",
                                                     "changes": [{"path": "/p/src/x.py", "kind": "update"},
                                                                 {"path": "/p/new.py", "kind": "add"}]}})
            + ev({"type": "item.started", "item": {"id": "i3", "type": "mcp_tool_call", "server": "docs",
                                                   "tool": "search", "arguments": {"query": "bwrap"},
                                                   "status": "in_progress"}})
            + ev({"type": "item.completed", "item": {"id": "i4", "type": "agent_message", "text": "Done."}})
            + ev({"type": "item.completed", "item": {"id": "i5", "type": "reasoning", "text": "hmm"}})
            + ev({"type": "turn.completed", "usage": {"input_tokens": 10, "cached_input_tokens": 0,
                                                      "output_tokens": 2}})
            + ev({"type": "error", "message": "stream disconnected"}))
    assert run(codex.SPEC, data, root="/p").splitlines() == [
        "[tool] shell: bash -lc 'pytest -q'",
        "[tool] Edit: src/x.py",
        "[tool] Write: new.py",
        "[tool] docs.search: bwrap",
        "[error] stream disconnected",
    ]


def test_gemini_tool_use_events_and_its_stream_result():
    data = (ev({"type": "init", "session_id": "s", "model": "gemini-2.5-pro"})
            + ev({"type": "message", "role": "user", "content": "Do it"})
            + ev({"type": "tool_use", "tool_name": "run_shell_command", "tool_id": "c1",
                  "parameters": {"command": "pytest -q", "description": "Run the tests"}})
            + ev({"type": "tool_result", "tool_id": "c1", "status": "error", "output": "",
                  "error": {"type": "x", "message": "boom"}})
            + ev({"type": "tool_use", "tool_name": "write_file", "tool_id": "c2",
                  "parameters": {"file_path": "/p/hello.txt", "content": "hi"}})
            + ev({"type": "message", "role": "assistant", "content": "I wrote ", "delta": True})
            + ev({"type": "message", "role": "assistant", "content": "hello.txt.", "delta": True})
            + ev({"type": "result", "status": "success",
                  "stats": {"total_tokens": 1290, "input_tokens": 1234, "output_tokens": 56, "cached": 0,
                            "input": 1234, "duration_ms": 10, "tool_calls": 2, "models": {}}}))
    assert run(gemini.SPEC, data, root="/p").splitlines() == [
        "[tool] run_shell_command: pytest -q", "[tool] write_file: hello.txt"]
    text = data.decode()
    assert gemini.parse_usage(text).tokens_in == 1234 and gemini.parse_usage(text).tokens_out == 56
    assert gemini.readable(text) == "I wrote hello.txt."


def test_gemini_stream_error_result_is_its_last_words():
    data = ev({"type": "result", "status": "error",
               "error": {"type": "TerminalQuotaError", "message": "Quota exceeded for quota metric"},
               "stats": {"input_tokens": 0, "output_tokens": 0}}).decode()
    limit = gemini.rate_limit(data)
    assert limit is not None and "Quota exceeded" in limit.message


def test_claude_windows_from_its_rate_limit_events():
    reset = 1_900_000_000
    data = (ev({"type": "rate_limit_event", "rate_limit_info": {
                "status": "allowed", "unifiedWindows": {"five_hour": {"utilization": 0.5, "resetsAt": reset}}}})
            + ev({"type": "rate_limit_event", "rate_limit_info": {
                "status": "allowed_warning", "unifiedWindows": {
                    "five_hour": {"utilization": 0.96, "resetsAt": reset},
                    "seven_day": {"utilization": 0.31, "resetsAt": reset + 86400}}}})
            + ev({"type": "result", "result": "ok", "usage": {}})).decode()
    found = {w.name: (round(w.percent), int(w.resets_at.timestamp()), w.label) for w in claude.windows(data)}
    assert found == {"five_hour": (96, reset, "5-hour"), "seven_day": (31, reset + 86400, "7-day")}
    # an older shape: no unifiedWindows, the one window that changed at the top
    old = ev({"type": "rate_limit_event", "rate_limit_info": {
        "status": "allowed_warning", "rateLimitType": "seven_day", "utilization": 0.9, "resetsAt": reset}}).decode()
    assert [(w.name, round(w.percent)) for w in claude.windows(old)] == [("seven_day", 90)]
    assert claude.windows('{"type":"rate_limit_event","rate_limit_info":{"status":"allowed"}}\n') == []


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
