#!/usr/bin/env python3
"""Fake agent for `memento doctor --agent` (the `command` preset's agent).

usage: answers_doctor.py PROMPT_FILE OUTDIR MODE [URL]

Copies its prompt to OUTDIR/prompt.md and its view of the world to OUTDIR/seen.txt (its
working directory, whether it can write memento.toml), then by MODE:
  ok            prints "OK" and exits 0
  not-logged-in prints Claude Code's words for a missing login and exits 1
  error-json-0  prints claude's error result (an unreachable endpoint) and exits 0, as Claude Code does
  says-error-0  prints a connection error as its last words and exits 0
  get URL       fetches URL (through the proxy variables, as a CLI does) and prints "OK" and the
                body, or the error and exits 1
"""

import json
import os
import sys
import urllib.request
from pathlib import Path

prompt, outdir, mode = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
outdir.mkdir(parents=True, exist_ok=True)
(outdir / "prompt.md").write_text(prompt.read_text(encoding="utf-8"), encoding="utf-8")
writable = os.access("memento.toml", os.W_OK)
(outdir / "seen.txt").write_text(f"cwd {os.getcwd()}\nconfig writable {writable}\n", encoding="utf-8")
print("thinking about the prompt", flush=True)
if mode == "ok":
    print("OK")
elif mode == "not-logged-in":
    print("Invalid API key · Please run /login", file=sys.stderr)
    sys.exit(1)
elif mode == "error-json-0":
    print(json.dumps({"type": "result", "subtype": "success", "is_error": True, "duration_ms": 31,
                      "num_turns": 1, "result": "API Error: Connection error.", "session_id": "fake",
                      "total_cost_usd": 0, "usage": {"input_tokens": 0, "output_tokens": 0}}))
elif mode == "says-error-0":
    print("Error: connect ECONNREFUSED 127.0.0.1:9")
elif mode == "get":
    try:
        body = urllib.request.urlopen(sys.argv[4], timeout=10).read().decode()
    except OSError as exc:
        print(f"could not reach {sys.argv[4]}: {exc}")
        sys.exit(1)
    print("OK", body[:80])
