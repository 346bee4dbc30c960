"""templates/demo_drafter.py: the demo's drafter without a model (SPEC §17), a standalone script the
demo copies into its scripts/ — the brief found under the last "The brief" heading outside a fence,
one wish per line, a new phase of red tasks numbered after the plan's, and the wishes module in
PROJECT_MAP.md once. Run for real as a subprocess in a project folder; the demo drafting through
`memento plan draft` is judged in tests/core/test_demo.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import memento_core
from memento_core.plan.scan import parse_plan_text

DRAFTER = Path(memento_core.__file__).parent / "templates" / "demo_drafter.py"


def _drafter():
    """templates/demo_drafter.py, the file the demo copies into its scripts/ (a template, not a module)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("demo_drafter", DRAFTER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_demo_drafter_reads_the_brief_section_only():
    drafter = _drafter()
    brief_of, wishes = drafter.brief_of, drafter.wishes
    system = "# Plan rules\n\n## Brief\n\n- an example wish in the system prompt\n\n---\n\n"
    prompt = (system + "# Draft the plan from the brief (BRIEF)\n\n## The brief\n\n````text\n1. First wish\n"
              "* second `wish`\n```\n## Brief\n```\n### detail\nthird\n````\n\n"
              "## docs/MASTER_PLAN.md\n- [ ] `T-1` not a wish\n")
    assert wishes(brief_of(prompt)) == ["First wish", "second 'wish'", "third"]
    assert wishes(brief_of("## The brief\n\nplain line\n## Next\nnot it\n")) == ["plain line"]
    assert wishes(brief_of("# Draft\n\nno brief here\n")) == []


def test_wishes_are_single_lines_cut_to_a_title_and_at_most_twenty():
    drafter = _drafter()
    long = "word " * 30
    items = drafter.wishes("\n".join([f"- {long}", "2) numbered", "```", "# heading", "   ", *map(str, range(30))]))
    assert items[0] == ("word " * 14).strip() + "…"  # cut at MAX_TITLE (70) characters
    assert items[1] == "numbered" and len(items) == drafter.MAX_TASKS


def test_a_draft_is_a_new_phase_after_the_last_with_ids_no_task_uses():
    drafter = _drafter()
    plan = "# MASTER_PLAN: x\n\n## Phase 1: A\n\n## Phase 3: C\n- [ ] `T-401` taken already\n  - verify: `true`\n"
    text = drafter.draft(plan, ["first", "second"])
    assert text.startswith(plan.rstrip("\n") + "\n\n## Phase 4: From the brief\n<!-- parallel: false -->\n")
    tasks = parse_plan_text(text).tasks
    assert [t.id for t in tasks] == ["T-401", "T-402", "T-403"]
    assert (tasks[1].title, tasks[1].verify, tasks[1].context_files) == \
        ("first", "grep -q T-402 wishes/T-402.md", ("wishes/T-402.md",))
    assert tasks[2].do == "mkdir -p wishes && echo 'T-403 done' > wishes/T-403.md"


def run(cwd: Path, prompt: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-I", str(DRAFTER), *args], cwd=cwd, input=prompt, capture_output=True,
                          text=True, timeout=60)


def test_run_in_a_project_it_appends_the_phase_and_registers_the_module_once(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "MASTER_PLAN.md").write_text("# MASTER_PLAN: x\n\n## Phase 1: A\n")
    (tmp_path / "docs" / "PROJECT_MAP.md").write_text("# PROJECT MAP\n\n## Modules\n\n## File Tree\n```\n```\n")
    done = run(tmp_path, "## The brief\n```\n- a wish\n```\n")
    assert done.returncode == 0 and done.stdout == "demo drafter: 1 task(s) drafted from the brief\n"
    assert "- [ ] `T-201` [MODULE:wishes] a wish" in (tmp_path / "docs" / "MASTER_PLAN.md").read_text()
    project_map = (tmp_path / "docs" / "PROJECT_MAP.md").read_text()
    assert project_map.index("### [MODULE:wishes]") < project_map.index("## File Tree")
    prompt_file = tmp_path / "prompt.md"
    prompt_file.write_text("# The brief\nanother wish\n")
    assert run(tmp_path, "", str(prompt_file)).returncode == 0  # the prompt from the file its argument names
    assert "`T-301` [MODULE:wishes] another wish" in (tmp_path / "docs" / "MASTER_PLAN.md").read_text()
    assert (tmp_path / "docs" / "PROJECT_MAP.md").read_text() == project_map


def test_no_brief_drafts_nothing_and_says_why(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "MASTER_PLAN.md").write_text("# MASTER_PLAN: x\n")
    done = run(tmp_path, "# Repair the plan\nT-3 is blocked\n")
    assert done.returncode == 1 and "no brief in the prompt, so nothing drafted" in done.stderr
    assert (tmp_path / "docs" / "MASTER_PLAN.md").read_text() == "# MASTER_PLAN: x\n"
