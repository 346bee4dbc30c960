"""Benchmark: a tick's cost does not grow with history (SPEC §11).

The same full tick (no-op agent, `verify: true`) on a fresh project and on one
that carries the traces of 10,000 earlier ticks: a rotated status log with its
archive, 2,000 tick logs and 500 rollback folders (what pruning keeps), a
month of memory journal, a state file. Ratio budget: ≈ 1x (we flag > 1.5x).

Run: python bench/history.py [--ticks 10000] [--runs 6]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tempfile  # noqa: E402

from table import header, print_table  # noqa: E402
from tick_overhead import full_ticks, make_project  # noqa: E402

ENTRY = """## [2026-01-01T00:00:00Z] Tick #{n}
- **Task**: T-{n} [MODULE:bench] Old task {n}
- **Status**: ✅ SUCCESS
- **Verify Output**: `ok` (exit code 0)
- **Duration**: 1m02s
- **Files Modified**: src/f{n}.py (+3 -1)
- **Diff Size**: 4 lines
- **Git Commit**: `abcdef1` — "memento: complete T-{n} Old task {n}"
"""


def add_history(root: Path, ticks: int) -> None:
    logs = root / "logs"
    archive = logs / "status_archive"
    archive.mkdir(parents=True, exist_ok=True)
    per_file = 25
    for start in range(1, ticks - 49, per_file):
        body = "\n---\n\n".join(ENTRY.format(n=n) for n in range(start, start + per_file))
        (archive / f"TICK_STATUS_{start:06d}.md").write_text("# TICK STATUS LOG\n\n" + body)
    status = root / "docs" / "TICK_STATUS.md"
    status.write_text("# TICK STATUS LOG\n\n" + "\n---\n\n".join(ENTRY.format(n=n) for n in range(ticks - 48, ticks + 1)))
    for i in range(2000):
        (logs / f"tick_2026-01-01T{i:06d}Z.log").write_text("[memento] an old tick\n" * 50)
    for i in range(500):
        d = logs / "rollback" / f"2026-01-01T{i:06d}Z-T-{i}"
        d.mkdir(parents=True)
        (d / "changes.patch").write_text("--- a\n+++ b\n")
    journal = root / "memory" / "journal"
    journal.mkdir(parents=True, exist_ok=True)
    for day in range(1, 31):
        (journal / f"2026-01-{day:02d}.md").write_text("".join(f"- 00:{m:02d} tick ran\n" for m in range(300)))
    plan = root / "docs" / "MASTER_PLAN.md"
    plan.write_text(plan.read_text().replace("- max_retries: 3", f"- max_retries: 3\n- total_ticks: {ticks}"))
    import subprocess

    subprocess.run(["git", "add", "-A"], cwd=root, check=True, capture_output=True)
    subprocess.run(["git", "commit", "-qm", "history"], cwd=root, check=True, capture_output=True)


def rows(ticks: int = 10_000, runs: int = 6) -> list:
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / "fresh"
        make_project(fresh, 200, runs + 2, "auto")
        old = Path(tmp) / "old"
        make_project(old, 200, runs + 2, "auto")
        add_history(old, ticks)
        fresh_ms = statistics.median(r["wall"] for r in full_ticks(fresh, runs)[1:])
        old_ms = statistics.median(r["wall"] for r in full_ticks(old, runs)[1:])
    ratio = old_ms / fresh_ms
    return [
        ("full tick, fresh project, median (ms)", f"{fresh_ms:.0f}", "", None),
        (f"full tick after {ticks} earlier ticks, median (ms)", f"{old_ms:.0f}", "", None),
        ("history / fresh", f"{ratio:.2f}x", "≈ 1x", ratio <= 1.5),
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ticks", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=6)
    args = ap.parse_args()
    print(header())
    return 0 if print_table(rows(args.ticks, args.runs)) else 1


if __name__ == "__main__":
    raise SystemExit(main())
