#!/usr/bin/env python3
"""Fake agent: complains on stderr and exits with code 3 (or argv[1])."""

import sys

print("working on it", flush=True)
print("error: the fake agent gave up", file=sys.stderr, flush=True)
sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
