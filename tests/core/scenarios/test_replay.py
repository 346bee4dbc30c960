"""pallets/jinja's history replayed under the default sandbox (issues 21 and 36): every upstream commit lands byte for byte.

tests/fixtures/replay/jinja.bundle (made by make_fixture.py there) holds 23
consecutive commits of jinja's main line (mid 2024 to mid 2025: docs/ with its
Sphinx index.rst, scripts/generate_identifier_pattern.py, the code, SVG and PNG
files) on top of the tree before them; tests/core/scenarios/replays.py replays it (a
person's ``.venv/`` and ``.env``, one `script` task per commit). Verify is
jinja's own test command as its CI runs it (tox: ``pytest -v --tb=short``, the
test files given as its posargs: those the commit changes and
tests/test_<module>.py for each module it changes, else tests/test_api.py),
with pytest's cache and bytecode on and its plugins loaded (jinja's
conftest.py imports trio: our dev extras install it). Before issue 21 the task
that updates docs/index.rst failed here: the whole docs/ folder was read-only.
Before the scratch rule of issue 36 it stopped at T-2 once pytest's cache was
on: the ``.pytest_cache/`` the first verify wrote was a person's read-only
folder, and jinja's ``filterwarnings = error`` made pytest's failed cache write
(``OSError: [Errno 30] Read-only file system: '.pytest_cache/v/cache/nodeids'``)
a failed run.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.core.sandbox.test_sandbox import needs_bwrap

from .replays import PYTHON, Project, git, replay, tree


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


def suite_for(upstream: Path, rev: str, changed: list[str]) -> str:
    """jinja's CI command (its tox env, tox.ini then pyproject.toml's [tool.tox]: ``pytest -v
    --tb=short {posargs}``; tox's ``--basetemp`` left out) on the library's own tests for a commit:
    the test files it changes and tests/test_<module>.py for each module of src/jinja2/ it changes
    (at most six), else tests/test_api.py."""
    files = set(tree(upstream, rev))
    picks = set()
    for rel in changed:
        path = Path(rel)
        if path.parts[0] == "tests" and path.name.startswith("test_") and path.suffix == ".py":
            picks.add(rel)
        elif rel.startswith("src/jinja2/") and path.suffix == ".py":
            picks.add(f"tests/test_{path.stem.lstrip('_')}.py")
    tests = sorted(picks & files)[:6] or ["tests/test_api.py"]
    return f"PYTHONPATH=src {PYTHON} -m pytest -v --tb=short {' '.join(tests)}"


JINJA = Project("jinja", 23, suite_for)


@needs_bwrap
@pytest.mark.skipif(not JINJA.bundle.is_file(), reason=f"{JINJA.bundle} is missing")
def test_upstream_commits_replay_byte_for_byte_under_the_default_sandbox(tmp_path):
    assert importlib.util.find_spec("trio"), "jinja's tests/conftest.py imports trio: pip install -e '.[dev]'"
    done = replay(tmp_path, JINJA)
    # The commit that updates the project's own docs/index.rst landed (the defect of issue 21).
    index_commits = [k for k, sha in done.ours.items()
                     if "docs/index.rst" in git(done.root, "show", "--name-only", "--format=", sha)]
    assert index_commits, "no upstream commit of the run changes docs/index.rst"
