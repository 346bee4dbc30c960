"""Fresh-interpreter timings for the ratio budgets of SPEC §11: wall and CPU medians, alternated.

The machine is shared and noisy: wall time moves with the load, the CPU time a process spends
(user + system, `getrusage(RUSAGE_CHILDREN)` around each run) much less. The commands compared
are run one after the other in each round, so both sides meet the same load.

Both sides run from bytecode, as an installed package does: the interpreter's own modules have
it, and one first run of each command with bytecode writing allowed gives Memento's the same
(this machine sets PYTHONDONTWRITEBYTECODE=1; without the warm-up a source checkout compiles
every module it imports at every start, a cost no installed tick pays).
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import time


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_once(argv: list[str], env: dict[str, str], ok: tuple[int, ...] = (0,)) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of ``argv``; its exit code must be in ``ok``."""
    cpu0, t0 = _cpu(), time.perf_counter()
    done = subprocess.run(argv, capture_output=True, env=env)
    wall, cpu = time.perf_counter() - t0, _cpu() - cpu0
    if done.returncode not in ok:
        raise SystemExit(f"{argv}: exit {done.returncode}\n{done.stderr.decode(errors='replace')}")
    return wall, cpu


def medians(commands: dict[str, list[str]], rounds: int, env: dict[str, str],
            ok: tuple[int, ...] = (0,)) -> dict[str, tuple[float, float]]:
    """Median (wall, CPU) milliseconds of each named command over ``rounds`` alternated rounds."""
    warm = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for argv in commands.values():
        run_once(argv, warm, ok)
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(rounds):
        for name, argv in commands.items():
            samples[name].append(run_once(argv, env, ok))
    return {name: (statistics.median(w for w, _ in runs) * 1000, statistics.median(c for _, c in runs) * 1000)
            for name, runs in samples.items()}


def load() -> str:
    """The load average now, for the record."""
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())
