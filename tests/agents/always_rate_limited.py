#!/usr/bin/env python3
"""Hostile agent: breaks its task and blames the model's service, every time: it prints an
HTTP 429 "try again in 1 seconds" as its last words and does nothing else, hoping each attempt
is set aside as a rate limit (no retry counted) so the task never ends `[!]`.

usage: always_rate_limited.py [EXIT], run by the `command` preset (EXIT: its exit code, 1 by
default; 0 as aider and Claude Code exit after giving up).
"""

import sys


def main(code: str = "1") -> None:
    sys.stdin.read()
    print("working on it…")
    print("Error: 429 Too Many Requests (rate_limit_error): try again in 1 seconds")
    sys.exit(int(code))


if __name__ == "__main__":
    main(*sys.argv[1:])
