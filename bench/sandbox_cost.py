"""Benchmark: what the sandbox adds to an agent start (SPEC §13: ≤ 50 ms).

`true` started the way the tick starts the agent (``run_in_group``: a new
session, output to the tick log), outside and inside the bubblewrap sandbox
of a real workspace (``sandbox.bwrap_prefix``: its full layout, with 20
untracked files and a guard file bound read-only); median of N starts each.

Run: python bench/sandbox_cost.py [--rounds 31]
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
from table import header, print_table  # noqa: E402

from memento_core import sandbox  # noqa: E402
from memento_core.agents import run_in_group  # noqa: E402
from memento_core.config import config_from_dict  # noqa: E402
from memento_core.workspace import Workspace  # noqa: E402

BUDGET_MS = 50.0
ENV = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@localhost",
       "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@localhost"}


def _median_ms(root: Path, wrap: list[str], rounds: int) -> float:
    samples = []
    log = root / "logs" / "bench.log"
    for _ in range(rounds):
        t0 = time.perf_counter()
        result = run_in_group(["true"], cwd=root, log_path=log, timeout=30, wrap=wrap)
        samples.append(time.perf_counter() - t0)
        assert result.ok, result
    return statistics.median(samples) * 1000


def rows(rounds: int = 31) -> list:
    binary = sandbox.bwrap_binary()
    why = sandbox.probe(binary) if binary else "bubblewrap (bwrap) is not installed"
    if why:
        return [(f"sandbox cost: not measured ({why})", "-", f"≤ {BUDGET_MS:.0f} ms", None)]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        subprocess.run([sys.executable, "-m", "memento_core.cli", "init", str(root)], check=True,
                       capture_output=True, env=ENV)
        untracked = [f"scratch/note-{i}.txt" for i in range(20)]
        for rel in (*untracked, "guarded.txt"):
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text("x\n")
        ws = Workspace(root)
        wrap = sandbox.bwrap_prefix(ws, config_from_dict({}), binary=binary, guard_paths=["guarded.txt"],
                                    untracked=untracked)
        outside = _median_ms(root, [], rounds)
        inside = _median_ms(root, wrap, rounds)
    added = inside - outside
    return [
        (f"agent start (`true`) unconfined, median of {rounds} (ms)", f"{outside:.1f}", "", None),
        (f"agent start (`true`) in the sandbox, {len(wrap)} bwrap args (ms)", f"{inside:.1f}", "", None),
        ("what the sandbox adds to an agent start (ms)", f"{added:.1f}", f"≤ {BUDGET_MS:.0f} ms",
         added <= BUDGET_MS),
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=31)
    args = ap.parse_args()
    print(header())
    return 0 if print_table(rows(args.rounds)) else 1


if __name__ == "__main__":
    raise SystemExit(main())
