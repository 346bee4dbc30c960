"""A workspace whose agent is a stub of a real CLI: an executable named like the preset's binary, first on
PATH, that records its argv, working directory and stdin and makes the task's edit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from memento_core.scaffold import init_workspace

STUB = """#!{python}
import json, os, sys
stdin = sys.stdin.read()
record = {{"argv": sys.argv[1:], "cwd": os.getcwd(), "stdin": stdin,
          "task": os.environ.get("MEMENTO_TASK_ID"),
          "trust": os.environ.get("GEMINI_CLI_TRUST_WORKSPACE")}}
with open(os.environ["STUB_RECORD"], "w", encoding="utf-8") as fh:
    json.dump(record, fh)
with open("hello.txt", "w", encoding="utf-8") as fh:
    fh.write("edited by the {name} stub\\n")
print("{name} stub: edited hello.txt")
"""


PLAN = """# MASTER_PLAN: stubs

## Meta
- tick_mode: auto
- max_retries: 3
- max_tasks_per_tick: 1

---

## Phase 1: One
<!-- depends: none -->

- [ ] `T-101` [MODULE:hello] Write hello.txt
  - verify: `grep -q 'edited by the' hello.txt`
  - context_files: [hello.txt]
  - retries: 0
"""


def make_stub(bin_dir: Path, name: str) -> Path:
    bin_dir.mkdir(parents=True, exist_ok=True)
    stub = bin_dir / name
    stub.write_text(STUB.format(python=sys.executable, name=name), encoding="utf-8")
    stub.chmod(0o755)
    return stub


def workspace(root: Path, preset: str) -> Path:
    init_workspace(root, project="stubs")
    (root / "docs" / "MASTER_PLAN.md").write_text(PLAN, encoding="utf-8")
    (root / "memento.toml").write_text(
        f'[agent]\npreset = "{preset}"\ntimeout = "1min"\nmodel = "stub-model"\n'
        f'extra_args = ["--stub-extra"]\n\n[verify]\ntimeout = "1min"\n'
        '[sandbox]\nmode = "none"\nenv = ["STUB_RECORD"]\n', encoding="utf-8")  # the stubs live in (and record to) /tmp
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "stub plan"], cwd=root, check=True)
    return root
