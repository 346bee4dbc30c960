#!/usr/bin/env python3
"""Fake agent: fails a task's first attempt in a chosen way, then does it (for the morning report).

usage: fails_once_by_task.py TASK_ID MARK_DIR [T-n=HOW ...]

HOW, on the task's first attempt (MARK_DIR remembers which tasks were tried):
  outside   writes other.txt, a file outside the task's context_files (a guard failure)
  exit      exits with code 3 (an agent error)
  sleep     sleeps 60 s (the task's timeout kills it)
Otherwise, and on every later attempt, it writes TASK_ID.txt ("done") and prints claude's JSON
result with usage (1000 tokens in, 200 out, $0.01), so the entry carries a Usage field.
"""

import json
import sys
import time
from pathlib import Path

task, marks = sys.argv[1], Path(sys.argv[2])
how = dict(arg.split("=", 1) for arg in sys.argv[3:]).get(task, "")
marks.mkdir(parents=True, exist_ok=True)
first = not (marks / task).exists()
(marks / task).write_text("tried\n", encoding="utf-8")
if first and how == "outside":
    Path("other.txt").write_text("scribbled by the agent\n", encoding="utf-8")
    Path(f"{task}.txt").write_text("done\n", encoding="utf-8")
elif first and how == "exit":
    print("error: the fake agent gave up", file=sys.stderr)
    sys.exit(3)
elif first and how == "sleep":
    time.sleep(60)
else:
    Path(f"{task}.txt").write_text("done\n", encoding="utf-8")
print(json.dumps({"type": "result", "subtype": "success", "is_error": False, "duration_ms": 10, "num_turns": 1,
                  "result": "did it", "session_id": "fake", "total_cost_usd": 0.01,
                  "usage": {"input_tokens": 1000, "cache_creation_input_tokens": 0,
                            "cache_read_input_tokens": 0, "output_tokens": 200}}))
