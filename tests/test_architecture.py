"""The shape of the code (issue 11): no import cycles, short functions, layers, a light paused tick."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("memento_core", "memento_tui")
MAX_FUNCTION_LINES = 80


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected components of more than one module (import cycles)."""
    from memento_core.task_deps import strongly_connected

    imports = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in sorted(graph.modules)}
    return [sorted(component) for component in strongly_connected(imports)]


def test_no_import_cycles_deferred_imports_included():
    # grimp reads every import statement, also those inside functions.
    graph = grimp.build_graph(*PACKAGES, include_external_packages=False, cache_dir=None)
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle_through_a_deferred_import():
    graph = grimp.ImportGraph()
    for name in ("a", "b", "c"):
        graph.add_module(name)
    graph.add_import(importer="a", imported="b")
    graph.add_import(importer="b", imported="c")
    graph.add_import(importer="c", imported="a")
    assert _cycles(graph) == [["a", "b", "c"]]


def test_no_function_is_longer_than_80_lines():
    long = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    lines = node.end_lineno - node.lineno + 1
                    if lines > MAX_FUNCTION_LINES:
                        long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({lines} lines)")
    assert long == []


SHARED_MODULES = {"time", "random"}  # one module object for every thread of the test process


def _global_patches(source: str, filename: str) -> list[str]:
    """``monkeypatch.setattr`` calls that replace an attribute of the time or random module
    itself (``setattr(remote.time, "sleep", …)``, ``setattr("time.sleep", …)``): they reach every
    thread, and a thread's ``while True: time.sleep(1)`` then spins (in CI it filled 2.4 GB)."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "setattr"
                and node.args):
            continue
        target = node.args[0]
        if isinstance(target, ast.Constant) and isinstance(target.value, str):
            hit = target.value.split(".")[0] in SHARED_MODULES
        else:
            name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
            hit = name in SHARED_MODULES
        if hit:
            found.append(f"{filename}:{node.lineno}")
    return found


def test_no_test_patches_the_time_or_random_module_for_every_thread():
    found = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        found += _global_patches(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    assert found == [], "patch the module's own seam (remote._pause, remote._now) instead"


def test_the_global_patch_finder_finds_each_form():
    bad = ('monkeypatch.setattr(remote.time, "sleep", pauses.append)\n'
           'monkeypatch.setattr(time, "monotonic", lambda: 0)\n'
           'monkeypatch.setattr("time.sleep", print)\n'
           'monkeypatch.setattr(remote.random, "SystemRandom", object)\n')
    assert _global_patches(bad, "t.py") == ["t.py:1", "t.py:2", "t.py:3", "t.py:4"]
    good = 'monkeypatch.setattr(remote, "_pause", pauses.append)\nmonkeypatch.setattr(remote, "HEARTBEAT_SECONDS", 0.2)\n'
    assert _global_patches(good, "t.py") == []


def test_nothing_but_the_cli_imports_the_cli():
    graph = grimp.build_graph(*PACKAGES, include_external_packages=False, cache_dir=None)
    cli = {"memento_core.cli"} | graph.find_descendants("memento_core.cli")
    importers = {m for target in cli for m in graph.find_modules_that_directly_import(target)}
    assert sorted(m for m in importers if m not in cli) == []


def test_the_import_linter_contracts_hold():
    # The venv's own import-linter, whether or not `lint-imports` is on PATH.
    code = "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports(no_cache=True))"
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "memento_core stays headless KEPT" in r.stdout
    assert "0 broken" in r.stdout


def test_the_cli_contract_names_every_other_package():
    # A new top-level module must be added to the contract, or it could import the CLI unseen.
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contract = next(c for c in config["tool"]["importlinter"]["contracts"]
                    if c["name"] == "nothing but the CLI imports the CLI")
    tops = {f"memento_core.{p.stem}" for p in (ROOT / "memento_core").iterdir()
            if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()}
    assert set(contract["source_modules"]) == (tops - {"memento_core.cli"}) | {"memento_tui"}


def _paused_project(tmp_path: Path) -> Path:
    root = tmp_path / "paused"
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t.invalid"}
    subprocess.run([sys.executable, "-c", "from memento_core.scaffold import init_workspace as i; "
                    f"i({str(root)!r})"], check=True, env=env, capture_output=True)
    plan = root / "docs" / "MASTER_PLAN.md"
    plan.write_text(plan.read_text(encoding="utf-8").replace("tick_mode: auto", "tick_mode: paused"),
                    encoding="utf-8")
    return root


def test_a_paused_tick_loads_no_attempt_machinery_git_agents_or_mistune(tmp_path):
    root = _paused_project(tmp_path)
    code = ("import json, sys\nfrom memento_core.tick.__main__ import main\n"
            f"rc = main(['--project', {str(root)!r}])\n"
            "print(json.dumps({'rc': rc, 'modules': sorted(sys.modules)}))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    report = json.loads(r.stdout.strip().splitlines()[-1])
    assert report["rc"] == 0 and "tick skipped: tick_mode is paused" in r.stdout
    loaded = set(report["modules"])
    heavy = [m for m in loaded if m.split(".")[0] in ("git", "mistune", "frontmatter", "textual", "rich")
             or m.startswith(("memento_core.tick.run", "memento_core.tick.attempt", "memento_core.tick.guards",
                              "memento_core.tick.recovery", "memento_core.tick.rollback",
                              "memento_core.git", "memento_core.agents", "memento_core.memory",
                              "memento_core.checkpoint", "memento_core.markdown.prose", "memento_core.prose"))]
    assert heavy == []
    # The paused path is still the real one: it read the plan and memento.toml (as TOML: a Config
    # only when it sets [chat] or a remote, tests/core/test_import_hygiene.py).
    assert {"memento_core.plan.scan", "tomllib", "memento_core.locks"} <= loaded


def unmirrored(package: Path, tests: Path) -> list[str]:
    """The modules of ``package`` without a test file named after them where the tests mirror it
    (docs/development.md: memento_core/a/b.py -> tests/core/a/test_b.py), as paths relative to
    ``package``'s parent. A file of that name that holds no test function is no mirror."""
    missing = []
    for module in sorted(package.rglob("*.py")):
        if module.name == "__init__.py":
            continue
        rel = module.relative_to(package)
        mirror = tests / rel.parent / f"test_{rel.name}"
        holds_a_test = mirror.is_file() and any(  # a function pytest collects (python_functions: test*)
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test")
            for node in ast.parse(mirror.read_text(encoding="utf-8")).body)
        if not holds_a_test:
            missing.append(module.relative_to(package.parent).as_posix())
    return missing


def test_every_module_has_a_test_file_named_after_it():
    """Issue 42: from a module to its tests in one hop; scenarios stay apart (tests/core/scenarios/)."""
    assert unmirrored(ROOT / "memento_core", ROOT / "tests" / "core") == []
    assert unmirrored(ROOT / "memento_tui", ROOT / "tests" / "tui") == []


def test_the_mirror_finder_finds_each_module_without_its_test_file(tmp_path):
    package, tests = tmp_path / "pkg", tmp_path / "tests"
    for path in ("__init__.py", "a.py", "__main__.py", "sub/__init__.py", "sub/b.py", "sub/c.py", "sub/d.py"):
        (package / path).parent.mkdir(parents=True, exist_ok=True)
        (package / path).write_text("")
    tested = {"test_a.py": "def test_a():\n    pass\n",
              "test___main__.py": "async def test_main():\n    pass\n",
              "sub/test_b.py": "def helper():\n    pass\n",  # named after sub/b.py, but no test in it
              "test_c.py": "def test_c():\n    pass\n",  # sub/c.py's test in the wrong folder
              "sub/test_d_more.py": "def test_d():\n    pass\n"}  # not named after sub/d.py
    for path, text in tested.items():
        (tests / path).parent.mkdir(parents=True, exist_ok=True)
        (tests / path).write_text(text)
    assert unmirrored(package, tests) == ["pkg/sub/b.py", "pkg/sub/c.py", "pkg/sub/d.py"]
