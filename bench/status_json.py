"""Benchmark: `memento status --json` on a 10,000-task plan against a Python one-liner that
reads and splits the same file (SPEC §11: ≤ 6x), both as fresh interpreters, alternated, in
wall and in CPU time (procs.py).

Run: python bench/status_json.py [--tasks 10000] [--rounds 9]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from plangen import big_plan  # noqa: E402
from procs import medians  # noqa: E402
from table import header, print_table  # noqa: E402

ENV = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@localhost",
       "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@localhost"}


def rows(n_tasks: int = 10_000, rounds: int = 9) -> list:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        subprocess.run([sys.executable, "-m", "memento_core.cli", "init", str(root)], check=True,
                       capture_output=True, env=ENV)
        plan = root / "docs" / "MASTER_PLAN.md"
        plan.write_text(big_plan(n_tasks))
        # Exit 1 is fine: the status says the pipeline needs a person (no cron here).
        ms = medians({"status": [sys.executable, "-m", "memento_core.cli", "status", "--json", str(root)],
                      "one_liner": [sys.executable, "-c", f"open({str(plan)!r}).read().split('\\n')"]},
                     rounds, ENV, ok=(0, 1))
    (status, status_cpu), (one_liner, one_liner_cpu) = ms["status"], ms["one_liner"]
    ratio, cpu_ratio = status / one_liner, status_cpu / one_liner_cpu
    return [
        (f"`memento status --json`, {n_tasks} tasks, median wall / CPU (ms)", f"{status:.0f} / {status_cpu:.0f}",
         "", None),
        ("python one-liner reading + splitting the plan (ms)", f"{one_liner:.0f} / {one_liner_cpu:.0f}", "", None),
        ("status --json / one-liner, wall", f"{ratio:.2f}x", "≤ 6x", ratio <= 6),
        ("status --json / one-liner, CPU", f"{cpu_ratio:.2f}x", "≤ 6x", cpu_ratio <= 6),
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=9)
    args = ap.parse_args()
    print(header())
    return 0 if print_table(rows(args.tasks, args.rounds)) else 1


if __name__ == "__main__":
    raise SystemExit(main())
