"""memento_core stays headless: no textual, no memento_tui, anywhere in it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = ("textual", "memento_tui")


def test_no_module_of_memento_core_imports_textual_or_the_dashboard():
    offenders = []
    for path in sorted((ROOT / "memento_core").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                if name.split(".")[0] in FORBIDDEN:
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}: imports {name}")
    assert offenders == []


def test_importing_the_core_loads_no_textual():
    code = "import sys, memento_core.cli.main, memento_core.plan; print([m for m in sys.modules if m.split('.')[0] in ('textual', 'memento_tui')])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# A paused tick is cron's most frequent process (SPEC §11: ≤ 3x a bare interpreter, issue 42: ≤ 2x
# in CPU time): what it may import, all of it. A module added here is paid by every paused project
# every few minutes; bench/tick_overhead.py --paused-only measures what it costs.
PAUSED_TICK_MODULES = {
    "memento_core", "memento_core.tick", "memento_core.tick.__main__", "memento_core.tick.orphans",
    "memento_core.errors", "memento_core.lines", "memento_core.workspace",
    "memento_core.locks", "memento_core.crashpoints", "memento_core.durations", "memento_core.plan",
    "memento_core.markdown", "memento_core.markdown.blocks", "memento_core.runlog",
}
# Made lazy by issue 42: config.py (a Config is built only for [chat] or a remote), argparse (the
# plain `--project DIR` is read by hand), json (read only when a dead tick left a record).
PAUSED_TICK_NEVER = ("argparse", "gettext", "locale", "json", "subprocess", "logging", "asyncio", "socket",
                     "hashlib", "shlex", "tempfile", "shutil")

# What the tick adds to a bare interpreter, without site (-S): a .pth file of this machine's
# site-packages may import tempfile or shutil first and hide that the tick does.
_LOADED = (f"import sys\nbefore = set(sys.modules)\nsys.path.insert(0, {str(ROOT)!r})\n"
           "from memento_core.tick.__main__ import main\n"
           "rc = main(sys.argv[1:])\nprint(repr({'rc': rc, 'modules': sorted(set(sys.modules) - before)}))")


def _paused(tmp_path: Path, toml: str) -> Path:
    from memento_core.scaffold import init_workspace

    root = tmp_path / "paused"
    init_workspace(root, project="paused", commit=False)
    plan = root / "docs" / "MASTER_PLAN.md"
    plan.write_text(plan.read_text(encoding="utf-8").replace("tick_mode: auto", "tick_mode: paused"), encoding="utf-8")
    (root / "memento.toml").write_text(toml, encoding="utf-8")
    return root


def _paused_tick_modules(argv: list[str]) -> tuple[int, str, set[str]]:
    r = subprocess.run([sys.executable, "-S", "-c", _LOADED, *argv], capture_output=True, text=True, check=True)
    *said, last = r.stdout.strip().splitlines()
    report = ast.literal_eval(last)
    return report["rc"], "\n".join(said), set(report["modules"])


def test_a_paused_tick_imports_only_its_own_short_list(tmp_path):
    from memento_core.config import DEFAULT_CONFIG_TOML

    root = _paused(tmp_path, DEFAULT_CONFIG_TOML)  # the file `memento init` writes, "# remote = …" and all
    for argv in (["--project", str(root)], [str(root)]):
        rc, said, loaded = _paused_tick_modules(argv)
        assert rc == 0 and "tick skipped: tick_mode is paused" in said
        assert {m for m in loaded if m.startswith("memento_core")} <= PAUSED_TICK_MODULES
        assert [m for m in loaded if m.split(".")[0] in PAUSED_TICK_NEVER] == []
        assert "memento_core.plan" in loaded and "tomllib" in loaded  # it did read the plan and memento.toml


def test_a_paused_tick_reads_memento_toml_as_a_config_when_it_sets_chat_or_a_remote(tmp_path):
    # The remote (SPEC §12) and [chat] (SPEC §18) are asked before a paused plan's skip: there
    # the Config is needed, and built (test_fleet and test_chat_telegram hold what they do).
    for n, toml in enumerate(('[workers]\nremote = "origin"\n', '[chat]\n', '[workers]\n"re\\u006dote" = "x"\n')):
        root = _paused(tmp_path / f"set{n}", toml)
        _, _, loaded = _paused_tick_modules(["--project", str(root)])
        assert "memento_core.config" in loaded, toml
    for n, toml in enumerate(("[workers]\nmax = 2\n", "[agent\n", "\xff")):  # no remote; not TOML: load_config says
        root = _paused(tmp_path / f"unset{n}", toml)
        rc, said, loaded = _paused_tick_modules(["--project", str(root)])
        assert ("memento_core.config" in loaded) is (toml != "[workers]\nmax = 2\n"), toml
        assert rc == 0 and "tick skipped: tick_mode is paused" in said


def test_the_tick_command_line_keeps_every_other_shape_to_argparse(tmp_path):
    root = _paused(tmp_path, "")
    tick = [sys.executable, "-m", "memento_core.tick"]
    for argv in ([f"--project={root}"], ["--proj", str(root)]):  # argparse's forms, read by argparse
        r = subprocess.run([*tick, *argv], capture_output=True, text=True)
        assert r.returncode == 0 and "tick skipped: tick_mode is paused" in r.stdout, (argv, r.stderr)
    r = subprocess.run([*tick, "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "usage: python -m memento_core.tick" in r.stdout
    for argv in (["--project"], ["--project", "-x"], ["--bogus"], [str(root), "extra"]):
        r = subprocess.run([*tick, *argv], capture_output=True, text=True)
        assert r.returncode == 2 and "usage:" in r.stderr, argv
    r = subprocess.run(tick, cwd=root, capture_output=True, text=True)  # no argument: the current folder
    assert r.returncode == 0 and "tick skipped: tick_mode is paused" in r.stdout


def test_the_command_line_builds_its_parser_without_the_agents_package():
    # Every command builds the parser of every command, `status --json` included: the agents package
    # (its presets, process groups and usage parsers) is a third of what that once cost (SPEC §11).
    code = ("import sys\nfrom memento_core.cli.main import build_parser\nbuild_parser()\n"
            "print(sorted(m for m in sys.modules if m.startswith('memento_core.agents')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    from memento_core.agents.check import VERSION_TIMEOUT

    # The --timeout default, applied when the command runs, is still the one its help names.
    r = subprocess.run([sys.executable, "-m", "memento_core.cli", "agents", "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and f"(default {VERSION_TIMEOUT:g})" in " ".join(r.stdout.split())
