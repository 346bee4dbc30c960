"""Differential check: `memento status --json` of this tree and of another (``--against``, e.g. a
`git worktree add --detach` of the commit before a change) print the same bytes and exit codes
on the same projects: the 10,000-task plan, the same plan with a defect every few tasks (every
kind of task problem, blocked, waiting and running tasks), the fixtures' plans, and a project
with a question asked, a verify change listed, failures and events in its status log.

Run: python bench/status_json_diff.py --against /path/to/old/tree [--tasks 10000]
Exit 0 when every project's output is the same, 1 otherwise (the first difference is shown).
"""

from __future__ import annotations

import argparse
import difflib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from plangen import big_plan  # noqa: E402

HERE = Path(__file__).resolve().parents[1]
FIXTURES = HERE / "tests" / "core" / "fixtures"
ENV = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@localhost",
       "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@localhost"}

# One defect per kind, put on every 97th task of the big plan, in turn.
DEFECTS = (
    ("  - verify: `pytest", "  - verify: ``\n  - verify_x: `pytest"),  # an empty verify
    ("  - context_files:", "  - context_filez:"),  # no context_files
    ("  - retries: 0", "  - retries: many"),
    ("  - estimate: 5min", "  - estimate: 5 parsecs"),
    ("  - retries: 0", "  - retries: 0\n  - changes: some"),
    ("  - retries: 0", "  - retries: 0\n  - changes: none"),
    ("  - retries: 0", "  - retries: 0\n  - import_error: the block could not be read"),
    ("  - retries: 0", "  - retries: 0\n  - retries: 1"),  # a repeated field
    ("  - retries: 0", "  - retries: 0\n  - Timeout: 3 fortnights"),
    ("  - retries: 0", "  - retries: 0\n  - questions: x"),
    ("  - retries: 0", "  - retries: 0\n  - accept: it works\n  - accept: it is fast"),
    ("  - retries: 0", "  - retries: 0\n  - depends: T-1, T-99999"),
    ("- [ ] `", "- [y] `"),  # an unknown status
    ("- [ ] `", "- [!] `"),
    ("- [ ] `", "- [~] `"),
    ("- [ ] `", "- [?] `"),
    ("- [ ] `", "- [X] `"),
)

STATUS_LOG = """# TICK STATUS LOG

## [2026-11-29T14:01:00Z] Tick #1
- **Task**: T-1 [MODULE:m0] Implement feature number 1
- **Status**: ✅ SUCCESS
- **Duration**: 12s
- **Git Commit**: `abc1234` — "memento: complete T-1"

---

## [2026-11-29T14:02:00Z] Tick #2
- **Task**: T-3002 Implement feature number 3002
- **Status**: ❌ FAILED (retry 1/3)
- **Reason**: guard file changed: pyproject.toml
- **Verify Output**: `AssertionError` (exit code 1)
- **Duration**: 1m30s

---

## [2026-11-29T14:03:00Z] Tick #3
- **Event**: ⚠️ PIPELINE BLOCKED — Phase 31 has unresolved [!] tasks

---

## [2026-11-29T14:04:00Z] Tick #4
- **Task**: T-3005 Implement feature number 3005
- **Status**: ❌ FAILED — the reviewer could not review: it timed out
- **Reason**: reviewer failed: timed out

---

## [2026-11-29T14:05:00Z] Tick #5
- **Event**: 🔌 CIRCUIT BREAKER tripped after 5 failures

---
"""


def defective(text: str) -> str:
    """The big plan with a defect every 97th task, each kind in turn."""
    chunks = text.split("\n- [")
    for n, i in enumerate(range(1, len(chunks), 97)):
        old, new = DEFECTS[n % len(DEFECTS)]
        chunk = "- [" + chunks[i]
        if old in chunk:
            chunks[i] = chunk.replace(old, new, 1)[3:]
    return "\n- [".join(chunks)


def projects(tmp: Path, n_tasks: int) -> list[Path]:
    made = []

    def init(name: str, plan: str) -> Path:
        root = tmp / name
        subprocess.run([sys.executable, "-m", "memento_core.cli", "init", str(root)], check=True,
                       capture_output=True, env={**ENV, "PYTHONPATH": str(HERE)})
        (root / "docs" / "MASTER_PLAN.md").write_text(plan, encoding="utf-8")
        made.append(root)
        return root

    text = big_plan(n_tasks)
    init("big", text)
    init("defects", defective(text))
    for fixture in sorted(FIXTURES.glob("*_plan.md")):
        init(fixture.stem, fixture.read_text(encoding="utf-8"))
    busy = init("busy", defective(big_plan(min(n_tasks, 4000))))
    (busy / "docs" / "TICK_STATUS.md").write_text(STATUS_LOG, encoding="utf-8")
    (busy / ".memento").mkdir(exist_ok=True)
    code = ("import sys\nfrom memento_core.workspace import Workspace\nfrom memento_core import verify_changes as vc\n"
            "vc.record(Workspace.find(sys.argv[1]), vc.changes_of([('T-3010', 'pytest -q', 'true')], "
            "'2026-11-29T14:06:00Z'))")
    subprocess.run([sys.executable, "-c", code, str(busy)], check=True, env={**ENV, "PYTHONPATH": str(HERE)})
    return made


def status(tree: Path, root: Path) -> tuple[int, bytes]:
    done = subprocess.run([sys.executable, "-m", "memento_core.cli", "status", "--json", str(root)],
                          capture_output=True, env={**ENV, "PYTHONPATH": str(tree)}, cwd=tree)
    return done.returncode, done.stdout + done.stderr


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", type=Path, required=True, help="the other tree (its memento_core is imported)")
    ap.add_argument("--tasks", type=int, default=10_000)
    args = ap.parse_args()
    same = True
    with tempfile.TemporaryDirectory() as tmp:
        for root in projects(Path(tmp), args.tasks):
            (new_rc, new), (old_rc, old) = status(HERE, root), status(args.against.resolve(), root)
            ok = (new_rc, new) == (old_rc, old)
            print(f"{root.name}: exit {new_rc}/{old_rc}, {len(new)} bytes, {'same' if ok else 'DIFFERENT'}")
            if not ok and same:
                sys.stdout.writelines(difflib.unified_diff(old.decode(errors="replace").splitlines(True),
                                                           new.decode(errors="replace").splitlines(True),
                                                           "against", "this tree", n=2))
            same = same and ok
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
