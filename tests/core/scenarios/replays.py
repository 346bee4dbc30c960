"""Real upstream history replayed under the default sandbox (issues 21 and 36): what the replays share.

A :class:`Project` names a bundle of tests/fixtures/replay/ (made by
make_fixture.py there: a base tree, then one commit per upstream commit, the
upstream trees byte for byte), the project's own test command as its CI runs it
(``verify``: plain ``pytest`` or ``npm test``, caches and bytecode on, no
switch that turns a tool's cache off) and what a person has in the work tree
before the run (``prepare``: a ``.venv/``, ``node_modules/`` installed by
``npm ci``). :func:`replay` clones the base, runs `memento init` with its
default memento.toml (the `script` preset, ``[sandbox] mode = "auto"``: bubblewrap
here), plans one task per upstream commit (`do:` applies that commit's patch,
``context_files`` are the files it changes, verify is the project's tests),
ticks until the plan is done and checks what must hold for every project:

* every upstream commit landed as ``memento: complete T-k``, the project's tree
  byte for byte the upstream one (Memento's own files aside; the lines `memento
  init` appended to the project's ``.gitignore`` stay below upstream's own);
* the person's files (``.env``, ``.venv/``, ``node_modules/``) byte for byte as
  before, what the project's tools regenerate in them (``Project.scratch``: a
  ``node_modules/.cache/`` at any depth: AVA's, and the ``esm`` loader's next
  to its own package) aside;
* every attempt ran confined: the tick log says ``sandbox: bwrap`` once per task
  and never ``unconfined``.

``MEMENTO_REPLAY_SANDBOX=none`` runs the same replay with ``[sandbox] mode =
"none"`` (for a person comparing the two by hand; the confinement check is then
skipped and says so in the test's output).
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from memento_core.plan.scan import parse_plan
from memento_core.tick.__main__ import run_tick
from memento_core.workspace import own_file

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "replay"
PYTHON = sys.executable
ENV = b"GITHUB_TOKEN=a-persons-token\n"
VENV = {"pyvenv.cfg": b"home = /usr/bin\ninclude-system-site-packages = false\n",
        "bin/activate": b"# a person's virtual environment\n"}
SANDBOX = os.environ.get("MEMENTO_REPLAY_SANDBOX", "")  # "none": the same replay unconfined


def git(root: Path, *args: str, **kw) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True, **kw).stdout


def tree(root: Path, rev: str) -> dict[str, str]:
    """path -> "mode sha" of every file in ``rev``."""
    out = {}
    for line in git(root, "ls-tree", "-r", "-z", "--full-tree", rev).split("\0"):
        if line:
            meta, path = line.split("\t", 1)
            mode, _, sha = meta.split()
            out[path] = f"{mode} {sha}"
    return out


def changed_files(upstream: Path, old: str, new: str) -> list[str]:
    return [p for p in git(upstream, "diff", "--name-only", "-z", "--no-renames", old, new).split("\0") if p]


def a_venv(root: Path) -> None:
    """A person's virtual environment (a stand-in: two files; the tests run on the interpreter
    running this suite)."""
    for rel, data in VENV.items():
        (root / ".venv" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / ".venv" / rel).write_bytes(data)


@dataclass(frozen=True)
class Project:
    """One replayed project.

    ``verify(upstream, rev, changed)``: the task's verify command for the upstream commit ``rev``
    (``upstream``: the bare clone holding it, ``changed``: the paths it changes). ``persons``: the person's ignored
    files and folders (besides ``.env``), compared byte for byte after the run; ``scratch``: the
    paths under them a project's tools regenerate (regular expressions on the path; not the
    person's). ``prepare(root)`` makes them, before `memento init`."""

    name: str
    count: int
    verify: Callable[[Path, str, list[str]], str]
    persons: tuple[str, ...] = (".venv",)
    scratch: tuple[str, ...] = ()
    prepare: Callable[[Path], None] = a_venv

    @property
    def bundle(self) -> Path:
        return FIXTURES / f"{self.name}.bundle"


@dataclass
class Replayed:
    """What a replay left, for a project's own checks."""

    root: Path
    upstream: Path
    revs: list[str]
    ours: dict[int, str] = field(default_factory=dict)  # k -> the `memento: complete T-k` commit
    seconds: float = 0.0


def plan(project: Project, upstream: Path, revs: list[str]) -> str:
    """One task per upstream commit: `do:` applies its patch from .replay/ (a person's ignored folder)."""
    tasks = []
    for k in range(1, len(revs)):
        changed = changed_files(upstream, revs[k - 1], revs[k])
        subject = git(upstream, "log", "-1", "--format=%s", revs[k]).split(": ", 1)[1].replace("`", "'")
        verify = project.verify(upstream, revs[k], changed)
        tasks.append(f"- [ ] `T-{k}` upstream {revs[k][:12]}: {subject}\n"
                     f"  - verify: `{verify}`\n"
                     f"  - context_files: [{', '.join(changed)}]\n"
                     f"  - do: `git apply .replay/{k}.patch`\n")
    return f"""# MASTER_PLAN: {project.name} replay

## Meta
- tick_mode: auto
- max_retries: 1
- max_tasks_per_tick: {len(revs)}
- max_diff_lines: 100000
- circuit_breaker_threshold: 3
- total_ticks: 0

## Phase 1: Upstream
<!-- depends: none -->

""" + "\n".join(tasks)


def prints(root: Path, rels: Iterable[str], scratch: Iterable[str] = ()) -> dict[str, str]:
    """rel -> what a person's file or link is (its mode and the sha256 of its bytes, or the link's
    target), for every file below ``rels``; the paths ``scratch`` matches left out."""
    skip = [re.compile(s) for s in scratch]
    out = {}
    for rel in rels:
        top = root / rel
        paths = [top] if not top.is_dir() or top.is_symlink() else sorted(top.rglob("*"))
        for path in paths:
            name = path.relative_to(root).as_posix()
            if any(s.search(name) for s in skip):
                continue
            if path.is_symlink():
                out[name] = "-> " + os.readlink(path)
            elif path.is_file():
                out[name] = f"{path.stat().st_mode:o} {hashlib.sha256(path.read_bytes()).hexdigest()}"
    return out


def why(root: Path, outcome) -> str:
    """The tick's message and the status log's last entry (its reason, verify's output)."""
    status = (root / "docs" / "TICK_STATUS.md").read_text(errors="replace")
    last = status[status.rfind("\n## ["):]
    return f"{outcome.message}\n{last[:1500]}{' …' if len(last) > 1500 else ''}"


def replay(tmp_path: Path, project: Project) -> Replayed:
    """Replay ``project``'s bundle under the default sandbox and check what must hold for every
    project (the module's docstring)."""
    started = time.monotonic()
    upstream = tmp_path / "upstream.git"
    git(tmp_path, "clone", "-q", "--bare", str(project.bundle), str(upstream))
    revs = git(upstream, "rev-list", "--reverse", "main").split()
    assert len(revs) == project.count + 1
    git(upstream, "branch", "base", revs[0])
    root = tmp_path / project.name
    git(tmp_path, "clone", "-q", "-b", "base", "--single-branch", str(upstream), str(root))
    git(root, "branch", "-m", "main")
    git(root, "remote", "remove", "origin")
    # A person's ignored files: .env and the patches through .git/info/exclude (read-only in the
    # sandbox, which can read them there), the project's own (prepare) through its .gitignore or
    # as untracked files (jinja's .gitignore drops .venv*/ at T-15: the .venv stays the person's).
    (root / ".git" / "info" / "exclude").write_text(".env\n.replay/\n")
    (root / ".env").write_bytes(ENV)
    project.prepare(root)
    patches = root / ".replay"
    patches.mkdir()
    for k in range(1, len(revs)):
        diff = subprocess.run(["git", "--git-dir", str(upstream), "diff", "--binary", "--full-index", revs[k - 1],
                               revs[k]], capture_output=True, check=True).stdout
        (patches / f"{k}.patch").write_bytes(diff)
    subprocess.run([sys.executable, "-m", "memento_core.cli.main", "init", str(root)], check=True,
                   capture_output=True)
    gitignore_added = (root / ".gitignore").read_bytes()
    if SANDBOX:
        toml = root / "memento.toml"
        toml.write_text(toml.read_text().replace('mode = "auto"', f'mode = "{SANDBOX}"', 1))
    (root / "docs" / "MASTER_PLAN.md").write_text(plan(project, upstream, revs))
    git(root, "add", "-A")
    # Without the project's own hooks (a person's `npm ci` may have installed husky's commit-msg check).
    git(root, "-c", "core.hooksPath=/dev/null", "commit", "-qm", "the replay's plan")
    persons = (".env", *project.persons)
    before = prints(root, persons, project.scratch)

    for _ in range(len(revs)):
        outcome = run_tick(root)
        tasks = parse_plan(root / "docs" / "MASTER_PLAN.md").tasks
        if outcome.exit_code != 0 or all(t.status in ("x", "!") for t in tasks):
            break
    assert outcome.exit_code == 0 and [t.status for t in tasks] == ["x"] * (len(revs) - 1), why(root, outcome)

    logs = "".join(p.read_text(errors="replace") for p in (root / "logs").glob("tick_*.log"))
    if SANDBOX != "none":
        assert logs.count("[memento] sandbox: bwrap (") == len(revs) - 1 and "unconfined" not in logs  # confined
    else:
        print(f"[replay] {project.name}: MEMENTO_REPLAY_SANDBOX=none, the confinement was not checked")

    done = Replayed(root, upstream, revs)
    for line in git(root, "log", "--format=%H %s", "main").splitlines():
        sha, subject = line.split(" ", 1)
        if subject.startswith("memento: complete T-"):
            done.ours[int(subject.split()[2].removeprefix("T-"))] = sha
    assert sorted(done.ours) == list(range(1, len(revs)))
    # `memento init` appended its lines to the project's .gitignore; upstream's own edits land above them.
    base_ignore = git(upstream, "show", f"{revs[0]}:.gitignore").encode()
    assert gitignore_added.startswith(base_ignore)
    mementos_lines = gitignore_added[len(base_ignore):]
    for k, sha in done.ours.items():
        mine = tree(root, sha)
        theirs = tree(upstream, revs[k])
        assert git(root, "show", f"{sha}:.gitignore").encode() == (
            git(upstream, "show", f"{revs[k]}:.gitignore").encode() + mementos_lines), f"T-{k}"
        mine.pop(".gitignore"), theirs.pop(".gitignore")
        project_files = {p: v for p, v in mine.items() if not own_file(p)}
        assert project_files == theirs, f"T-{k}: {sorted(set(project_files.items()) ^ set(theirs.items()))[:6]}"
    after = prints(root, persons, project.scratch)
    assert after == before, sorted(set(after.items()) ^ set(before.items()))[:6]
    done.seconds = time.monotonic() - started
    print(f"[replay] {project.name}: {len(revs) - 1} upstream commits in {done.seconds:.0f} s")
    return done
