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
