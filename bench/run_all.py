"""Run every benchmark and print one table of figure, value, budget and status (SPEC §11).

Run: python bench/run_all.py            (exit 1 when a budget is missed)
"""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from table import header, print_table  # noqa: E402

MODULES = ("plan_parse", "status_json", "tick_overhead", "tick_git", "history", "sandbox_cost", "sandbox_verify", "report_history",
           "parallel_workers", "stream_read")


def main() -> int:
    print(header())
    rows = []
    for name in MODULES:
        print(f"… {name}", file=sys.stderr, flush=True)
        rows += importlib.import_module(name).rows()
    tui = HERE / "tui_bench.py"
    if tui.exists():
        print("… tui_bench", file=sys.stderr, flush=True)
        module = importlib.import_module("tui_bench")
        if hasattr(module, "rows"):
            rows += module.rows()
        else:
            subprocess.run([sys.executable, str(tui)], check=False)
    return 0 if print_table(rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
