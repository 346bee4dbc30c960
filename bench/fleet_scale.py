"""Benchmark: a fleet of hosts on one git remote (SPEC §12 "Across machines", issue 23).

1, 4 and 16 simulated hosts (clones of one bare remote on this machine, each
ticking in its own process, one after the other until nothing is left to pick, a
second apart after a tick that attempted nothing; the remote's gc after a push is
off, as it would run on the remote's own machine) work one `parallel: true` phase of 64 tasks whose agent (the `command` preset)
sleeps 2 s and writes its file. Printed per fleet size: tasks per minute (64 over
the wall time from the start until the last host stopped), compare-and-swap
retries per task (pushes a lease or fast-forward check refused, from the hosts'
cron.log), claims lost (CLAIM LOST entries on the remote) and tasks done twice
(more than one `memento: complete` commit on the remote); both must be 0, and
every task must be `[x]` on the remote. The clock starts once every host's process has
started and says so (a host's cron is already running; the simulation's sixteen interpreters
starting at once are not the fleet's time); the ticks themselves, imports included, are.
Also printed: when the first, the median and the last host stopped, and the fewest and most
tasks one host did (the host of each completed task's last claim): the fleet's tail; the
seconds each host spent in the back-off pauses after lost races (from the same log), the CPU-seconds (user + system)
the hosts' processes and everything they started spent per task, and the wall time
that CPU alone needs on this machine's cores (CPU / cores): a fleet cannot finish
sooner on one machine, whatever its protocol; and how long one `git --version` took just
before the fleet (this machine's speed drifts by a third from hour to hour). Budgets: 16 hosts reach at least 8x the
task rate of 1 host; at most 1 retry per task.

With --windows, git traces its commands (GIT_TRACE2_EVENT, one file per host) and the bench
prints the median window from a host's fetch to the end of the push after it: a push loses
its race when another lands inside that window.

With --rounds N, N fleets of each size run one after another and the table shows the median one
(by tasks per minute); claims lost and tasks done twice are summed over all of them.

Run: python bench/fleet_scale.py [--hosts 1,4,16] [--tasks 64] [--seconds 2] [--rounds 1] [--windows]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from parallel_workers import ENV, _git  # noqa: E402
from table import header, print_table  # noqa: E402

CORES = os.cpu_count() or 1
# A host whose tick found nothing to pick (the others hold the tasks left) ticks again after this
# pause, as one whose cron ran it every second would. Hosts are machines of their own: ticking
# again at once would only take the CPU the working hosts share with it on this one.
IDLE_PAUSE = 1.0
# The agent: sleeps, then writes out/<n>.txt. A shell one by default: on real hosts the agent runs
# on the host's own CPU, and a Python one's interpreter start (0.07 CPU-s here, with this machine's
# site hooks) taken from the two cores the simulated hosts share is a cost of the simulation, not
# of the fleet's protocol; --agent python runs the Python one the earlier rounds used.
AGENTS = {
    "shell": "sh -c 'sleep {seconds}; mkdir -p out; echo done > out/${{MEMENTO_TASK_ID#T-}}.txt'",
    "python": (sys.executable + " -c \"import os, time, sys; time.sleep(float(sys.argv[1])); "
               "n = os.environ['MEMENTO_TASK_ID'][2:]; os.makedirs('out', exist_ok=True); "
               "open(f'out/{{n}}.txt', 'w').write('done\\\\n')\" {seconds}"),
}


def with_bytecode(cache: Path) -> None:
    """The hosts' Python reads memento's modules compiled, as an installed package's are: an
    environment with PYTHONDONTWRITEBYTECODE (this machine's has it) would make every tick
    process compile all of them from source again, about 0.12 CPU-s each, which a host that
    installed Memento never pays. The compiled files go to a folder of the bench's own
    (PYTHONPYCACHEPREFIX), written once before the fleets start; the source tree is untouched."""
    import memento_core

    ENV.pop("PYTHONDONTWRITEBYTECODE", None)
    ENV["PYTHONPYCACHEPREFIX"] = str(cache)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(memento_core.__file__).parent)],
                   env=ENV, check=True)


def make_fleet(base: Path, n_hosts: int, n_tasks: int, seconds: float, agent: str = "shell") -> tuple[Path, list[Path]]:
    """A bare remote seeded with the plan and config, and one clone per host."""
    from memento_core.scaffold import init_workspace

    bare, seed = base / "remote.git", base / "seed"
    _git(base, "init", "-q", "--bare", "-b", "main", str(bare))
    # The remote's own housekeeping after each push (gc --auto) runs on the remote's machine,
    # not on the hosts': here it would share their two cores.
    _git(bare, "config", "receive.autogc", "false")
    _git(bare, "config", "core.logAllRefUpdates", "always")  # the remote's reflog: when each push landed
    init_workspace(seed, project="fleet", commit=False)
    tasks = "\n".join(f"- [ ] `T-{i}` Task {i}\n  - verify: `test -f out/{i}.txt`\n"
                      f"  - context_files: [out/{i}.txt]\n" for i in range(1, n_tasks + 1))
    (seed / "docs" / "MASTER_PLAN.md").write_text(
        f"# MASTER_PLAN: fleet bench\n\n## Meta\n- tick_mode: auto\n- max_retries: 3\n"
        f"- max_tasks_per_tick: {n_tasks}\n- stale_lock_timeout: 15min\n- circuit_breaker_threshold: 1000\n"
        f"- total_ticks: 0\n\n## Phase 1: All at once\n<!-- depends: none -->\n<!-- parallel: true -->\n\n{tasks}")
    agent = AGENTS[agent].format(seconds=seconds)
    (seed / "memento.toml").write_text(f"[agent]\npreset = \"command\"\ncommand = '''{agent}'''\n"
                                       "timeout = \"120s\"\n[verify]\ntimeout = \"60s\"\n[sandbox]\nmode = \"none\"\n"
                                       "[workers]\nremote = \"origin\"\n")
    _git(seed, "add", "-A")
    _git(seed, "commit", "-qm", "fleet bench")
    _git(seed, "remote", "add", "origin", str(bare))
    _git(seed, "push", "-q", "origin", "main")
    clones = []
    for i in range(n_hosts):
        clone = base / f"host{i + 1}"
        _git(base, "clone", "-q", str(bare), str(clone))
        clones.append(clone)
    return bare, clones


def host_loop(root: Path, name: str, limit: float, trace: str = "") -> None:
    """One host: ticks one after the other while its plan has a `[ ]` task or a result of its
    own waits to be pushed (.memento/fleet_pending.json), IDLE_PAUSE after a tick that attempted
    nothing. ``trace``: git's trace2 events go there. It says "ready" once started and waits for
    "go" on its standard input: the simulation's own start (an interpreter for each host, which a
    host's cron already has) is not the fleet's time."""
    from memento_core.plan.scan import parse_plan

    env = {**ENV, "MEMENTO_HOST": name, **({"GIT_TRACE2_EVENT": trace} if trace else {})}
    print("ready", flush=True)
    sys.stdin.readline()
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        out = subprocess.run([sys.executable, "-m", "memento_core.tick", "--project", str(root)], env=env,
                             capture_output=True).stdout
        if b"tick #" not in out:  # it attempted nothing: the others hold what is left
            time.sleep(IDLE_PAUSE)
        left = [t for t in parse_plan(root / "docs" / "MASTER_PLAN.md").tasks if t.status == " "]
        if not left and not (root / ".memento" / "fleet_pending.json").exists():
            return


def _subcommand(argv: list[str]) -> str:
    """The git command of an argv as the tick runs it (``git -c k=v … -C root push …``)."""
    args = iter(argv[1:])
    for arg in args:
        if arg in ("-c", "-C"):
            next(args, None)
        elif not arg.startswith("-"):
            return arg
    return ""


def push_windows(trace: Path) -> list[float]:
    """From one host's GIT_TRACE2_EVENT file, each push's window in seconds: from the start of
    the fetch before it to the end of the push (git commands the tick started, not their
    children: a child's sid has a '/')."""
    from datetime import datetime

    started, runs = {}, []
    for line in trace.read_text(errors="replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        sid = event.get("sid", "")
        if "/" in sid or "time" not in event:
            continue
        at = datetime.fromisoformat(event["time"].replace("Z", "+00:00")).timestamp()
        if event.get("event") == "start":
            started[sid] = (at, _subcommand(event.get("argv", [])))
        elif event.get("event") == "exit" and sid in started:
            begun, command = started.pop(sid)
            runs.append((begun, at, command))
    windows, fetched = [], None
    for begun, ended, command in sorted(runs):
        if command == "fetch":
            fetched = begun
        elif command == "push" and fetched is not None:
            windows.append(ended - fetched)
            fetched = None
    return windows


def machine_speed() -> float:
    """Milliseconds one start of ``git --version`` takes here now, the median of 40: the same
    machine is slower or faster from one hour to the next (its neighbours), and a fleet on two
    cores pays each of its thousands of git starts. Printed with each fleet to read them by."""
    times = []
    for _ in range(40):
        started = time.perf_counter()
        subprocess.run(["git", "--version"], capture_output=True, check=True)
        times.append(time.perf_counter() - started)
    return sorted(times)[len(times) // 2] * 1000


def one_fleet(base: Path, n_hosts: int, n_tasks: int, seconds: float, limit: float, trace: bool = False,
              agent: str = "shell") -> dict:
    from memento_core.plan.scan import parse_plan_text

    speed = machine_speed()
    bare, clones = make_fleet(base, n_hosts, n_tasks, seconds, agent)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    traces = [base / f"trace-h{i + 1}.json" if trace else None for i in range(n_hosts)]
    procs = [subprocess.Popen([sys.executable, __file__, "--host-loop", str(c), f"h{i + 1}", str(limit),
                               str(traces[i] or "")], env=ENV, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
             for i, c in enumerate(clones)]
    for p in procs:  # every host started (its interpreter, its imports): then the clock starts
        p.stdout.readline()
    started = time.monotonic()
    for p in procs:
        p.stdin.write(b"go\n")
        p.stdin.close()
    stopped: dict[int, float] = {}  # host -> seconds from the start until it stopped: the fleet's tail
    while len(stopped) < len(procs):
        for i, p in enumerate(procs):
            if i not in stopped and p.poll() is not None:
                stopped[i] = time.monotonic() - started
        time.sleep(0.05)
    ends = sorted(stopped.values())
    wall = ends[-1]
    after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the hosts, their ticks, agents and git
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    plan = parse_plan_text(_git(bare, "show", "main:docs/MASTER_PLAN.md"))
    subjects = _git(bare, "log", "--format=%s", "main").splitlines()
    done = {}
    for s in subjects:
        m = re.match(r"memento: complete (T-\d+) ", s)
        if m:
            done[m.group(1)] = done.get(m.group(1), 0) + 1
    logs = [(c / "logs" / "cron.log").read_text() for c in clones if (c / "logs" / "cron.log").exists()]
    races = sum(log.count("lost a race") for log in logs)
    paused = sum(float(m) for log in logs for m in re.findall(r"lost a race.*after a pause of ([0-9.]+)s", log))
    status = _git(bare, "show", "main:docs/TICK_STATUS.md")
    claimed = {}  # each task's last claim on the remote (claims of two name theirs on body lines): its host
    for line in reversed(_git(bare, "log", "--format=%B", "main").splitlines()):
        m = re.match(r"memento: claim (T-\d+) on (\S+)$", line)
        if m:
            claimed[m.group(1)] = m.group(2)
    counts = [sum(1 for t, h in claimed.items() if h == f"h{i + 1}" and t in done) for i in range(n_hosts)]
    windows = sorted(w for t in traces if t is not None and t.exists() for w in push_windows(t))
    return {"first_stop": ends[0], "median_stop": ends[len(ends) // 2], "fewest": min(counts), "most": max(counts),
            "window": windows[len(windows) // 2] if windows else None, "speed": speed, "hosts": n_hosts, "wall": wall, "rate": n_tasks / wall * 60, "retries": races / n_tasks,
            "cpu": cpu / n_tasks, "cpu_floor": cpu / CORES, "paused": paused / n_hosts,
            "lost": status.count("CLAIM LOST"), "twice": sum(1 for v in done.values() if v > 1),
            "all_done": all(t.status == "x" for t in plan.tasks) and len(done) == n_tasks}


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--host-loop":
        host_loop(Path(sys.argv[2]), sys.argv[3], float(sys.argv[4]), sys.argv[5])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", default="1,4,16")
    ap.add_argument("--tasks", type=int, default=64)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--limit", type=float, default=1800.0, help="seconds a fleet may take at most")
    ap.add_argument("--rounds", type=int, default=1,
                    help="fleets of each size, one after another; the table shows the median one (by tasks per minute)")
    ap.add_argument("--agent", choices=sorted(AGENTS), default="shell",
                    help="the agent every task runs: a shell sleep (default) or a Python one")
    ap.add_argument("--windows", action="store_true",
                    help="trace git (GIT_TRACE2_EVENT) to print the median window from a fetch to the end of its push")
    args = ap.parse_args()
    sizes = [int(x) for x in args.hosts.split(",")]
    print(header(), f" load average at the start: {os.getloadavg()[0]:.1f}",
          f" PYTHONDONTWRITEBYTECODE in the environment: {'yes' if os.environ.get('PYTHONDONTWRITEBYTECODE') else 'no'}"
          " (the hosts read compiled modules either way)")
    results = []
    keep = os.environ.get("BENCH_KEEP")  # a folder: the fleets are left there to read
    with tempfile.TemporaryDirectory(prefix="memento-fleet-bench-") as scratch:
        tmp = keep or scratch
        with_bytecode(Path(scratch) / "pycache")
        for n in sizes:
            runs = []
            for k in range(args.rounds):
                base = Path(tmp) / (f"fleet{n}" + (f"-{k + 1}" if args.rounds > 1 else ""))
                base.mkdir()
                runs.append(one_fleet(base, n, args.tasks, args.seconds, args.limit, args.windows, args.agent))
                r = runs[-1]
                print(f"  {n} host(s): {r['wall']:.1f} s, {r['rate']:.1f} tasks/min, {r['retries']:.2f} retries/task, "
                      f"{r['cpu']:.2f} CPU-s/task (CPU alone needs {r['cpu_floor']:.1f} s), "
                      f"{r['paused']:.1f} s of back-off per host, "
                      + (f"median window {r['window']:.2f} s, " if r["window"] is not None else "") +
                      f"hosts stopped at {r['first_stop']:.1f} / {r['median_stop']:.1f} / {r['wall']:.1f} s "
                      f"(first / median / last), {r['fewest']} to {r['most']} tasks a host, "
                      f"claims lost {r['lost']}, done twice {r['twice']}, all done {r['all_done']}, "
                      f"a git start {r['speed']:.2f} ms before it", flush=True)
            ranked = sorted(runs, key=lambda r: r["rate"])
            # Every round must be sound; the figures are the median round's.
            results.append({**ranked[len(ranked) // 2], "lost": sum(r["lost"] for r in runs),
                            "twice": sum(r["twice"] for r in runs), "all_done": all(r["all_done"] for r in runs)})
            if args.rounds > 1:
                print(f"  {n} host(s), {args.rounds} rounds: {ranked[0]['rate']:.1f} to {ranked[-1]['rate']:.1f} "
                      f"tasks/min, {min(r['retries'] for r in runs):.2f} to {max(r['retries'] for r in runs):.2f} "
                      "retries/task", flush=True)
    rows = []
    one = results[0]["rate"] if sizes and sizes[0] == 1 else None
    for r in results:
        n = r["hosts"]
        rows.append((f"{n} host(s): tasks per minute" + (f" ({r['rate'] / one:.1f}x of 1 host)" if one else ""),
                     f"{r['rate']:.1f}", ">= 8x" if n == 16 and one else "",
                     (r["rate"] >= 8 * one) if n == 16 and one else None))
        rows.append((f"{n} host(s): CAS retries per task", f"{r['retries']:.2f}", "<= 1", r["retries"] <= 1))
        rows.append((f"{n} host(s): CPU-s per task (its wall on {CORES} cores)",
                     f"{r['cpu']:.2f} ({r['cpu_floor']:.1f} s)", "", None))
        rows.append((f"{n} host(s): back-off pauses per host, s", f"{r['paused']:.1f}", "", None))
        if r["window"] is not None:
            rows.append((f"{n} host(s): median window, fetch to end of push, s", f"{r['window']:.2f}", "", None))
        rows.append((f"{n} host(s): claims lost / tasks done twice", f"{r['lost']} / {r['twice']}", "0 / 0",
                     r["lost"] == 0 and r["twice"] == 0 and r["all_done"]))
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    return 0 if print_table(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
