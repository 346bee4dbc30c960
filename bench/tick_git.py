"""Benchmark: the git processes and the CPU of one tick of a trivial task (SPEC §4, §11).

A small project (``--files`` tracked files), unconfined (``[sandbox] mode = "none"``), a
``command`` agent that writes one file and ``verify: true``. Each tick is a fresh
``python -m memento_core.tick`` as cron starts it (run through runpy by ``bench/tick_child.py``,
which adds the counting hooks below and imports nothing the tick does not); the first tick is a
warm-up.

Two kinds of tick, alternated on one project: a counted tick and a timed one.
- Counted: every git process, by git's own trace (``GIT_TRACE2_EVENT`` pointed at a directory:
  one file per git process, those git starts itself included: ``gc --auto``, a hook, a helper);
  the processes git starts that are not git are counted apart; and the git commands the tick
  itself starts, by subcommand and by where in memento_core they come from (a hook on
  ``subprocess.Popen`` in the child).
- Timed, without git's trace (it costs each git process about 0.5 ms of CPU, 12–20 ms a tick, that
  cron's ticks never pay): user + system of the tick process and all its children
  (``RUSAGE_CHILDREN`` around the child) minus that of the agent and verify (``RUSAGE_CHILDREN``
  around each ``run_in_group`` in the child, the run guard included). The counted ticks' CPU
  is printed too.

Budgets (issue 42): ≤ 25 git processes and ≤ 0.30 s of CPU per tick, medians of ``--ticks``.

The ticks run with their bytecode cached, as an installed package does (the warm-up tick
writes it); ``--compile-each`` keeps this machine's ``PYTHONDONTWRITEBYTECODE``, so each tick
compiles every module it imports again (about 0.25 s of CPU more).

Run: python bench/tick_git.py [--ticks 9] [--files 20] [--where] [--compile-each] [--against DIR] [--json FILE]
                              [--loose N]
     (--against DIR: the same ticks with DIR's memento_core too, alternated, e.g. an export of main)
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from table import header, print_table  # noqa: E402
from tick_child import subcommand  # noqa: E402

ENV = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@localhost",
       "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@localhost"}
BUDGET_GIT = 25
BUDGET_CPU = 0.30


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, env=ENV, capture_output=True)


def add_loose(root: Path, n: int) -> None:
    """``n`` loose objects more in the project's store (blobs, as git writes them): a project some
    ``n / 15`` ticks old, whose objects nothing but the person's git would have packed."""
    blobs = root.parent / f"{root.name}-blobs"
    blobs.mkdir()
    for i in range(n):
        (blobs / str(i)).write_text(f"an older tick's object {i}\n")
    subprocess.run(["git", "hash-object", "-w", "--stdin-paths"], cwd=root, check=True, env=ENV,
                   input="".join(f"{blobs / str(i)}\n" for i in range(n)).encode(), capture_output=True)
    shutil.rmtree(blobs)


def make_project(root: Path, n_files: int, n_tasks: int) -> None:
    from memento_core.scaffold import init_workspace

    init_workspace(root, project="bench", commit=False)
    for i in range(n_files):
        d = root / "src" / f"pkg{i % 5}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"mod{i}.py").write_text(f"VALUE = {i}\n")
    tasks = "\n".join(
        f"- [ ] T-{i} [MODULE:bench] Write one file {i}\n  - verify: `true`\n  - context_files: [src/]\n"
        for i in range(1, n_tasks + 1))
    (root / "docs" / "MASTER_PLAN.md").write_text(
        "# MASTER_PLAN: bench\n\n## Meta\n- tick_mode: auto\n- max_retries: 3\n"
        f"- circuit_breaker_threshold: 100\n- status_max_entries: 50\n\n## Phase 1: All\n\n{tasks}")
    (root / "memento.toml").write_text(
        '[agent]\npreset = "command"\n'
        'command = "sh -c \'echo done > src/out_{task_id}.txt\'"\n'
        '[sandbox]\nmode = "none"\n')
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "bench project")


# ---------------------------------------------------------------- the parent


def _traced(trace: Path) -> tuple[collections.Counter, int]:
    """Git processes by subcommand from a GIT_TRACE2_EVENT directory; processes git started that are not git."""
    kinds: collections.Counter = collections.Counter()
    others = 0
    for path in trace.iterdir():
        for line in path.read_text(errors="replace").splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("event") == "start":
                kinds[subcommand(event.get("argv") or ["git"])] += 1
            elif event.get("event") == "child_start" and not event.get("child_class", "").startswith("git"):
                argv = event.get("argv") or []
                if argv and os.path.basename(argv[0]) != "git":
                    others += 1
    return kinds, others


def one_tick(root: Path, tmp: Path, n: int, compile_each: bool = False, code: Path = HERE.parent,
             traced: bool = True) -> dict:
    """One tick as cron runs it; ``traced``: git's trace counts its processes (and costs them CPU)."""
    trace = tmp / f"trace{n}"
    trace.mkdir()  # empty for a timed tick: nothing counted
    out = tmp / f"tick{n}.json"
    env = {**ENV, "PYTHONPATH": os.pathsep.join(p for p in (str(code), os.environ.get("PYTHONPATH", "")) if p)}
    if traced:
        env["GIT_TRACE2_EVENT"] = str(trace)
    if not compile_each:  # as installed: the bytecode is cached (the warm-up tick writes it)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, str(HERE / "tick_child.py"), str(root), str(out)],
                          env=env, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0 or not out.exists():
        raise SystemExit(f"tick {n} failed ({proc.returncode}): {proc.stdout}{proc.stderr}")
    got = json.loads(out.read_text())
    if got["exit"] != 0:
        raise SystemExit(f"tick {n} exited {got['exit']}: {proc.stdout}{proc.stderr}")
    total = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    kinds, others = _traced(trace)
    return {"git": sum(kinds.values()), "kinds": kinds, "others": others, "calls": got["calls"],
            "cpu_total": total, "agent_verify": got["agent_verify_cpu"],
            "cpu_tick": total - got["agent_verify_cpu"], "python": got["python_cpu"], "traced": traced}


def measure(ticks: int, files: int, compile_each: bool = False, codes: tuple[Path, ...] = (HERE.parent,),
            loose: int = 0) -> list[list[dict]]:
    """Each code tree's ticks (one project each, their ticks alternated so that both meet the
    same load): ``ticks`` counted ones and ``ticks`` timed ones, in turn, the warm-up pair left out.
    ``loose``: loose objects added to each project's store first (:func:`add_loose`)."""
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        roots = [tmp / f"proj{i}" for i in range(len(codes))]
        for root in roots:
            make_project(root, files, 2 * ticks + 3)
            if loose:
                add_loose(root, loose)
        runs: list[list[dict]] = [[] for _ in codes]
        for i in range(len(codes)):
            (tmp / f"c{i}").mkdir()
        for n in range(2 * ticks + 2):
            for i, (root, code) in enumerate(zip(roots, codes, strict=True)):
                runs[i].append(one_tick(root, tmp / f"c{i}", n, compile_each, code, traced=n % 2 == 0))
        for root in roots:
            log = subprocess.run(["git", "-C", str(root), "log", "--format=%s"], capture_output=True,
                                 text=True).stdout
            passed = sum(1 for line in log.splitlines() if line.startswith("memento: complete"))
            if passed != 2 * ticks + 2:
                raise SystemExit(f"expected {2 * ticks + 2} passed tasks, the log has {passed}:\n{log}")
    return [r[2:] for r in runs]  # the first pair pays for the memory store's creation and cold caches


def report(ticks: list[dict], where: bool) -> list:
    runs = [r for r in ticks if r["traced"]]  # counted
    timed = [r for r in ticks if not r["traced"]]
    counts = sorted(r["git"] for r in runs)
    median_git = statistics.median(counts)
    med = min(runs, key=lambda r: abs(r["git"] - median_git))
    print(f"git processes by subcommand (a tick with {med['git']}; git's own trace):")
    for cmd, n in med["kinds"].most_common():
        print(f"  {n:3d}  {cmd}")
    if med["others"]:
        print(f"  processes git started that are not git: {med['others']}")
    if where:
        print("git commands the tick started, by subcommand and caller:")
        by = collections.Counter((c["cmd"], c["where"]) for c in med["calls"])
        for (cmd, at), n in sorted(by.items(), key=lambda kv: (-kv[1], kv[0])):
            print(f"  {n:3d}  {cmd:14s} {at}")
    cpu = statistics.median(r["cpu_tick"] for r in timed)
    return [
        ("git processes per tick, median (min–max)", f"{median_git:g} ({counts[0]}–{counts[-1]})",
         f"≤ {BUDGET_GIT}", median_git <= BUDGET_GIT),
        ("  of them started by the tick itself", f"{statistics.median(len(r['calls']) for r in runs):g}", "", None),
        ("CPU of the tick and its children, median (s)",
         f"{statistics.median(r['cpu_total'] for r in timed):.3f}", "", None),
        ("  of which agent + verify (s)", f"{statistics.median(r['agent_verify'] for r in timed):.3f}", "", None),
        ("  of which the tick's Python process (s)", f"{statistics.median(r['python'] for r in timed):.3f}", "", None),
        ("CPU per tick excluding agent and verify, median (s)", f"{cpu:.3f}", f"≤ {BUDGET_CPU:.2f}",
         cpu <= BUDGET_CPU),
        ("  the same, of the counted ticks (git's trace on)",
         f"{statistics.median(r['cpu_tick'] for r in runs):.3f}", "", None),
    ]


def rows(ticks: int = 9, files: int = 20, where: bool = False) -> list:
    return report(measure(ticks, files)[0], where)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ticks", type=int, default=9)
    ap.add_argument("--files", type=int, default=20)
    ap.add_argument("--where", action="store_true", help="list the tick's git commands by caller")
    ap.add_argument("--compile-each", action="store_true",
                    help="keep PYTHONDONTWRITEBYTECODE: every tick compiles memento_core again")
    ap.add_argument("--against", action="append", default=[], metavar="DIR",
                    help="also tick with the memento_core of this checkout (e.g. main's), alternated")
    ap.add_argument("--json", metavar="FILE", help="also write every tick's figures here")
    ap.add_argument("--loose", type=int, default=0, metavar="N",
                    help="N loose objects in the store first: a project some N/15 ticks old")
    args = ap.parse_args()
    codes = (HERE.parent, *(Path(p).resolve() for p in args.against))
    runs = measure(args.ticks, args.files, args.compile_each, codes, args.loose)
    if args.json:
        Path(args.json).write_text(json.dumps(runs, default=dict, indent=1))
    print(header() + f"  load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    ok = True
    for code, got in zip(codes, runs, strict=True):
        if len(codes) > 1:
            print(f"\n== memento_core from {code}")
        ok = print_table(report(got, args.where)) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
