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
    code = "import sys, memento_core.cli.main, memento_core.plan.edits; print([m for m in sys.modules if m.split('.')[0] in ('textual', 'memento_tui')])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# A paused tick is cron's most frequent process (SPEC §11: ≤ 3x a bare interpreter, issue 42: ≤ 2x
# in CPU time): what it may import, all of it. A module added here is paid by every paused project
# every few minutes; bench/tick_overhead.py --paused-only measures what it costs.
PAUSED_TICK_MODULES = {
    "memento_core", "memento_core.dataclass_code", "memento_core.regex_code", "memento_core.compiled_cache",
    "memento_core.tick", "memento_core.tick.__main__",
    "memento_core.tick.orphans",
    "memento_core.errors", "memento_core.lines", "memento_core.workspace",
    "memento_core.locks", "memento_core.crashpoints", "memento_core.durations", "memento_core.plan",
    "memento_core.plan.model", "memento_core.plan.scan",
    "memento_core.markdown", "memento_core.markdown.blocks", "memento_core.runlog",
}
# Made lazy by issue 42: config/ (a Config is built only for [chat] or a remote), argparse (the
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
    from memento_core.config.write import DEFAULT_CONFIG_TOML

    root = _paused(tmp_path, DEFAULT_CONFIG_TOML)  # the file `memento init` writes, "# remote = …" and all
    for argv in (["--project", str(root)], [str(root)]):
        rc, said, loaded = _paused_tick_modules(argv)
        assert rc == 0 and "tick skipped: tick_mode is paused" in said
        assert {m for m in loaded if m.startswith("memento_core")} <= PAUSED_TICK_MODULES
        assert [m for m in loaded if m.split(".")[0] in PAUSED_TICK_NEVER] == []
        assert "memento_core.plan.scan" in loaded and "tomllib" in loaded  # it did read the plan and memento.toml


def test_a_paused_tick_reads_memento_toml_as_a_config_when_it_sets_chat_or_a_remote(tmp_path):
    # The remote (SPEC §12) and [chat] (SPEC §18) are asked before a paused plan's skip: there
    # the Config is needed, and built (test_fleet and chat/test_poll hold what they do).
    for n, toml in enumerate(('[workers]\nremote = "origin"\n', '[chat]\n', '[workers]\n"re\\u006dote" = "x"\n')):
        root = _paused(tmp_path / f"set{n}", toml)
        _, _, loaded = _paused_tick_modules(["--project", str(root)])
        assert "memento_core.config.load" in loaded, toml
    for n, toml in enumerate(("[workers]\nmax = 2\n", "[agent\n", "\xff")):  # no remote; not TOML: load_config says
        root = _paused(tmp_path / f"unset{n}", toml)
        rc, said, loaded = _paused_tick_modules(["--project", str(root)])
        assert ("memento_core.config.load" in loaded) is (toml != "[workers]\nmax = 2\n"), toml
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


def test_status_json_reads_the_plan_without_loading_its_editor(tmp_path):
    # `memento status --json` (SPEC §11: ≤ 6x reading the file) reads the plan and its questions; the
    # editor (plan/edits.py) is for the commands that write it, and the writer of memento.toml too.
    root = _paused(tmp_path, "")
    code = ("import contextlib, io, sys\nfrom memento_core.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n    main(['status', '--json', sys.argv[1]])\n"
            "print(sorted(m for m in sys.modules if m.startswith(('memento_core.plan.', 'memento_core.config.'))))")
    r = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True, check=True)
    loaded = set(ast.literal_eval(r.stdout.strip().splitlines()[-1]))
    assert {"memento_core.plan.model", "memento_core.plan.scan", "memento_core.config.load"} <= loaded
    assert loaded.isdisjoint({"memento_core.plan.edits", "memento_core.config.write", "memento_core.config.lint"})



# `memento status --json` (SPEC §11: ≤ 6x reading and splitting the plan) on a project with no
# question asked, no verify change listed and a status log of successes: what it must not import,
# each a module only another state calls for (the verify changes' history reader held.py and git/
# with it; a question's reader questions.py and receipts.py; lint's checks; the diagnosis of a
# bubblewrap that does not run), and what it must not compile (the status log's event patterns,
# read for an event or a failure; report's guard reasons, read for a failure's category).
STATUS_JSON_NEVER = ("memento_core.held", "memento_core.git", "memento_core.questions", "memento_core.receipts",
                     "memento_core.plan_lint", "memento_core.sandbox.reach")
_STATUS_LOG_OF_SUCCESSES = """# TICK STATUS LOG

## [2026-11-29T14:01:00Z] Tick #1
- **Task**: T-101 Something
- **Status**: ✅ SUCCESS
- **Verify Output**: `(no output)` (exit code 0)
- **Duration**: 12s
- **Git Commit**: `abc1234` — "memento: complete T-101 Something"

---
"""


def test_status_json_imports_and_compiles_only_what_a_quiet_project_needs(tmp_path):
    from memento_core import report, status_log
    from memento_core.sandbox import bwrap_binary, examine

    root = _paused(tmp_path, "")
    (root / "docs" / "TICK_STATUS.md").write_text(_STATUS_LOG_OF_SUCCESSES, encoding="utf-8")
    code = ("import contextlib, io, re, sys\ncompiled = []\nplain = re.compile\n"
            "def spy(pattern, flags=0):\n    compiled.append(pattern)\n    return plain(pattern, flags)\n"
            "re.compile = spy\nfrom memento_core.cli.main import main\nout = io.StringIO()\n"
            "with contextlib.redirect_stdout(out):\n    main(['status', '--json', sys.argv[1]])\n"
            "print(repr({'out': out.getvalue(), 'modules': sorted(sys.modules), 'compiled': compiled}))")
    r = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True, check=True)
    seen = ast.literal_eval(r.stdout.strip().splitlines()[-1])
    assert '"total_ticks"' in seen["out"] and "memento_core.overview" in seen["modules"]
    # A bubblewrap that cannot run here is diagnosed: reach.py is then read, rightly.
    never = STATUS_JSON_NEVER if (binary := bwrap_binary()) and examine(binary) is None else STATUS_JSON_NEVER[:-1]
    assert [m for m in seen["modules"] if m in never or m.startswith(tuple(f"{n}." for n in never))] == []
    lazy = {pattern for _, pattern, _ in status_log._EVENT_WORDS} | {report._GUARD_WORDS}
    assert len(lazy) == 15 and lazy.isdisjoint(seen["compiled"])
    assert status_log._ENTRY_RE.pattern in seen["compiled"]  # the spy sees what the modules compile

# A tick of one trivial task (issue 42: ≤ 0.30 s of CPU, bench/tick_git.py): what it must not
# import, each a module a tick without that feature never calls. The checkpoint Memento wrote and
# the memory entries' front matter are read without mistune and PyYAML (markdown/plain.py,
# memory/entries.plain_front_matter); GitHub's client only where GitHub is called; the fleet's
# modules only with a remote (fleet/calls.py); the presets of the other CLIs not at all; a stamp
# Memento wrote without strptime (runlog.parse_utc_stamp); the reader of a reviewer's review.md
# (its patterns) only where a review ran; the confinement's modules (the network's reach, the
# private home and git, the probe's diagnosis) only for a sandbox that is built; the reset times a
# CLI prints at a limit only where an agent met one; traceback only for an attempt that raised,
# difflib only for a rollback that tells a person's note from the agent's edit; the forge's phase
# branches and landing only with land = "pr"; the parallel workers' crew only for a parallel phase.
TRIVIAL_TICK_NEVER = ("mistune", "yaml", "frontmatter", "urllib.request", "http", "ssl", "email",
                      "memento_core.markdown.prose", "memento_core.forge.github", "memento_core.memory.crud",
                      "_strptime", "memento_core.tick.review_file", "memento_core.sandbox.network",
                      "memento_core.sandbox.reach", "memento_core.sandbox.home", "memento_core.sandbox.private_git",
                      "memento_core.agents.reset_times", "traceback",
                      "difflib", "memento_core.forge.landing", "memento_core.forge.phase_branch",
                      "memento_core.tick.workers", "memento_core.tick.crew", "memento_core.tick.crew_judge",
                      "memento_core.tick.crew_result", "memento_core.tick.crew_watch")
TRIVIAL_TICK_FLEET = {"memento_core.fleet", "memento_core.fleet.calls", "memento_core.fleet.host"}

_TICKED = (f"import sys\nsys.path[:0] = [{str(ROOT)!r}, *sys.argv[1].split('\\0')]\n"
           "from memento_core.tick.__main__ import main\n"
           "rc = main(sys.argv[2:])\nprint(repr({'rc': rc, 'modules': sorted(sys.modules)}))")


def _trivial_project(root: Path) -> None:
    from memento_core.scaffold import init_workspace

    init_workspace(root, project="trivial", commit=False)
    tasks = "".join(f"- [ ] T-{i} [MODULE:core] Write one file {i}\n  - verify: `true`\n  - context_files: [src/]\n"
                    for i in (1, 2, 3))
    (root / "docs" / "MASTER_PLAN.md").write_text(
        "# MASTER_PLAN: trivial\n\n## Meta\n- tick_mode: auto\n- max_retries: 3\n\n## Phase 1: All\n\n" + tasks,
        encoding="utf-8")
    (root / "memento.toml").write_text('[agent]\npreset = "command"\n'
                                       'command = "sh -c \'echo done > src/out_{task_id}.txt\'"\n'
                                       '[sandbox]\nmode = "none"\n', encoding="utf-8")
    (root / "src").mkdir()
    (root / "src" / "mod.py").write_text("VALUE = 1\n", encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "trivial project"], cwd=root, check=True)


def test_a_trivial_tick_loads_no_markdown_parser_yaml_http_client_fleet_or_other_preset(tmp_path, git_identity):
    import site

    root = tmp_path / "trivial"
    _trivial_project(root)
    # Without site (-S), so that no .pth file imports anything first; site-packages on the path
    # by hand, so that a module the tick wrongly imports is found (and seen), not an ImportError.
    paths = "\0".join(site.getsitepackages())
    for n in (1, 2):  # the first tick makes the memory store; the second is a tick like any other
        r = subprocess.run([sys.executable, "-S", "-c", _TICKED, paths, "--project", str(root)],
                           capture_output=True, text=True, check=True)
        *said, last = r.stdout.strip().splitlines()
        report = ast.literal_eval(last)
        assert report["rc"] == 0 and f"T-{n} passed" in "\n".join(said), r.stdout + r.stderr
        loaded = set(report["modules"])
        assert [m for m in loaded if m in TRIVIAL_TICK_NEVER or m.startswith(tuple(
            f"{never}." for never in TRIVIAL_TICK_NEVER))] == [], n
        assert {m for m in loaded if m.startswith("memento_core.fleet")} == TRIVIAL_TICK_FLEET
        assert {m for m in loaded if m.startswith("memento_core.agents.presets.")} == {
            "memento_core.agents.presets.command"}
        # what the tick read: the checkpoint it replaced (from the second tick on) and MEMORY.md's entries
        assert {"memento_core.markdown.plain", "memento_core.memory.entries", "memento_core.checkpoint"} <= loaded
    # A person's words in the checkpoint outside the plain shape: mistune reads them, and they stay.
    state = root / "docs" / "CURRENT_STATE.md"
    text = state.read_text(encoding="utf-8").replace("## Key Decisions\nNone",
                                                     "## Key Decisions\n- See [the notes](docs/notes.md) first")
    state.write_text(text, encoding="utf-8")
    subprocess.run(["git", "commit", "-qam", "a person's decision"], cwd=root, check=True)
    r = subprocess.run([sys.executable, "-S", "-c", _TICKED, paths, "--project", str(root)],
                       capture_output=True, text=True, check=True)
    assert "mistune" in ast.literal_eval(r.stdout.strip().splitlines()[-1])["modules"]
    assert "- See [the notes](docs/notes.md) first" in state.read_text(encoding="utf-8")


def test_every_preset_module_is_registered_under_its_own_name():
    from memento_core.agents.presets import PRESETS

    modules = sorted(p.stem for p in (ROOT / "memento_core" / "agents" / "presets").glob("*.py")
                     if p.stem != "__init__")
    assert sorted(PRESETS) == modules
    assert {name: spec.name for name, spec in PRESETS.items()} == {name: name for name in modules}
