"""Benchmark: parse a generated 10,000-task plan (SPEC §11 budget: ≤ 50 ms median).

Run: python bench/plan_parse.py [--tasks N] [--rounds R]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from plangen import big_plan  # noqa: E402
from table import header, print_table  # noqa: E402

from memento_core.plan.edits import set_status  # noqa: E402
from memento_core.plan.scan import decode_text, scan_plan  # noqa: E402

BUDGET_MS = 50.0


def parse(path: Path):
    """The file read and scanned: the parser itself (parse_plan keeps the last plans it made, so
    the same bytes twice would time a lookup)."""
    return scan_plan(decode_text(path.read_bytes(), str(path)), str(path))


def measure(n_tasks: int, rounds: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "MASTER_PLAN.md"
        path.write_text(big_plan(n_tasks))
        parse(path)  # warm the import and the page cache
        parse_times, edit_times = [], []
        for _ in range(rounds):
            t0 = time.perf_counter()
            plan = parse(path)
            parse_times.append((time.perf_counter() - t0) * 1000)
        assert len(plan.tasks) == n_tasks
        full_times = []
        for _ in range(max(3, rounds // 3)):
            t0 = time.perf_counter()
            errors = parse(path).errors  # decodes every task's fields and problems
            full_times.append((time.perf_counter() - t0) * 1000)
        assert not [e for e in errors if e.severity == "error"]
        for i in range(min(rounds, 10)):
            t0 = time.perf_counter()
            set_status(path, f"T-{n_tasks - i}", "~")
            edit_times.append((time.perf_counter() - t0) * 1000)
        return {
            "size_mb": path.stat().st_size / 1e6,
            "parse_median_ms": statistics.median(parse_times),
            "parse_min_ms": min(parse_times),
            "edit_median_ms": statistics.median(edit_times),
            "full_median_ms": statistics.median(full_times),
        }


def rows(n_tasks: int = 10_000, rounds: int = 21) -> list:
    r = measure(n_tasks, rounds)
    return [
        (f"plan size, {n_tasks} tasks (MB)", f"{r['size_mb']:.2f}", "", None),
        ("plan parse, median (ms)", f"{r['parse_median_ms']:.1f}", "≤ 50", r["parse_median_ms"] <= BUDGET_MS),
        ("plan parse + validate every task, median (ms)", f"{r['full_median_ms']:.1f}", "", None),
        ("locked status edit, median (ms)", f"{r['edit_median_ms']:.1f}", "", None),
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--tasks", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=21)
    args = ap.parse_args()
    print(header())
    return 0 if print_table(rows(args.tasks, args.rounds)) else 1


if __name__ == "__main__":
    raise SystemExit(main())
