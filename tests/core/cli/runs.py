"""`memento` run as a person runs it, a real subprocess, and the plans the command line's tests share."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

FIXTURES = Path(__file__).parents[1] / "fixtures"
PLAN = "docs/MASTER_PLAN.md"
# Two `script` tasks: T-1 passes, T-2 fails without a word (its verify is `false`).
WORDS_PLAN = """# MASTER_PLAN: words

## Meta
- tick_mode: auto
- max_retries: 2

## Phase 1: One
<!-- depends: none -->

- [ ] `T-1` [MODULE:a] Passes
  - verify: `test -f a.txt`
  - context_files: [a.txt]
  - do: `echo a > a.txt`

- [ ] `T-2` [MODULE:b] Fails without a word
  - verify: `false`
  - context_files: [b.txt]
  - do: `echo b > b.txt`
"""


def memento(*args: str, cwd: Path | None = None, env: dict | None = None, stdin=None,
            input: str | None = None) -> subprocess.CompletedProcess:
    """``python -m memento_core.cli ARGS`` with ``env`` on top of this environment, its output as text."""
    return subprocess.run([sys.executable, "-m", "memento_core.cli", *args], cwd=cwd,
                          env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=120,
                          stdin=stdin, input=input)


def status_json(ws) -> dict:
    """`memento status --json` of the workspace ``ws`` (a Workspace), read."""
    proc = subprocess.run([sys.executable, "-m", "memento_core.cli", "status", "--json", str(ws.root)],
                          capture_output=True, text=True)
    return json.loads(proc.stdout)
