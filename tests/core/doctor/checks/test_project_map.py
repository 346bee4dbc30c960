"""checks/project_map.py: a path PROJECT_MAP.md names that does not exist and no open task will
create, with its exact line and exit code (SPEC §8)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memento_core.doctor.checks.project_map import MAX_PATH_FINDINGS, check_project_map, map_paths
from memento_core.doctor.context import Context
from memento_core.doctor.findings import INFO
from memento_core.scaffold import init_workspace
from memento_core.workspace import Workspace
from tests.core.doctor.doctorhelp import edit, judge, line_of


def _map_path(ws):
    edit(ws.map_path, "### [MODULE:cli]\n", "### [MODULE:cli]\n- Entry: src/gone.py\n")
    line = line_of(ws.map_path, "src/gone.py")
    return [f"[WARNING] docs/PROJECT_MAP.md:{line}: `src/gone.py` does not exist and no open task will create it"], 1


CASES = {
    "map path missing": _map_path,
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_check_reports_its_exact_line_and_exit_code(ws, case, capsys):
    judge(ws, *CASES[case](ws), capsys)


def test_the_map_names_paths_in_code_spans_entry_lines_and_drawn_trees_only():
    text = ("# PROJECT MAP\n\nThe api lives in `src/api.py`; see https://example.org/x and `*.py`.\n\n"
            "### [MODULE:db]\n- Entry: src/db/, `src/db/models.py`\n- Purpose: stores/keeps things\n"
            "- Files: ../outside.py, ~/home.py, README\n\n"
            "```\nsrc/\n├── api.py\n└── tests/\n    └── test_api.py\n```\n")
    assert map_paths(text) == ["src/api.py", "src/db/", "src/db/models.py", "src/", "src/tests/",
                               "src/tests/test_api.py"]


def map_ws(tmp_path, body: str, tasks: str = "") -> Context:
    init_workspace(tmp_path / "proj", project="proj", commit=False)
    ws = Workspace(tmp_path / "proj")
    ws.map_path.write_text(f"# PROJECT MAP\n\n{body}")
    if tasks:
        ws.plan_path.write_text(ws.plan_path.read_text() + tasks)
    return Context(ws, datetime.now(UTC))


def test_a_path_an_open_task_will_create_is_no_problem_and_a_done_tasks_is(tmp_path):
    tasks = ("\n## Phase 9: Later\n\n- [ ] `T-901` [MODULE:x] Make it\n  - verify: `true`\n"
             "  - context_files: [src/new.py, lib/]\n- [x] `T-902` [MODULE:x] Made\n  - verify: `true`\n"
             "  - context_files: [src/done.py]\n")
    c = map_ws(tmp_path, "- Entry: `src/new.py`, `lib/util.py`, `src/done.py`\n", tasks)
    (finding,) = check_project_map(c)
    assert finding.message == "`src/done.py` does not exist and no open task will create it"
    assert (finding.path, finding.line) == ("docs/PROJECT_MAP.md", 3)
    (c.ws.root / "src").mkdir()
    (c.ws.root / "src" / "done.py").write_text("")
    assert check_project_map(Context(c.ws, c.now)) == \
        "docs/PROJECT_MAP.md: the 3 path(s) it names exist or an open task will create them"


def test_a_missing_map_is_said_and_many_missing_paths_are_summed_up(tmp_path):
    c = map_ws(tmp_path, "".join(f"- Entry: `gone/{n}.py`\n" for n in range(13)))
    found = check_project_map(c)
    assert len(found) == MAX_PATH_FINDINGS + 1
    assert found[-1].message == "… and 3 more paths that do not exist"
    c.ws.map_path.unlink()
    (finding,) = check_project_map(Context(c.ws, c.now))
    assert finding.severity == INFO and "does not exist: the worker has no map of the code" in finding.message
