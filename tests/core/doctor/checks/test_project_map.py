"""checks/project_map.py: a path PROJECT_MAP.md names that does not exist and no open task will
create, with its exact line and exit code (SPEC §8)."""

from __future__ import annotations

import pytest

from tests.core.doctor.doctorhelp import edit, judge, line_of


def _map_path(ws):
    edit(ws.map_path, "### [MODULE:cli]\n", "### [MODULE:cli]\n- Entry: src/gone.py\n")
    line = line_of(ws.map_path, "src/gone.py")
    return [f"[WARNING] docs/PROJECT_MAP.md:{line}: `src/gone.py` does not exist and no open task will create it"], 1


CASES = {
    "map path missing": _map_path,
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_case_reports_its_exact_line_and_exit_code(ws, case, capsys):
    judge(ws, *CASES[case](ws), capsys)
