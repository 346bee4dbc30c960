"""Benchmark: `memento status --json` on a 10,000-task plan against a Python one-liner that
reads and splits the same file (SPEC §11: ≤ 6x), both as fresh interpreters.

Run: python bench/status_json.py [--tasks 10000] [--rounds 9]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from plangen import big_plan  # noqa: E402
from table import header, print_table  # noqa: E402

ENV = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@localhost",
       "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@localhost"}


def _median_ms(argv: list[str], rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, env=ENV)
        if done.returncode not in (0, 1):  # 1: the status says the pipeline needs a person (no cron here)
            raise SystemExit(done.stderr.decode(errors="replace"))
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1000


def rows(n_tasks: int = 10_000, rounds: int = 9) -> list:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        subprocess.run([sys.executable, "-m", "memento_core.cli", "init", str(root)], check=True,
                       capture_output=True, env=ENV)
        plan = root / "docs" / "MASTER_PLAN.md"
        plan.write_text(big_plan(n_tasks))
        status = _median_ms([sys.executable, "-m", "memento_core.cli", "status", "--json", str(root)], rounds)
        one_liner = _median_ms([sys.executable, "-c", f"open({str(plan)!r}).read().split('\\n')"], rounds)
    ratio = status / one_liner
    return [
        (f"`memento status --json`, {n_tasks} tasks, median (ms)", f"{status:.0f}", "", None),
        ("python one-liner reading + splitting the plan (ms)", f"{one_liner:.0f}", "", None),
        ("status --json / one-liner", f"{ratio:.2f}x", "≤ 6x", ratio <= 6),
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
