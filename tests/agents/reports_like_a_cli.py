#!/usr/bin/env python3
"""Fake agent: prints what a real coding CLI prints, for the tick's usage and rate-limit parsing.

usage: reports_like_a_cli.py KIND [COST] [COUNTER] [wait]

KIND:
  claude-done      writes $MEMENTO_TASK_ID.txt ("done") and prints claude's --output-format json
                   result with total_cost_usd COST (default 0.042); exit 0
  claude-limit     scribbles over $MEMENTO_TASK_ID.txt and adds junk.txt (work a rollback must undo;
                   with COST "hides", also sub/hidden.txt behind a new sub/.gitignore naming it;
                   with COST "nests:MARKER", a repository nested/ whose core.fsmonitor writes MARKER),
                   then prints claude's usage-limit result "You've hit your limit · resets
                   <the next whole hour + 2h> (UTC)"; exit 1
  http-429         the same scribbles, then "API Error: 429 … rate_limit_error" on stderr; exit 1
  aider-spends     writes $MEMENTO_TASK_ID.txt ("done"), prints three of aider's "Tokens: … Cost:
                   $COST message, $<n*COST> session." lines, then hangs (120 s)
  codex-limit      codex exec --json events ending in "You've hit your usage limit … try
                   again in 2 hours 5 minutes."; exit 1
  claude-limit-0   the same scribbles, then claude's answer at its usage limit, in the wording COST
                   names ("old": "Claude usage limit reached. Your limit will reset at <h>";
                   "new": "You've hit your limit · resets <h>", h = the next whole hour + 2h, UTC),
                   and exit 0, as Claude Code does
  aider-gives-up   the same scribbles, then aider's last words after its retries of a 429 ("The
                   API provider has rate limited you."); exit 0, as aider 0.86 does
  mentions-429     does the task (writes $MEMENTO_TASK_ID.txt "done"), then prints, last, a line
                   about an HTTP 429 its code handles; exit 0
  mentions-429-early  the same, the 429 line followed by ten lines of other output
  claude-stream    writes $MEMENTO_TASK_ID.txt ("done") as claude's stream-json tells it: a Bash call,
                   its result, a Task call whose sub-agent makes a Read call, a rate_limit_event
                   whose 5-hour window is COST used (a fraction; its seven_day 0.2), the result
                   (12.3k in incl. cache / 2.1k out tokens, $0.042); exit 0. After the Bash call's
                   line, when the file COUNTER with suffix .hold exists, it waits (up to 20 s) for the file COUNTER
                   with suffix .go (the test saw the line); without .hold it goes straight on
  claude-stream-bad  the same work, its stream broken: a line that is not JSON, a truncated
                   object, a 10 MB tool output on one line, an event of an unknown type, then the
                   result, and last half an event with no newline (cut off mid-line); exit 0
  codex-done       writes $MEMENTO_TASK_ID.txt ("done") as codex exec --json tells it: a command,
                   a file change, two turns of COST tokens each (in; 10 % of it out); exit 0. With a
                   4th argument ("wait"), it sleeps 20 s after the first turn
COUNTER, when given, is a file that gets one line per run (to tell whether a tick ran it).
"""

import json
import os
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

kind = sys.argv[1]
target = Path(os.environ.get("MEMENTO_TASK_ID", "hello") + ".txt")
arg = sys.argv[2] if len(sys.argv) > 2 else "0.042"
cost = float(arg) if arg.replace(".", "", 1).isdigit() else 0.042
if len(sys.argv) > 3:
    with open(sys.argv[3], "a", encoding="utf-8") as fh:
        fh.write(kind + "\n")


def scribble():
    target.write_text("half-done by a refused agent\n", encoding="utf-8")
    Path("junk.txt").write_text("left by a refused agent\n", encoding="utf-8")
    if arg == "hides":  # git no longer sees it: only a rollback that looks again after the .gitignore finds it
        Path("sub").mkdir(exist_ok=True)
        Path("sub/.gitignore").write_text("hidden.txt\n", encoding="utf-8")
        Path("sub/hidden.txt").write_text("hidden by a refused agent\n", encoding="utf-8")
    if arg.startswith("nests:"):  # a repository of its own whose fsmonitor writes MARKER (outside the project)
        import subprocess

        marker = arg.split(":", 1)[1]
        subprocess.run(["git", "init", "-q", "nested"], check=True)
        hook = f"echo ran >> {marker}"
        subprocess.run(["git", "-C", "nested", "config", "core.fsmonitor", hook], check=True)
        Path("nested/file.txt").write_text("the agent's\n", encoding="utf-8")


def result(text, *, error, tokens=(0, 0), cost_usd=0.0):
    return {"type": "result", "subtype": "success", "is_error": error, "duration_ms": 812, "num_turns": 2,
            "result": text, "session_id": "fake", "total_cost_usd": cost_usd,
            "usage": {"input_tokens": tokens[0], "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 0, "output_tokens": tokens[1]}}


if kind == "claude-done":
    target.write_text("done\n", encoding="utf-8")
    print(json.dumps(result("Wrote hello.txt.", error=False, tokens=(12300, 2100), cost_usd=cost)))
elif kind == "claude-limit":
    scribble()
    reset = (datetime.now(UTC) + timedelta(hours=2)).replace(minute=0)
    when = reset.strftime("%I%p").lstrip("0").lower()
    print(json.dumps(result(f"You've hit your limit · resets {when} (UTC)", error=True)))
    sys.exit(1)
elif kind == "claude-limit-0":
    scribble()
    reset = (datetime.now(UTC) + timedelta(hours=2)).replace(minute=0)
    when = reset.strftime("%I%p").lstrip("0").lower()
    text = (f"Claude usage limit reached. Your limit will reset at {when} (UTC)." if arg == "old"
            else f"You've hit your limit · resets {when} (UTC)")
    print(json.dumps(result(text, error=False)))
elif kind == "aider-gives-up":
    scribble()
    print("Aider v0.86.2\nModel: openai/mock-model with whole edit format")
    for delay in (0.2, 0.5, 1.0):
        print("litellm.RateLimitError: RateLimitError: OpenAIException - Error code: 429 - "
              "{'error': {'message': 'Rate limit reached', 'code': 'rate_limit_exceeded'}}")
        print("The API provider has rate limited you. Try again later or check your quotas.")
        print(f"Retrying in {delay} seconds...")
    print("litellm.RateLimitError: RateLimitError: OpenAIException - Error code: 429")
    print("The API provider has rate limited you. Try again later or check your quotas.")
elif kind.startswith("mentions-429"):
    target.write_text("done\n", encoding="utf-8")
    print("Wrote the retry handler.")
    print("  on 'HTTP 429 Too Many Requests' the client waits and retries (rate limit handling)")
    if kind.endswith("-early"):
        for n in range(10):
            print(f"checked case {n}: ok")
elif kind == "http-429":
    scribble()
    print('API Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"This request '
          'would exceed your account\'s rate limit. Please try again later."}}', file=sys.stderr)
    sys.exit(1)
elif kind == "aider-spends":
    target.write_text("done\n", encoding="utf-8")
    for n in range(1, 4):
        print(f"Tokens: 2.5k sent, 345 received. Cost: ${cost:.2f} message, ${n * cost:.2f} session.",
              flush=True)
    time.sleep(120)
elif kind == "codex-limit":
    message = ("You've hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro) "
               "or try again in 2 hours 5 minutes.")
    for event in ({"type": "thread.started", "thread_id": "fake"}, {"type": "turn.started"},
                  {"type": "error", "message": message}, {"type": "turn.failed", "error": {"message": message}}):
        print(json.dumps(event))
    sys.exit(1)
elif kind in ("claude-stream", "claude-stream-bad"):
    def emit(event):
        print(json.dumps(event, separators=(",", ":")), flush=True)

    def assistant(block, parent=None):
        emit({"type": "assistant", "message": {"role": "assistant", "content": [block]},
              "parent_tool_use_id": parent, "session_id": "fake"})

    emit({"type": "system", "subtype": "init", "cwd": os.getcwd(), "tools": ["Bash", "Read", "Task"]})
    assistant({"type": "text", "text": "Let me run the tests first."})
    assistant({"type": "tool_use", "id": "toolu_1", "name": "Bash",
               "input": {"command": "pytest -q", "description": "Run the tests"}})
    if kind == "claude-stream" and len(sys.argv) > 3 and Path(sys.argv[3]).with_suffix(".hold").exists():
        go = Path(sys.argv[3]).with_suffix(".go")
        deadline = time.monotonic() + 20
        while not go.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
    emit({"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "1 passed"}]}, "parent_tool_use_id": None})
    if kind == "claude-stream-bad":
        print("node: warning: this line is not JSON", flush=True)
        print('{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Ba', flush=True)
        big = "x" * (10 * 1024 * 1024)
        print(json.dumps({"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": big}]}}), flush=True)
        print("y" * (10 * 1024 * 1024), flush=True)  # 10 MB of plain text on one line
        emit({"type": "something_new", "payload": [1, 2, 3]})
        emit({"type": "assistant", "message": "not a dict"})
    assistant({"type": "tool_use", "id": "toolu_2", "name": "Task",
               "input": {"description": "Check the file", "prompt": "Read it", "subagent_type": "general"}})
    assistant({"type": "tool_use", "id": "toolu_3", "name": "Read",
               "input": {"file_path": os.path.join(os.getcwd(), str(target))}}, parent="toolu_2")
    reset = int(time.time()) + 3 * 3600
    emit({"type": "rate_limit_event", "rate_limit_info": {
        "status": "allowed_warning", "resetsAt": reset, "rateLimitType": "five_hour", "utilization": cost,
        "unifiedWindows": {"five_hour": {"utilization": cost, "resetsAt": reset},
                           "seven_day": {"utilization": 0.2, "resetsAt": reset + 5 * 86400}}},
        "uuid": "u", "session_id": "fake"})
    target.write_text("done\n", encoding="utf-8")
    assistant({"type": "tool_use", "id": "toolu_4", "name": "Write",
               "input": {"file_path": os.path.join(os.getcwd(), str(target)), "content": "done\n"}})
    usage = {"input_tokens": 300, "cache_creation_input_tokens": 2000, "cache_read_input_tokens": 10000,
             "output_tokens": 2100}
    emit({"type": "result", "subtype": "success", "is_error": False, "result": "Wrote the file.",
          "session_id": "fake", "total_cost_usd": 0.042, "usage": usage})
    if kind == "claude-stream-bad":
        sys.stdout.write('{"type":"assistant","message":{"content":[{"type":"tool_use","na')
        sys.stdout.flush()
elif kind == "codex-done":
    tokens = int(float(arg)) if arg != "0.042" else 1000

    def emit(event):
        print(json.dumps(event), flush=True)

    emit({"type": "thread.started", "thread_id": "fake"})
    for turn in range(2):
        emit({"type": "turn.started"})
        emit({"type": "item.started", "item": {"id": f"item_{turn}a", "type": "command_execution",
                                                "command": "bash -lc 'ls'", "aggregated_output": "",
                                                "exit_code": None, "status": "in_progress"}})
        emit({"type": "item.completed", "item": {"id": f"item_{turn}a", "type": "command_execution",
                                                  "command": "bash -lc 'ls'", "aggregated_output": "T-1.txt\n",
                                                  "exit_code": 0, "status": "completed"}})
        if turn == 1:
            target.write_text("done\n", encoding="utf-8")
            emit({"type": "item.completed", "item": {"id": "item_1b", "type": "file_change", "status": "completed",
                                                      "changes": [{"path": os.path.join(os.getcwd(), str(target)),
                                                                   "kind": "update"}]}})
            emit({"type": "item.completed", "item": {"id": "item_1c", "type": "agent_message",
                                                      "text": "Wrote the file."}})
        emit({"type": "turn.completed", "usage": {"input_tokens": tokens, "cached_input_tokens": 0,
                                                   "output_tokens": tokens // 10}})
        if turn == 0 and len(sys.argv) > 4:  # "wait": a budget watch has 20 s to stop it here
            time.sleep(20)
else:
    sys.exit(f"unknown kind {kind}")
