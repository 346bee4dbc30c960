"""Benchmark: a parallel phase with several workers on one machine (SPEC §12, issue 17).

A `parallel: true` phase of 8 tasks whose agent (the `command` preset) takes
4 s each, run by one `memento tick` with `[workers] max = 1` and then with
`max = 4` (`max_tasks_per_tick: 8`, so one tick does the whole phase). Budget:
max = 4 finishes in at most 0.6x the wall time of max = 1. Each run must end
with every task `[x]`, exactly one commit per task on main, and no worktree
or `memento/<ID>` branch left.

Run: python bench/parallel_workers.py [--tasks 8] [--seconds 4] [--workers 4]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from table import header, print_table  # noqa: E402

ENV = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@localhost",
       "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@localhost"}
AGENT = ("import os, time, sys; time.sleep(float(sys.argv[1])); "
         "open(os.environ['MEMENTO_TASK_ID'] + '.txt', 'w').write('done\\n')")


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, env=ENV, capture_output=True, text=True).stdout


def make_project(root: Path, n_tasks: int, seconds: float, workers: int) -> None:
    from memento_core.scaffold import init_workspace

    init_workspace(root, project="bench", commit=False)
    tasks = "\n".join(
        f"- [ ] `T-{i}` [MODULE:bench] Task {i}\n  - verify: `test -f T-{i}.txt`\n"
        f"  - context_files: [T-{i}.txt]\n" for i in range(1, n_tasks + 1))
    (root / "docs" / "MASTER_PLAN.md").write_text(
        f"# MASTER_PLAN: bench\n\n## Meta\n- tick_mode: auto\n- max_retries: 3\n"
        f"- max_tasks_per_tick: {n_tasks}\n- circuit_breaker_threshold: 100\n\n"
        f"## Phase 1: All at once\n<!-- parallel: true -->\n\n{tasks}")
    agent = f"{sys.executable} -c \"{AGENT}\" {seconds}"
    (root / "memento.toml").write_text(f"[agent]\npreset = \"command\"\ncommand = '''{agent}'''\n"
                                       f"timeout = \"60s\"\n[sandbox]\nmode = \"none\"\n[workers]\nmax = {workers}\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "bench project")


def one_run(base: Path, n_tasks: int, seconds: float, workers: int) -> tuple[float, bool, str]:
    """(wall seconds of one tick, everything as it should be, what was wrong)."""
    from memento_core.plan.scan import parse_plan

    root = base / f"max{workers}"
    make_project(root, n_tasks, seconds, workers)
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "memento_core.tick", "--project", str(root)],
                          env=ENV, capture_output=True, text=True)
    wall = time.monotonic() - started
    plan = parse_plan(root / "docs" / "MASTER_PLAN.md")
    done = [s for s in _git(root, "log", "--format=%s").splitlines() if s.startswith("memento: complete")]
    branches = [b for b in _git(root, "branch", "--format=%(refname:short)").split() if b.startswith("memento/")]
    folder = root / ".memento" / "worktrees"
    left = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
    wrong = []
    if proc.returncode != 0:
        wrong.append(f"tick exit {proc.returncode}: {proc.stdout.strip()[-200:]}")
    if any(t.status != "x" for t in plan.tasks):
        wrong.append("not every task [x]")
    if sorted(done) != sorted(f"memento: complete T-{i} Task {i}" for i in range(1, n_tasks + 1)):
        wrong.append(f"{len(done)} task commits")
    if branches or left:
        wrong.append(f"left: {branches + left}")
    return wall, not wrong, "; ".join(wrong)


def rows(tasks: int = 8, seconds: float = 4.0, workers: int = 4) -> list:
    """The table's rows (bench/run_all.py calls this); problems printed under it."""
    with tempfile.TemporaryDirectory(prefix="memento-bench-workers-") as tmp:
        serial, ok1, why1 = one_run(Path(tmp), tasks, seconds, 1)
        parallel, ok4, why4 = one_run(Path(tmp), tasks, seconds, workers)
    for why in (why1, why4):
        if why:
            print("  " + why, file=sys.stderr)
    ratio = parallel / serial
    return [
        (f"parallel phase, {tasks} tasks x {seconds:g} s, max = 1: wall", f"{serial:.1f} s", "", ok1),
        (f"parallel phase, {tasks} tasks x {seconds:g} s, max = {workers}: wall", f"{parallel:.1f} s", "", ok4),
        (f"ratio max = {workers} / max = 1", f"{ratio:.2f}", "<= 0.60", ratio <= 0.6),
        ("one commit per task on main, no worktree or branch left", "yes" if ok1 and ok4 else "no", "yes",
         ok1 and ok4),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args()
    print(header())
    return 0 if print_table(rows(args.tasks, args.seconds, args.workers)) else 1


if __name__ == "__main__":
    sys.exit(main())
