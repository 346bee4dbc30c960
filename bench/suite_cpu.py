"""How busy the test suite keeps the machine: the CPU its tests use against its workers' wall time.

Run: python bench/suite_cpu.py [PYTEST ARGS ...]     (default: the suite as `python -m pytest` runs it)

It runs pytest with this file as a plugin (``-p suite_cpu``): around each test, the CPU seconds
of the worker and of every child it reaped (``getrusage`` SELF + CHILDREN: git, ticks, agents,
bwrap and what ran inside it) and the wall seconds, one JSON line a test in a folder of its own.
Then it prints the totals, the share of the workers' time the tests spent on a CPU, and the
files that used the most CPU and the most time waiting (wall − CPU). A low share means the
machine waits on the processes the tests start: more workers than cores use it (tests/conftest.py).
CPU time moves little with the load; wall time moves with it, so say the load beside the numbers.
"""

from __future__ import annotations

import collections
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

OUT_ENV = "MEMENTO_SUITE_CPU_DIR"


def _cpu() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


import pytest  # noqa: E402 - from the dev extras

if os.environ.get(OUT_ENV):

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):
        cpu, wall = _cpu(), time.monotonic()
        yield
        row = {"id": item.nodeid, "cpu": _cpu() - cpu, "wall": time.monotonic() - wall}
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        with open(Path(os.environ[OUT_ENV]) / f"{worker}.jsonl", "a", encoding="utf-8") as fh:
            fh.write(json.dumps(row) + "\n")


def table(rows: list[dict], top: int = 12) -> str:
    cpu, wall = sum(r["cpu"] for r in rows), sum(r["wall"] for r in rows)
    if not rows:
        return "no test ran"
    by_cpu, by_wait = collections.Counter(), collections.Counter()
    for r in rows:
        name = r["id"].split("::")[0]
        by_cpu[name] += r["cpu"]
        by_wait[name] += r["wall"] - r["cpu"]
    lines = [f"tests {len(rows)}   CPU {cpu:.0f} s   workers' wall {wall:.0f} s   on a CPU {cpu / wall:.0%}",
             "", "most CPU (s)"]
    lines += [f"  {c:8.1f}  {name}" for name, c in by_cpu.most_common(top)]
    lines += ["", "most waiting (wall - CPU, s)"]
    lines += [f"  {w:8.1f}  {name}" for name, w in by_wait.most_common(top)]
    return "\n".join(lines)


def main(args: list[str]) -> int:
    here = Path(__file__).resolve().parent
    with tempfile.TemporaryDirectory(prefix="memento-suite-cpu-") as out:
        env = {**os.environ, OUT_ENV: out, "PYTHONPATH": os.pathsep.join(
            [str(here), *filter(None, [os.environ.get("PYTHONPATH")])])}
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "pytest", "-p", "suite_cpu", "-q", *args], env=env,
                              cwd=here.parent)
        took = time.monotonic() - started
        rows = [json.loads(line) for f in Path(out).glob("*.jsonl") for line in f.read_text().splitlines()]
    print(f"\npytest exit {done.returncode}, {took:.0f} s wall, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f} at the end\n")
    print(table(rows))
    return done.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
