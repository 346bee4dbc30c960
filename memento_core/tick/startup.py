"""Files that change how Python or the test runner starts (SPEC §13 "Either way"): pure, names in, names out.

verify runs the project's own tests, and a few files decide what those tests are before
a line of them runs: ``sitecustomize.py`` and ``usercustomize.py`` (Python's site hook
runs them at every start where their folder is on the path: a src layout's editable
install, a ``PYTHONPATH=src``), a ``*.pth`` (run by site in a site folder), a module or
package named like the runner (``src/pytest.py`` is what ``python -m pytest`` runs when
src/ comes first on the path), and a ``conftest.py`` (pytest loads it, and its hooks see
every test). Added inside a folder the task's ``context_files`` name, one of them made
the verify of a task whose code was still broken pass. Memento's own packages count too: a
``memento_core/`` in the project's folder is what ``python -m memento_core.tick`` started there
by hand would run. So a task may add one only when
its context_files name that exact file (a folder, a glob is not enough), and guards.check
fails the attempt otherwise, naming the path; the rollback removes it like any created
file. A change to such a file that was there already is the task's business (a test
rewrite has guards of its own: ``guard_files``, `memento lint`'s warning).
"""

from __future__ import annotations

import re
import shlex

# Runners and what they import first, whatever the verify command says; then the modules its
# words name (:func:`runner_modules`). Python's own startup hooks are modules too (a package
# ``sitecustomize/`` works as well as ``sitecustomize.py``).
COMMON = frozenset({"sitecustomize", "usercustomize", "site", "pytest", "_pytest", "py", "pluggy", "iniconfig",
                    "unittest", "doctest", "nose", "nose2", "tox", "nox", "coverage", "trial", "twisted", "runpy"})
# Memento's own packages: `python -m memento_core.tick` (or `-m memento_tui.app`) run by hand in the
# project's folder imports one left there, as the person (what Memento starts itself runs with -P:
# cron.TICK_ARGS).
MEMENTO = frozenset({"memento_core", "memento_tui"})
# ... and, in the project's root, the modules those runs import first, in any of a module's files
# (``.py``, ``.pyw``, an extension's ``.so``): without an __init__ a folder of that name is a
# namespace package, which an editable install (whose finder comes last) yields to.
MEMENTO_ENTRIES = frozenset(f"{package}/{rest}" for package, rests in (
    ("memento_core", ("__init__", "__main__", "tick", "tick/__init__", "tick/__main__")),
    ("memento_tui", ("__init__", "__main__", "app", "app/__init__", "app/__main__")))
    for rest in rests)
# Words that run the next word as the program (`uv run pytest`, `timeout 60 pytest`, `env X=1 pytest`).
_WRAPPERS = frozenset({"env", "time", "nice", "nohup", "timeout", "exec", "command", "xvfb-run", "uv", "uvx",
                       "poetry", "pipenv", "pdm", "hatch", "rye", "run", "npx", "coverage"})
_INTERPRETER = re.compile(r"(python|pypy)[\d.]*")
_SEPARATORS = re.compile(r"&&|\|\||[;|&()\n]")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_FILES = frozenset({"conftest.py"})
# A module's file: ``name.py``, ``name.pyw``, an extension ``name.so`` / ``name.cpython-311-x86_64-linux-gnu.so``.
_MODULE_FILE = re.compile(r"(?P<name>[A-Za-z_]\w*)(\.py|\.pyw|(\.[\w-]+)?\.(so|pyd))")


def runner_modules(verify: str | None) -> frozenset[str]:
    """The module names whose shadow would change how ``verify`` starts: :data:`COMMON`, the
    program of each command in it (``pytest``, ``nose2``) and each ``-m MODULE`` it runs; and
    :data:`MEMENTO`, whose shadow would change how the next tick starts."""
    found = set(COMMON | MEMENTO)
    for segment in _SEPARATORS.split(verify or ""):
        try:
            words = shlex.split(segment)
        except ValueError:
            words = segment.split()
        program_seen = False
        for i, word in enumerate(words):
            if word == "-m" and i + 1 < len(words):
                found.add(words[i + 1].split(".")[0])
            if program_seen or word.startswith("-") or ("=" in word and not word.startswith("=")) or \
                    word.isdigit():
                continue  # an option, an assignment (`PYTHONPATH=src`), a wrapper's number (`timeout 60`)
            name = word.rsplit("/", 1)[-1]
            if name in _WRAPPERS:
                continue
            program_seen = True
            if _INTERPRETER.fullmatch(name):
                continue  # the interpreter: its `-m` says the module
            module = name.replace("-", "_").replace("py.test", "pytest")
            if _IDENTIFIER.fullmatch(module):
                found.add(module)
    return frozenset(found)


def is_startup_file(path: str, modules: frozenset[str]) -> bool:
    """Whether ``path`` (relative, / separated) changes how Python or the runner starts: a
    ``conftest.py``, a ``*.pth``, or a module or package (its ``__init__.py``/``__main__.py``)
    named in ``modules`` (each in any of a module's files: ``.py``, ``.pyw``, an extension's
    ``.so``); or one of :data:`MEMENTO_ENTRIES`."""
    folder, _, name = path.rstrip("/").rpartition("/")
    if name in _FILES or name.endswith(".pth"):
        return True
    shaped = _MODULE_FILE.fullmatch(name)
    if not shaped:
        return False
    module = shaped.group("name")
    if f"{folder}/{module}" in MEMENTO_ENTRIES:
        return True
    if module in ("__init__", "__main__"):
        return folder.rpartition("/")[2] in modules
    return module in modules


def named_exactly(path: str, context_files: tuple[str, ...] | list[str]) -> bool:
    """Whether ``context_files`` name ``path`` itself (``./`` and a leading ``/`` aside), not a
    folder or a glob that holds it."""
    def norm(p: str) -> str:
        p = p.strip().replace("\\", "/")
        while p.startswith("./"):
            p = p[2:]
        return p.lstrip("/")

    return any(norm(entry) == norm(path) and not entry.strip().endswith("/") for entry in context_files)


def added_startup_files(changes, verify: str | None, context_files) -> list[str]:
    """The paths among ``changes`` (git.changes.FileChange) that the task added ("created", or "added"
    by its own commit) and that change how Python or the runner starts, unless named exactly."""
    modules = runner_modules(verify)
    return [c.path for c in changes if c.kind in ("created", "added") and not c.was_untracked
            and is_startup_file(c.path, modules) and not named_exactly(c.path, context_files)]


def reason(paths: list[str], who: str) -> str:
    """The guard's sentence: the paths, and how a task that means it says so."""
    shown = ", ".join(paths[:10]) + (f" and {len(paths) - 10} more" if len(paths) > 10 else "")
    return (f"{who} added a file that changes how Python or the test runner starts: {shown} (a task adds "
            "one only when its context_files name that exact file; a folder is not enough)")
