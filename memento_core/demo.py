"""`memento demo DIR`: a real project whose plan the built-in `script` agent can run.

A small Python package (`calc`) built by eight tasks in three phases. Each
task's `do:` command really writes code and its `verify:` really tests it; one
task can never pass, so a person watching sees retries and a BLOCKED task too.
Its ``[architect]`` is ``scripts/demo_drafter.py`` (templates/demo_drafter.py): drafting the plan from a
brief (SPEC §17) works without a model too.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from .errors import MementoError
from .git.commit import commit_paths
from .locks import atomic_write_text
from .notes import add_note
from .scaffold import init_workspace, template


def _quote(source: str) -> str:
    """``source`` as a Python string literal inside a double-quoted shell word."""
    py = source.replace("\\", "\\\\").replace("\n", "\\n").replace("'", "\\'")
    return "'" + py.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$").replace("`", "\\`") + "'"


def _write_py(path: str, source: str) -> str:
    """A `do:` command that writes ``source`` to ``path`` (via Python, so no shell quoting games)."""
    return (f"python3 -c \"import os; os.makedirs(os.path.dirname('{path}') or '.', exist_ok=True); "
            f"open('{path}', 'w').write({_quote(source)})\"")


def _append_py(path: str, source: str) -> str:
    return f"python3 -c \"open('{path}', 'a').write({_quote(source)})\""


TASKS = [
    ("Phase 1: Foundation", "none", [
        ("T-101", "core", "Create the calc package",
         _write_py("calc/__init__.py", '"""calc: a tiny calculator built one tick at a time."""\n'),
         "python3 -c 'import calc'", "[calc/__init__.py]", "1min"),
        ("T-102", "core", "Add and subtract",
         _write_py("calc/ops.py", "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"),
         "python3 -c 'from calc.ops import add, sub; assert add(2, 3) == 5 and sub(5, 3) == 2'",
         "[calc/ops.py]", "2min"),
    ]),
    ("Phase 2: Features", "Phase 1", [
        ("T-201", "core", "Multiply and divide",
         _append_py("calc/ops.py", "\n\ndef mul(a, b):\n    return a * b\n\n\ndef div(a, b):\n"
                    "    if b == 0:\n        raise ZeroDivisionError('division by zero')\n    return a / b\n"),
         "python3 -c 'from calc.ops import mul, div; assert mul(4, 5) == 20 and div(9, 3) == 3'",
         "[calc/ops.py]", "2min"),
        ("T-202", "parse", "Evaluate simple expressions",
         _write_py("calc/parse.py", "from calc.ops import add, div, mul, sub\n\nOPS = {'+': add, '-': sub, "
                   "'*': mul, '/': div}\n\n\ndef evaluate(text):\n    left, op, right = text.split()\n"
                   "    return OPS[op](float(left), float(right))\n"),
         "python3 -c 'from calc.parse import evaluate; assert evaluate(\"6 * 7\") == 42'",
         "[calc/parse.py]", "3min"),
    ]),
    ("Phase 3: Polish", "Phase 2", [
        ("T-301", "cli", "Command line entry point",
         _write_py("calc/__main__.py", "import sys\n\nfrom calc.parse import evaluate\n\n"
                   "print(evaluate(' '.join(sys.argv[1:])))\n"),
         "test \"$(python3 -m calc 2 + 3)\" = 5.0", "[calc/__main__.py]", "2min"),
        ("T-302", "tests", "Unit tests",
         _write_py("tests/test_calc.py", "import unittest\n\nfrom calc.ops import add, div\nfrom calc.parse "
                   "import evaluate\n\n\nclass CalcTest(unittest.TestCase):\n    def test_add(self):\n"
                   "        self.assertEqual(add(1, 1), 2)\n\n    def test_div_by_zero(self):\n"
                   "        with self.assertRaises(ZeroDivisionError):\n            div(1, 0)\n\n"
                   "    def test_evaluate(self):\n        self.assertEqual(evaluate('8 / 2'), 4)\n"),
         "python3 -m unittest discover -s tests -q", "[tests/test_calc.py, tests/]", "3min"),
        ("T-303", "docs", "Usage notes",
         _write_py("USAGE.md", "# calc\n\n    python3 -m calc 6 * 7\n"),
         "grep -q 'python3 -m calc' USAGE.md", "[USAGE.md]", "1min"),
        ("T-304", "quantum", "Factor numbers with a quantum computer",
         _write_py("calc/quantum.py", "def factor(n):\n    return None  # no quantum computer here\n"),
         "python3 -c 'from calc.quantum import factor; assert factor(15) == (3, 5), \"no quantum computer\"'",
         "[calc/quantum.py]", "5min"),
    ]),
]


def demo_plan(now: datetime) -> str:
    total = sum(len(tasks) for _, _, tasks in TASKS)
    out = [
        "# MASTER_PLAN: calc (Memento demo)", "",
        "## Meta",
        f"- created: {now.strftime('%Y-%m-%d')}",
        "- tick_mode: auto          <!-- auto | paused | stopped -->",
        "- max_retries: 3",
        "- max_tasks_per_tick: 1",
        "- max_diff_lines: 200",
        "- stale_lock_timeout: 15min",
        "- circuit_breaker_threshold: 5",
        "- status_max_entries: 50",
        "- status_archive_dir: logs/status_archive/",
        "- total_ticks: 0           <!-- maintained by Memento -->",
        f"- total_tasks: {total}           <!-- maintained by Memento -->",
        "- completed_tasks: 0       <!-- maintained by Memento -->",
        "", "---", "",
    ]
    for heading, depends, tasks in TASKS:
        out += [f"## {heading}", "<!-- parallel: false -->", f"<!-- depends: {depends} -->", ""]
        for tid, module, title, do, verify, context, estimate in tasks:
            out += [
                f"- [ ] `{tid}` [MODULE:{module}] {title}",
                f"  - verify: `{verify}`",
                f"  - context_files: {context}",
                f"  - do: `{do}`",
                f"  - estimate: {estimate}",
                "  - retries: 0",
                "",
            ]
    return "\n".join(out)


PROJECT_MAP = """\
# PROJECT MAP: calc

## Architecture Overview
A tiny calculator package, built task by task by Memento's `script` agent.

## Module Registry

### [MODULE:core]
- Purpose: arithmetic
- Entry: calc/ops.py
- Key interfaces: `add`, `sub`, `mul`, `div`

### [MODULE:parse]
- Purpose: evaluate "a op b" expressions
- Entry: calc/parse.py
- Dependencies: [MODULE:core]

### [MODULE:cli]
- Entry: calc/__main__.py

## File Tree
calc/
├── __init__.py
├── ops.py
├── parse.py
└── __main__.py
tests/
└── test_calc.py
"""

CONFIG = """\
# memento.toml for the demo: the built-in script agent runs each task's `do:`.
[agent]
preset = "script"
timeout = "2min"

[verify]
timeout = "1min"

[schedule]
every = "1min"

# The drafter (`memento plan draft`, the dashboard's `D`): no model either. Each line of the
# brief becomes a task whose verify fails until the script agent has done it.
[architect]
preset = "command"
command = "python3 scripts/demo_drafter.py"
timeout = "1min"
"""


def create_demo(root: Path | str, now: datetime | None = None) -> Path:
    """Create the demo project in ``root`` (which must be empty or missing); returns its path."""
    root = Path(root).resolve()
    if root.exists() and any(root.iterdir()):
        raise MementoError(f"{root} is not empty; the demo needs a fresh folder")
    now = now or datetime.now(UTC)
    root.mkdir(parents=True, exist_ok=True)
    atomic_write_text(root / "docs" / "MASTER_PLAN.md", demo_plan(now))
    atomic_write_text(root / "docs" / "PROJECT_MAP.md", PROJECT_MAP)
    atomic_write_text(root / "memento.toml", CONFIG)
    atomic_write_text(root / "scripts" / "demo_drafter.py", template("demo_drafter.py"))
    atomic_write_text(root / ".gitignore", "__pycache__/\n*.pyc\n")
    atomic_write_text(root / "README.md", "# calc\n\nA Memento demo project: `memento status`, `memento tick`.\n")
    init_workspace(root, project="calc", now=now, commit=False)
    add_note(root / "docs" / "HUMAN_NOTES.md", "Keep evaluate() to one binary operation: `a op b`.",
             target="T-202", now=now)
    files = [p.relative_to(root).as_posix() for p in root.rglob("*")
             if p.is_file() and ".git" not in p.parts and ".memento" not in p.parts
             and p.relative_to(root).parts[0] != "memory"]  # its own repository (SPEC §9)
    commit_paths(root, files, "memento: demo project")
    return root
