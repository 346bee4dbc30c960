"""Benchmark: what the sandbox adds to a verify of a real Python project's suite (SPEC §13, issue 36).

The project is the last commit of a replay fixture (tests/fixtures/replay/,
tests/core/scenarios/test_replay_cachetools.py): cachetools' whole suite as its CI runs it
(``THREADING_TESTS=1 pytest --cov=cachetools --cov-report term-missing``, the
command of its tox.ini, bytecode, pytest's cache and the coverage file written
by every run), or ``--project jinja``: jinja's whole suite as its CI runs it
(``pytest -v --tb=short``). It is cloned, `memento init` run on it with the
default memento.toml, a person's ``.env`` and ``.venv/`` added, and one task
planned whose verify is that command.

One verify is the tick's own (tick/verify.run_verify): the allowlisted environment,
a new session, the output to the tick log; confined, under the prefix the tick
builds for each attempt (confine.prepare: the work tree writable, Memento's and
the person's files read-only, scratch writable, the private home, the network
namespace and its proxy for ``network = "model"``). A first verify each way
writes the caches (as in a replay, where every verify finds what the last one
left); then each round builds the sandbox again and runs one verify of each
kind, unconfined first in even rounds and confined first in odd ones; the
medians are compared (budget: the sandbox adds ≤ 10 % to the unconfined
verify). Every verify must pass: a failed one is reported, never timed.
Beside it: ``true`` started the same two ways (the sandbox's start: bwrap, the
proxy and forwarder), the time confine.prepare takes (once per attempt, for
the agent and verify together), and the CPU time of the command's own
processes (POSIX ``times`` after it), which the load of a shared machine moves
far less than the wall time.

Run: python bench/sandbox_verify.py [--project cachetools|jinja] [--rounds 9] [--network model|all|none]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from table import header, print_table  # noqa: E402

from memento_core import agents, sandbox  # noqa: E402
from memento_core.config.load import load_config  # noqa: E402
from memento_core.plan.scan import parse_plan  # noqa: E402
from memento_core.tick import confine  # noqa: E402
from memento_core.tick.context import TickContext  # noqa: E402
from memento_core.tick.verify import run_verify  # noqa: E402
from memento_core.workspace import Workspace  # noqa: E402

BUDGET = 0.10  # what the sandbox may add, as a share of the unconfined verify
FIXTURES = HERE.parent / "tests" / "fixtures" / "replay"
IDENTITY = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@localhost",
            "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@localhost"}


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True,
                          env={**os.environ, **IDENTITY}).stdout


def verify_command(project: str, root: Path) -> str:
    if project == "jinja":
        return f"PYTHONPATH=src {sys.executable} -m pytest -v --tb=short"
    from tests.core.scenarios.test_replay_cachetools import (
        tox_command,  # the replay's own reading of tox.ini
    )

    return tox_command(root / ".git", "HEAD", [])


def make_project(tmp: Path, project: str, network: str = "model") -> Path:
    """The fixture's last commit, `memento init` (its memento.toml, ``[sandbox] network`` set to
    ``network``), a person's .env and .venv/, one task."""
    root = tmp / project
    _git(tmp, "clone", "-q", str(FIXTURES / f"{project}.bundle"), str(root))
    (root / ".git" / "info" / "exclude").write_text(".env\n")
    (root / ".env").write_text("GITHUB_TOKEN=a-persons-token\n")
    (root / ".venv" / "bin").mkdir(parents=True)
    (root / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (root / ".venv" / "bin" / "activate").write_text("# a person's virtual environment\n")
    subprocess.run([sys.executable, "-m", "memento_core.cli.main", "init", str(root)], check=True,
                   capture_output=True, env={**os.environ, **IDENTITY})
    toml = root / "memento.toml"
    toml.write_text(toml.read_text().replace('network = "model"', f'network = "{network}"', 1))
    # `times` (POSIX sh): the CPU the command's processes used, the same way confined or not,
    # whatever the load; the exit code stays the command's.
    verify = f"{verify_command(project, root)}; status=$?; times; exit $status"
    (root / "docs" / "MASTER_PLAN.md").write_text(
        f"# MASTER_PLAN: bench\n\n## Meta\n- tick_mode: auto\n\n## Phase 1: All\n\n"
        f"- [ ] `T-1` The project's own suite\n  - verify: `{verify}`\n  - context_files: [src/]\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "bench plan")
    return root


class Verifier:
    """One workspace's verify, run the tick's way, unconfined or under the attempt's sandbox."""

    def __init__(self, root: Path):
        self.ctx = TickContext(Workspace(root))
        self.ctx.config = load_config(self.ctx.ws.config_path)
        self.task = parse_plan(self.ctx.ws.plan_path).tasks[0]

    def wrap(self, network: str | None = None) -> tuple[tuple[str, ...], float]:
        """The attempt's sandbox as the tick builds it now (what earlier verifies left among the
        ignored files included), and the seconds that took; ``network``: another ``[sandbox]
        network`` than memento.toml's (for the start of `true` alone)."""
        config = self.ctx.config
        if network:
            self.ctx.config = dataclasses.replace(config, sandbox_network=network)
        try:
            t0 = time.perf_counter()
            wrap, why = confine.prepare(self.ctx, self.task, ())
        finally:
            self.ctx.config = config
        if why or not wrap:
            raise SystemExit(f"the sandbox could not be set up: {why or 'it runs unconfined here'}")
        return wrap, time.perf_counter() - t0

    def run(self, wrap: tuple[str, ...]) -> tuple[float, float]:
        """(wall seconds, CPU seconds of the command's processes) of one passing verify."""
        t0 = time.perf_counter()
        code, output, reason = run_verify(self.ctx, self.task, wrap)
        wall = time.perf_counter() - t0
        if code != 0:
            where = "confined" if wrap else "unconfined"
            said = [line for line in output.strip().splitlines() if not _TIMES.match(line)]
            last = (said or [""])[-1]
            raise VerifyFailed(f"verify failed {where}: {reason}: {last}")
        children = _TIMES.findall(output)[-1]  # `times`' second line: the shell's children
        return wall, sum(int(m) * 60 + float(s) for m, s in (children[:2], children[2:]))

    def start(self, wrap: tuple[str, ...]) -> float:
        """Wall seconds of `true` started the same way (the sandbox's fixed cost)."""
        t0 = time.perf_counter()
        result = agents.run_in_group("true", cwd=self.ctx.root, log_path=self.ctx.log_path, timeout=60,
                                     shell=True, wrap=wrap)
        assert result.ok, result
        return time.perf_counter() - t0


class VerifyFailed(Exception):
    pass


_TIMES = re.compile(r"^(\d+)m([\d.]+)s (\d+)m([\d.]+)s$", re.M)


def rows(project: str = "cachetools", rounds: int = 9, network: str = "model") -> list:
    binary = sandbox.bwrap_binary()
    why = sandbox.probe(binary) if binary else "bubblewrap (bwrap) is not installed"
    if why:
        return [(f"sandbox verify cost: not measured ({why})", "-", f"≤ {BUDGET:.0%}", None)]
    with tempfile.TemporaryDirectory(prefix="sandbox-verify-") as tmp:
        verifier = Verifier(make_project(Path(tmp), project, network))
        walls: dict[str, list[float]] = {"none": [], "bwrap": []}
        cpus: dict[str, list[float]] = {"none": [], "bwrap": []}
        starts: dict[str, list[float]] = {"none": [], "bwrap": [], "all": []}
        builds: list[float] = []
        try:
            verifier.run(())  # what a first verify writes (bytecode, caches), the next ones find
            verifier.run(verifier.wrap()[0])
            for n in range(rounds):
                wrap, built = verifier.wrap()  # per attempt, as the tick does
                builds.append(built)
                pair = (("none", ()), ("bwrap", wrap))
                for mode, prefix in pair if n % 2 == 0 else pair[::-1]:  # neither always first
                    wall, cpu = verifier.run(prefix)
                    walls[mode].append(wall)
                    cpus[mode].append(cpu)
                    starts[mode].append(verifier.start(prefix))
                if network != "all":  # the same sandbox with the host's network: no proxy, no forwarder
                    starts["all"].append(verifier.start(verifier.wrap("all")[0]))
        except VerifyFailed as exc:
            return [(f"{project}: what the sandbox adds to a verify: not measured", "-", f"≤ {BUDGET:.0%}", False),
                    (f"  {exc}"[:200], "", "", None)]
    bare, boxed = statistics.median(walls["none"]), statistics.median(walls["bwrap"])
    start_added = statistics.median(starts["bwrap"]) - statistics.median(starts["none"])
    added = (boxed - bare) / bare
    return [
        (f"{project}: one verify unconfined, median of {rounds} (s)", f"{bare:.2f}", "", None),
        (f"{project}: one verify confined, {len(wrap)} sandbox args, network {network} (s)", f"{boxed:.2f}", "",
         None),
        (f"{project}: what the sandbox adds to a verify", f"{added:+.1%}", f"≤ {BUDGET:.0%}", added <= BUDGET),
        (f"{project}: of which the sandbox's start (`true` the same way, ms)", f"{start_added * 1000:.0f}", "", None),
        *([(f"{project}: of which network = {network}'s proxy and forwarder (ms)",
            f"{(statistics.median(starts['bwrap']) - statistics.median(starts['all'])) * 1000:.0f}", "", None)]
          if starts["all"] else []),
        (f"{project}: building the sandbox, once per attempt (ms)", f"{statistics.median(builds) * 1000:.0f}",
         "", None),
        (f"{project}: CPU of the suite's processes unconfined / confined (s)",
         f"{statistics.median(cpus['none']):.2f} / {statistics.median(cpus['bwrap']):.2f}", "", None),
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--project", choices=("cachetools", "jinja"), default="cachetools")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--network", choices=("model", "all", "none"), default="model",
                    help="[sandbox] network (model, the default: its proxy and forwarder are part of the start)")
    args = ap.parse_args()
    print(header(), f" load average: {os.getloadavg()[0]:.1f}")
    return 0 if print_table(rows(args.project, args.rounds, args.network)) else 1


if __name__ == "__main__":
    raise SystemExit(main())
