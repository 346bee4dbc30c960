"""Benchmark: what a tick costs beyond the git commands it runs (SPEC §11).

1. A paused tick, `python -m memento_core.tick --project DIR`, against a bare
   `python -c pass` of the same interpreter, alternated, wall and CPU time (procs.py)
   (budgets: ≤ 80 ms wall, ≤ 3x bare in wall time, ≤ 2x in CPU time: issue 42).
2. Full ticks on a repository of 10,000 files with a no-op agent (`true`) and
   `verify: true`: the tick's own time (wall minus agent and verify) against
   the time spent inside the git subprocesses it runs (budget ≤ 1.5x). The
   project also holds a person's ignored `.env` and a `.venv/` of ``--venv``
   files (default 3,000), which every snapshot prints (tick/kept.py).

Run: python bench/tick_overhead.py [--files 10000] [--venv 3000] [--ticks 8] [--rounds 15]
                                   [--sandbox auto|none]  (none: the unconfined tick, which prints the .venv/)
                                   [--paused-only]  (part 1 alone)
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
from procs import medians  # noqa: E402
from table import header, print_table  # noqa: E402

ENV = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@localhost",
       "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@localhost"}


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, env=ENV, capture_output=True)


def make_project(root: Path, n_files: int, n_tasks: int, mode: str, venv: int = 0, sandbox: str = "auto") -> None:
    from memento_core.scaffold import init_workspace

    init_workspace(root, project="bench", commit=False)
    for i in range(n_files):
        d = root / "src" / f"pkg{i % 100}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"mod{i}.py").write_text(f"VALUE = {i}\n")
    tasks = "\n".join(
        f"- [ ] T-{i} [MODULE:bench] No-op task {i}\n  - verify: `true`\n  - context_files: [src/]\n"
        for i in range(1, n_tasks + 1))
    (root / "docs" / "MASTER_PLAN.md").write_text(
        f"# MASTER_PLAN: bench\n\n## Meta\n- tick_mode: {mode}\n- max_retries: 3\n"
        f"- circuit_breaker_threshold: 100\n- status_max_entries: 50\n\n## Phase 1: All\n\n{tasks}")
    (root / "memento.toml").write_text(f'[agent]\npreset = "command"\ncommand = "true"\n[sandbox]\nmode = "{sandbox}"\n')
    with (root / ".gitignore").open("a") as fh:
        fh.write(".env\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "bench project")
    if venv:  # a person's, ignored (.gitignore has .venv/ and .env): printed at each snapshot
        (root / ".env").write_text("SECRET=bench\n")
        for i in range(venv):
            d = root / ".venv" / "lib" / "site-packages" / f"dist{i % 60}"
            d.mkdir(parents=True, exist_ok=True)
            (d / f"m{i}.py").write_text(f"X = {i}\n")


def paused_tick(root: Path, rounds: int) -> dict[str, tuple[float, float]]:
    """Median (wall, CPU) ms of a paused tick ("tick") and of a bare interpreter ("bare")."""
    return medians({"tick": [sys.executable, "-m", "memento_core.tick", "--project", str(root)],
                    "bare": [sys.executable, "-c", "pass"]}, rounds, ENV)


def full_ticks(root: Path, n: int) -> list[dict[str, float]]:
    os.environ.update({k: v for k, v in ENV.items() if k.startswith("GIT_")})
    from memento_core import agents
    from memento_core.agents import run as agent_run
    from memento_core.git import run as git_run
    from memento_core.tick.__main__ import run_tick

    git_time = [0.0]
    proc_time = [0.0]
    real_group = agents.run_in_group

    class TimedSubprocess:
        """subprocess as git/run.py sees it: every git command memento_core runs starts there."""

        def __getattr__(self, name):
            return getattr(subprocess, name)

        def run(self, *args, **kwargs):
            t0 = time.perf_counter()
            try:
                return subprocess.run(*args, **kwargs)
            finally:
                git_time[0] += time.perf_counter() - t0

    def timed_group(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return real_group(*args, **kwargs)
        finally:
            proc_time[0] += time.perf_counter() - t0

    git_run.subprocess = TimedSubprocess()
    # The tick runs verify through agents.run_in_group and the agent through
    # run_agent, which calls the run_in_group of agents/run.py: time both.
    agents.run_in_group = agent_run.run_in_group = timed_group
    results = []
    try:
        for _ in range(n):
            git_time[0] = proc_time[0] = 0.0
            t0 = time.perf_counter()
            outcome = run_tick(root)
            wall = time.perf_counter() - t0
            assert outcome.exit_code == 0 and outcome.results and outcome.results[0].passed, outcome.message
            own = wall - proc_time[0]
            results.append({"wall": wall * 1000, "git": git_time[0] * 1000, "own": own * 1000,
                            "agent_verify": proc_time[0] * 1000})
    finally:
        git_run.subprocess = subprocess
        agents.run_in_group = agent_run.run_in_group = real_group
    return results


def paused_rows(rounds: int = 15) -> list:
    with tempfile.TemporaryDirectory() as tmp:
        paused = Path(tmp) / "paused"
        make_project(paused, 10, 3, "paused")
        ms = paused_tick(paused, rounds)
    (tick_ms, tick_cpu), (bare_ms, bare_cpu) = ms["tick"], ms["bare"]
    return [
        ("paused tick, median wall (ms)", f"{tick_ms:.0f}", "≤ 80", tick_ms <= 80),
        ("paused tick, median CPU (ms)", f"{tick_cpu:.0f}", "", None),
        ("bare `python -c pass`, median wall / CPU (ms)", f"{bare_ms:.0f} / {bare_cpu:.0f}", "", None),
        ("paused tick / bare interpreter, wall", f"{tick_ms / bare_ms:.2f}x", "≤ 3x", tick_ms / bare_ms <= 3),
        ("paused tick / bare interpreter, CPU", f"{tick_cpu / bare_cpu:.2f}x", "≤ 2x", tick_cpu / bare_cpu <= 2),
    ]


def rows(files: int = 10_000, ticks: int = 8, rounds: int = 15, venv: int = 3000, sandbox: str = "auto") -> list:
    paused = paused_rows(rounds)
    with tempfile.TemporaryDirectory() as tmp:
        busy = Path(tmp) / "busy"
        make_project(busy, files, ticks + 2, "auto", venv, sandbox)
        runs = full_ticks(busy, ticks)[1:]  # the first tick pays for imports and cold caches
    own = statistics.median(r["own"] for r in runs)
    git = statistics.median(r["git"] for r in runs)
    wall = statistics.median(r["wall"] for r in runs)
    ratio = own / git if git else float("inf")
    return paused + [
        (f"full tick on {files} files (+ {venv} ignored in .venv/, sandbox {sandbox}), median wall (ms)",
         f"{wall:.0f}", "", None),
        ("  of which agent + verify (ms)", f"{statistics.median(r['agent_verify'] for r in runs):.0f}", "", None),
        ("  tick's own time excl. agent and verify (ms)", f"{own:.0f}", "", None),
        ("  time inside its git subprocesses (ms)", f"{git:.0f}", "", None),
        ("tick's own time / its git commands", f"{ratio:.2f}x", "≤ 1.5x", ratio <= 1.5),
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--venv", type=int, default=3000)
    ap.add_argument("--ticks", type=int, default=8)
    ap.add_argument("--sandbox", choices=("auto", "none"), default="auto")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--paused-only", action="store_true", help="only the paused tick against a bare interpreter")
    args = ap.parse_args()
    print(header())
    table = (paused_rows(args.rounds) if args.paused_only
             else rows(args.files, args.ticks, args.rounds, args.venv, args.sandbox))
    return 0 if print_table(table) else 1


if __name__ == "__main__":
    raise SystemExit(main())
