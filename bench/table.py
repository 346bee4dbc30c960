"""One table format for every benchmark: figure, value, budget, status."""

from __future__ import annotations

import os
import sys

Row = tuple[str, str, str, "bool | None"]


def header() -> str:
    return f"cores: {os.cpu_count()}  python: {sys.version.split()[0]}"


def print_table(rows: list[Row]) -> bool:
    """Print the rows; True when no budget was missed."""
    print(f"{'figure':<58}{'value':>12}{'budget':>12}  status")
    ok = True
    for figure, value, budget, passed in rows:
        status = "" if passed is None else ("ok" if passed else "MISSED")
        ok = ok and passed is not False
        print(f"{figure:<58}{value:>12}{budget:>12}  {status}")
    return ok
