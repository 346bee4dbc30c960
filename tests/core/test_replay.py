"""Real history replayed under the default sandbox (issue 21): every upstream commit lands byte for byte.

tests/fixtures/replay/jinja.bundle (made by make_fixture.py there) holds 23
consecutive commits of pallets/jinja's main line (mid 2024 to mid 2025: docs/
with its Sphinx index.rst, scripts/generate_identifier_pattern.py, the code,
SVG and PNG files) on top of the tree before them. The test clones the base,
runs `memento init` with its default memento.toml (the `script` preset, no
[sandbox] change: mode auto, bubblewrap here), adds a person's ignored
``.venv/`` and ``.env``, and plans one task per upstream commit: `do:` applies
that commit's patch, context_files are the files it changes, verify is the
library's own test suite (the test files the commit touches or that match the
modules it changes, else tests/test_api.py). Before issue 21 the task that
updates docs/index.rst failed here: the whole docs/ folder was read-only.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memento_core.plan import parse_plan
from memento_core.tick.__main__ import run_tick
from memento_core.workspace import own_file

from .test_sandbox import needs_bwrap

BUNDLE = Path(__file__).resolve().parents[1] / "fixtures" / "replay" / "jinja.bundle"
ENV = b"GITHUB_TOKEN=a-persons-token\n"
VENV = {"pyvenv.cfg": b"home = /usr/bin\ninclude-system-site-packages = false\n",
        "bin/activate": b"# a person's virtual environment\n"}

pytestmark = [needs_bwrap, pytest.mark.skipif(not BUNDLE.is_file(), reason=f"{BUNDLE} is missing")]


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


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


def suite_for(files: set[str], changed: list[str]) -> list[str]:
    """The library's own tests for a commit (``files``: the commit's tree): the test files it changes
    and tests/test_<module>.py for each module of src/jinja2/ it changes (at most six), else
    tests/test_api.py."""
    picks = set()
    for rel in changed:
        path = Path(rel)
        if path.parts[0] == "tests" and path.name.startswith("test_") and path.suffix == ".py":
            picks.add(rel)
        elif rel.startswith("src/jinja2/") and path.suffix == ".py":
            picks.add(f"tests/test_{path.stem.lstrip('_')}.py")
    return sorted(picks & files)[:6] or ["tests/test_api.py"]


def plan(upstream: Path, revs: list[str]) -> str:
    """One task per upstream commit: `do:` applies its patch from .replay/ (a person's ignored folder)."""
    tasks = []
    for k in range(1, len(revs)):
        changed = [p for p in git(upstream, "diff", "--name-only", "-z", "--no-renames", revs[k - 1],
                                  revs[k]).split("\0") if p]
        subject = git(upstream, "log", "-1", "--format=%s", revs[k]).split(": ", 1)[1].replace("`", "'")
        verify = (f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 PYTHONPATH=src {sys.executable} -m pytest -q -x "
                  f"-p no:cacheprovider {' '.join(suite_for(set(tree(upstream, revs[k])), changed))}")
        tasks.append(f"- [ ] `T-{k}` upstream {revs[k][:12]}: {subject}\n"
                     f"  - verify: `{verify}`\n"
                     f"  - context_files: [{', '.join(changed)}]\n"
                     f"  - do: `git apply .replay/{k}.patch`\n")
    return f"""# MASTER_PLAN: jinja replay

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


def test_upstream_commits_replay_byte_for_byte_under_the_default_sandbox(tmp_path):
    upstream = tmp_path / "upstream.git"
    git(tmp_path, "clone", "-q", "--bare", str(BUNDLE), str(upstream))
    revs = git(upstream, "rev-list", "--reverse", "main").split()
    assert len(revs) == 24
    git(upstream, "branch", "base", revs[0])
    root = tmp_path / "jinja"
    git(tmp_path, "clone", "-q", "-b", "base", "--single-branch", str(upstream), str(root))
    git(root, "branch", "-m", "main")
    git(root, "remote", "remove", "origin")
    # A person's ignored files: .venv/ (jinja's .gitignore lists .venv*/ until T-15, the move to uv,
    # drops it: from then on the .venv is untracked, still the person's), .env and the patches
    # (ignored through .git/info/exclude; read-only in the sandbox, which can read them there).
    (root / ".git" / "info" / "exclude").write_text(".env\n.replay/\n")
    for rel, data in VENV.items():
        (root / ".venv" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / ".venv" / rel).write_bytes(data)
    (root / ".env").write_bytes(ENV)
    patches = root / ".replay"
    patches.mkdir()
    for k in range(1, len(revs)):
        diff = subprocess.run(["git", "--git-dir", str(upstream), "diff", "--binary", "--full-index", revs[k - 1],
                               revs[k]], capture_output=True, check=True).stdout
        (patches / f"{k}.patch").write_bytes(diff)
    subprocess.run([sys.executable, "-m", "memento_core.cli.main", "init", str(root)], check=True,
                   capture_output=True)
    gitignore_added = (root / ".gitignore").read_bytes()
    (root / "docs" / "MASTER_PLAN.md").write_text(plan(upstream, revs))
    git(root, "add", "-A")
    git(root, "commit", "-qm", "the replay's plan")
    persons = {p: p.read_bytes() for p in [root / ".env", *(root / ".venv").rglob("*")] if p.is_file()}

    for _ in range(len(revs)):
        outcome = run_tick(root)
        assert outcome.exit_code == 0, outcome.message
        tasks = parse_plan(root / "docs" / "MASTER_PLAN.md").tasks
        if all(t.status in ("x", "!") for t in tasks):
            break
    assert [t.status for t in tasks] == ["x"] * (len(revs) - 1), (
        root / "docs" / "TICK_STATUS.md").read_text()[-3000:]

    logs = "".join(p.read_text(errors="replace") for p in (root / "logs").glob("tick_*.log"))
    assert logs.count("[memento] sandbox: bwrap (") == len(revs) - 1 and "unconfined" not in logs  # confined

    ours = {}
    for line in git(root, "log", "--format=%H %s", "main").splitlines():
        sha, subject = line.split(" ", 1)
        if subject.startswith("memento: complete T-"):
            ours[int(subject.split()[2].removeprefix("T-"))] = sha
    assert sorted(ours) == list(range(1, len(revs)))
    # `memento init` appended its lines to the project's .gitignore; upstream's own edits land above them.
    base_ignore = git(upstream, "show", f"{revs[0]}:.gitignore").encode()
    assert gitignore_added.startswith(base_ignore)
    mementos_lines = gitignore_added[len(base_ignore):]
    for k, sha in ours.items():
        mine = tree(root, sha)
        theirs = tree(upstream, revs[k])
        assert git(root, "show", f"{sha}:.gitignore").encode() == (
            git(upstream, "show", f"{revs[k]}:.gitignore").encode() + mementos_lines), f"T-{k}"
        mine.pop(".gitignore"), theirs.pop(".gitignore")
        project = {p: v for p, v in mine.items() if not own_file(p)}
        assert project == theirs, f"T-{k}: {sorted(set(project.items()) ^ set(theirs.items()))[:6]}"
    # The commit that updates the project's own docs/index.rst landed (the defect of issue 21).
    index_commits = [k for k in ours if "docs/index.rst" in git(root, "show", "--name-only", "--format=", ours[k])]
    assert index_commits, "no upstream commit of the run changes docs/index.rst"
    assert {p: p.read_bytes() for p in [root / ".env", *(root / ".venv").rglob("*")] if p.is_file()} == persons
