"""Benchmark: `memento report` on a project with 10,000 ticks of history (SPEC §15: fast).

The history is what rotation leaves: TICK_STATUS.md with its last 25 entries and
an archive of files of 25 entries each (status_max_entries 50), one tick every
5 minutes (~35 days), a mix of passes with usage and commits, failures of every
kind, blocks and events. Timed as fresh processes: the default report (the last
24 h, ~290 ticks: only the newest archive files are opened), the whole history
(`--since 100d`: every file parsed once), and `memento status --json` on the same
project for scale.

Run: python bench/report_history.py [--ticks 10000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from table import header, print_table  # noqa: E402

ENV = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@localhost",
       "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@localhost"}
REASONS = ("verify failed with exit code 1", "changed files outside context_files: src/x.py",
           "agent timed out after 30min (its process group was killed)", "agent exited with code 2",
           "rate limited: You've hit your limit", "review: criterion 1 not met")


def entry(n: int, when: datetime) -> str:
    from memento_core.runlog import utc_stamp
    from memento_core.status_log import format_entry

    stamp = utc_stamp(when)
    task = f"`T-{n}` [MODULE:bench] Task {n}"
    usage = ("Usage", "12.3k in / 2.1k out tokens, $0.0420")
    if n % 50 == 0:
        return format_entry(stamp, n, [("Event", "⚠️ PIPELINE BLOCKED — T-3 blocked"), ("Tasks", "T-3")])
    if n % 7 == 0:
        return format_entry(stamp, n, [("Task", task), ("Status", "❌ FAILED (retry 1/3)"),
                                       ("Verify Output", "`boom` (exit code 1)"), ("Duration", "1m02s"),
                                       ("Reason", REASONS[n % len(REASONS)]), usage,
                                       ("Git Commit", "(none — rollback)"), ("Log", f"logs/tick_{n}.log")],
                            error_tail="Traceback (most recent call last):\n  boom\nAssertionError: boom")
    return format_entry(stamp, n, [("Task", task), ("Status", "✅ SUCCESS"),
                                   ("Verify Output", "`ok` (exit code 0)"), ("Duration", "2m10s"),
                                   ("Files Modified", f"src/f{n}.py (+3 -1)"), usage,
                                   ("Git Commit", f'`{n:07x}` — "memento: complete T-{n} Task {n}"'),
                                   ("Log", f"logs/tick_{n}.log")])


def add_history(root: Path, ticks: int) -> None:
    from memento_core.runlog import utc_stamp
    from memento_core.status_log import _safe_stamp

    archive = root / "logs" / "status_archive"
    archive.mkdir(parents=True, exist_ok=True)
    start = datetime.now(UTC) - timedelta(minutes=5 * ticks)
    stamps = [start + timedelta(minutes=5 * n) for n in range(ticks + 1)]
    per_file = 25
    for first in range(1, ticks - per_file + 1, per_file):
        body = "".join(entry(n, stamps[n]) for n in range(first, first + per_file))
        name = f"TICK_STATUS_{_safe_stamp(utc_stamp(stamps[first]))}_{_safe_stamp(utc_stamp(stamps[first + 24]))}.md"
        (archive / name).write_text("# TICK STATUS LOG\n\n" + body)
    body = "".join(entry(n, stamps[n]) for n in range(ticks - per_file + 1, ticks + 1))
    (root / "docs" / "TICK_STATUS.md").write_text("# TICK STATUS LOG\n\n" + body)


def _median_ms(argv: list[str], rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        subprocess.run(argv, capture_output=True, env=ENV)  # exit 1: the report says something needs you
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1000


def rows(ticks: int = 10_000, rounds: int = 5) -> list:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        subprocess.run([sys.executable, "-m", "memento_core.cli", "init", str(root)], check=True,
                       capture_output=True, env=ENV)
        add_history(root, ticks)
        cli = [sys.executable, "-m", "memento_core.cli"]
        check = subprocess.run([*cli, "report", "--json", "--since", "100d", str(root)], capture_output=True,
                               text=True, env=ENV)
        import json

        doc = json.loads(check.stdout)
        day = _median_ms([*cli, "report", str(root)], rounds)
        whole = _median_ms([*cli, "report", "--json", "--since", "100d", str(root)], rounds)
        status = _median_ms([*cli, "status", "--json", str(root)], rounds)
        files = len(list((root / "logs" / "status_archive").iterdir()))
    return [
        (f"history: {doc['ticks']} ticks in {files} archive files + TICK_STATUS.md", "", "", None),
        ("`memento report` (last 24 h), median (ms)", f"{day:.0f}", "≤ 1000", day <= 1000),
        (f"`memento report --since 100d` ({doc['ticks']} ticks), median (ms)", f"{whole:.0f}", "≤ 3000",
         whole <= 3000),
        ("`memento status --json` on the same project (ms)", f"{status:.0f}", "", None),
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ticks", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    print(header())
    return 0 if print_table(rows(args.ticks, args.rounds)) else 1


if __name__ == "__main__":
    raise SystemExit(main())
