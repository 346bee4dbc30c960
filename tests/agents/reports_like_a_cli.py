#!/usr/bin/env python3
"""Fake agent: prints what a real coding CLI prints, for the tick's usage and rate-limit parsing.

usage: reports_like_a_cli.py KIND [COST] [COUNTER]

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
COUNTER, when given, is a file that gets one line per run (to tell whether a tick ran it).
"""

import json
import os
import sys
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
    import time

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
else:
    sys.exit(f"unknown kind {kind}")
