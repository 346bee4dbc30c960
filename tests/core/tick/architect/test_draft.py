"""Drafting the plan (SPEC §17): `memento plan draft BRIEF` with a fake drafter (tests/agents/drafter.py)
through the real `command` preset, real git; judged on disk, in git and by the CLI's exit codes."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from memento_core import status_log
from memento_core.notes import add_note
from memento_core.plan.scan import parse_plan
from memento_core.plan_lint import lint_problems
from memento_core.scaffold import init_workspace
from memento_core.tick.architect.draft import (
    ERROR,
    KEPT,
    PROPOSED,
    REFUSED,
    apply_draft,
    draft_plan,
)
from memento_core.workspace import Workspace
from tests.core.sandbox.test_sandbox import needs_bwrap

AGENTS = Path(__file__).resolve().parents[3] / "agents"
PY = sys.executable

EMPTY = """# MASTER_PLAN: draft test

## Meta
- created: 2026-12-01
- tick_mode: auto
- max_retries: 2
- max_tasks_per_tick: 1
- total_ticks: 0
- total_tasks: 0
- completed_tasks: 0
"""

WITH_DONE = EMPTY + """
## Phase 1: Done already
<!-- parallel: false -->
<!-- depends: none -->

- [x] `T-101` [MODULE:hello] Write hello
  - verify: `test -f hello.txt`
  - context_files: [hello.txt]
  - retries: 1

- [ ] `T-102` [MODULE:hello] Write hello again
  - verify: `test -f hello2.txt`
  - context_files: [hello2.txt]
  - retries: 0
"""


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def drafter(*extra: str) -> str:
    return " ".join(shlex.quote(a) for a in [PY, str(AGENTS / "drafter.py"), *extra])


def make_ws(tmp_path: Path, plan: str = EMPTY, *, architect: str | None = None, sandbox: str = "none",
            extra: str = "", timeout: str = "20s") -> Workspace:
    root = tmp_path / "proj"
    init_workspace(root, project="proj", commit=False)
    (root / "docs" / "MASTER_PLAN.md").write_text(plan)
    (root / "hello.txt").write_text("hello\n")
    section = f'[architect]\npreset = "command"\ncommand = """{architect or drafter()}"""\ntimeout = "{timeout}"\n'
    (root / "memento.toml").write_text(
        f'[agent]\npreset = "command"\ncommand = "true"\n[verify]\ntimeout = "20s"\n[sandbox]\nmode = "{sandbox}"\n'
        'env = ["FAKE_DRAFTER_PROMPT", "FAKE_DRAFTER_MODE"]\n' + section + extra)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "setup")
    return Workspace(root)


def tree(root: Path) -> dict[str, bytes]:
    """Every file outside .git and Memento's runtime folders, with its bytes."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and p.relative_to(root).parts[0] not in (".git", "logs", ".memento", "memory")}


def history(root: Path) -> list[str]:
    return git(root, "log", "--format=%s").splitlines()


def memento(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[4]),
                                                                     os.environ.get("PYTHONPATH")]))}
    return subprocess.run([PY, "-m", "memento_core.cli", *args], cwd=cwd, env=env, input=stdin,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


def assert_untouched(ws: Workspace, before: dict[str, bytes], head: str) -> None:
    """Nothing changed: every file byte for byte, no commit."""
    assert git(ws.root, "rev-parse", "HEAD").strip() == head
    assert tree(ws.root) == before


# --------------------------------------------------------------------------- a kept draft


def test_a_good_draft_from_an_empty_plan_is_one_commit_and_leaves_the_plan_paused(tmp_path, monkeypatch):
    prompt_copy = tmp_path / "prompt.md"
    monkeypatch.setenv("FAKE_DRAFTER_PROMPT", str(prompt_copy))
    ws = make_ws(tmp_path)
    progress: list[str] = []
    result = draft_plan(ws, "A greeter.\nMODE: good\n", brief_name="brief.md", on_progress=progress.append)
    assert result.outcome == KEPT, result.reasons
    assert result.new_ids == ("T-101", "T-102")
    assert result.exit_code() == 0 and result.warnings == ()
    # Red first: both verify commands ran and failed, as they should.
    assert [(r.task_id, r.passed, r.exit_code) for r in result.red] == [("T-101", False, 1), ("T-102", False, 1)]
    assert any("red first" in p for p in progress) and any("T-102" in p for p in progress)
    plan = parse_plan(ws.plan_path)
    assert [t.id for t in plan.tasks] == ["T-101", "T-102"] and plan.meta.tick_mode == "paused"
    assert plan.meta.total_tasks == 2
    assert not [e for e in plan.errors if e.severity == "error"]
    # One commit holding the plan, the map and the status log.
    assert history(ws.root)[0] == "memento: plan drafted from brief.md"
    assert result.commit == git(ws.root, "rev-parse", "HEAD").strip()
    assert set(git(ws.root, "show", "--name-only", "--format=", "HEAD").split()) == {
        "docs/MASTER_PLAN.md", "docs/PROJECT_MAP.md", "docs/TICK_STATUS.md"}
    assert "[MODULE:greeter]" in ws.map_path.read_text()
    entry = status_log.parse_status(ws.status_path)[-1]
    assert entry.field("Event") == "📝 PLAN DRAFTED" and entry.status == "PLAN DRAFTED"
    assert entry.field("Added") == "T-101, T-102"
    assert entry.commit_sha == result.commit[:7]
    # The checkpoint speaks of the new plan (paused), not of the old one.
    assert "paused" in ws.checkpoint_path.read_text().lower()
    # Nothing but Memento's own documents is left uncommitted.
    assert {ln[3:] for ln in git(ws.root, "status", "--porcelain").splitlines()} <= \
        {"docs/TICK_STATUS.md", "docs/CURRENT_STATE.md"}
    # The prompt: the rules, the brief, the plan, the map, the file list.
    prompt = prompt_copy.read_text()
    assert "Memento Plan Drafter" in prompt and "no right to exist" in prompt
    assert "A greeter." in prompt and "## docs/MASTER_PLAN.md" in prompt and "## docs/PROJECT_MAP.md" in prompt
    assert "hello.txt" in prompt.split("## The repository's files", 1)[1]


def test_a_draft_extends_a_plan_with_done_tasks_and_never_rewrites_them(tmp_path):
    ws = make_ws(tmp_path, WITH_DONE)
    before = ws.plan_path.read_text()
    done_block = before[before.index("- [x] `T-101`"):before.index("- [ ] `T-102`")]
    result = draft_plan(ws, "MODE: good")
    assert result.outcome == KEPT, result.reasons
    assert result.new_ids == ("T-103", "T-104")
    after = ws.plan_path.read_text()
    assert done_block in after  # byte for byte
    plan = parse_plan(ws.plan_path)
    assert plan.task("T-101").status == "x" and plan.task("T-101").retries == 1
    assert plan.task("T-102").status == " "
    assert plan.phase("Phase 2").depends == ("Phase 1",)
    assert plan.meta.total_tasks == 4 and plan.meta.completed_tasks == 1


def test_the_brief_from_stdin_and_the_cli_keep_the_draft(tmp_path):
    ws = make_ws(tmp_path)
    r = memento("plan", "draft", "-", str(ws.root), cwd=tmp_path, stdin="A greeter. MODE: good\n")
    assert r.returncode == 0, r.stdout + r.stderr
    assert history(ws.root)[0] == "memento: plan drafted from stdin"
    assert "+- [ ] `T-101`" in r.stdout  # the diff
    assert "[ok] red first: T-101 fails as it should" in r.stdout
    assert "memento resume" in r.stdout
    assert "[..] red first" in r.stderr  # progress goes to stderr


def test_json_is_one_document_with_every_field(tmp_path):
    ws = make_ws(tmp_path)
    brief = tmp_path / "BRIEF.md"
    brief.write_text("MODE: vacuous\n")
    r = memento("plan", "draft", str(brief), str(ws.root), "--json", "--dry-run", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert {"outcome", "new_ids", "warnings", "reasons", "red", "diff", "commit", "exit_code"} <= doc.keys()
    assert doc["outcome"] == PROPOSED and doc["new_ids"] == ["T-101", "T-102"]
    assert doc["warnings"][0] == "T-102's verify already passes: it proves nothing"
    assert [(r["task_id"], r["passed"]) for r in doc["red"]] == [("T-101", False), ("T-102", True)]
    assert "+- [ ] `T-102`" in doc["diff"] and doc["commit"] is None


# --------------------------------------------------------------------------- red first


def test_a_vacuous_verify_is_a_warning_and_strict_refuses_it(tmp_path):
    ws = make_ws(tmp_path)
    head, before = git(ws.root, "rev-parse", "HEAD").strip(), tree(ws.root)
    strict = draft_plan(ws, "MODE: vacuous", strict=True)
    assert strict.outcome == REFUSED and strict.exit_code() == 1
    assert strict.reasons == ("--strict: T-102's verify already passes: it proves nothing",)
    assert_untouched(ws, before, head)
    kept = draft_plan(ws, "MODE: vacuous")
    assert kept.outcome == KEPT
    assert kept.warnings[0] == "T-102's verify already passes: it proves nothing"
    assert "already passing (they prove nothing): T-102" in status_log.parse_status(ws.status_path)[-1].field(
        "Red First")


def test_red_first_runs_on_the_current_tree(tmp_path):
    """A verify that passes because its file already exists (hello.txt) is caught too."""
    ws = make_ws(tmp_path)
    (ws.root / "greeting.txt").write_text("already here\n")  # a person's untracked file
    result = draft_plan(ws, "MODE: good", dry_run=True)
    assert result.outcome == PROPOSED
    assert [r.task_id for r in result.red if r.passed] == ["T-101"]
    assert (ws.root / "greeting.txt").read_text() == "already here\n"


def test_a_verify_over_its_timeout_is_killed_and_counts_as_red(tmp_path):
    ws = make_ws(tmp_path)
    result = draft_plan(ws, "MODE: slow_verify")
    assert result.outcome == KEPT, result.reasons
    slow = result.red[1]
    assert slow.task_id == "T-102" and not slow.passed and slow.exit_code is None
    assert "timed out after 1s" in slow.detail


def test_red_first_runs_in_parallel_up_to_workers_max(tmp_path):
    """Two verify commands that each wait for the other's mark can only pass when they run at once."""
    meet = tmp_path / "meet"
    meet.mkdir()
    v1 = f"touch {meet}/a; for i in $(seq 100); do test -f {meet}/b && exit 0; sleep 0.05; done; exit 1"
    v2 = f"touch {meet}/b; for i in $(seq 100); do test -f {meet}/a && exit 0; sleep 0.05; done; exit 1"
    script = tmp_path / "two.py"
    script.write_text(
        "from pathlib import Path\nimport sys\nsys.stdin.read()\np = Path('docs/MASTER_PLAN.md')\n"
        "p.write_text(p.read_text() + '''\n## Phase 1: Two\n<!-- parallel: true -->\n\n"
        f"- [ ] `T-1` One\n  - verify: `{v1}`\n  - context_files: [a]\n\n"
        f"- [ ] `T-2` Two\n  - verify: `{v2}`\n  - context_files: [b]\n''')\n")
    ws = make_ws(tmp_path, architect=shlex.join([PY, str(script)]), extra="[workers]\nmax = 2\n")
    result = draft_plan(ws, "two at once", dry_run=True)
    assert result.outcome == PROPOSED, result.reasons
    assert [r.passed for r in result.red] == [True, True]  # they met: they ran at the same time


# --------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(("mode", "plan", "expected"), [
    ("no_verify", EMPTY, r"docs/MASTER_PLAN\.md:\d+: T-102 has no verify command"),
    ("no_context", EMPTY, r"docs/MASTER_PLAN\.md:\d+: T-102 has no context_files"),
    ("dup_id", WITH_DONE, r"docs/MASTER_PLAN\.md:\d+: .*T-101"),
    ("unknown_phase", WITH_DONE, r"docs/MASTER_PLAN\.md:\d+: Phase 2 depends on unknown phase `Phase 99`"),
    ("cycle", EMPTY, r"docs/MASTER_PLAN\.md:\d+: T-10[12] .*cycle"),
    ("born_done", EMPTY, r"docs/MASTER_PLAN\.md:\d+: T-101 is born \[x\]"),
    ("change_task", WITH_DONE, r"docs/MASTER_PLAN\.md:\d+: T-101's definition changed \(it is done"),
    ("change_state", WITH_DONE, r"docs/MASTER_PLAN\.md:\d+: T-101's state changed from \[x\] to \[ \]"),
    ("lint", EMPTY, r"docs/MASTER_PLAN\.md:\d+: T-102 verify: a backtick is never closed"),
    ("move_task", WITH_DONE, r"docs/MASTER_PLAN\.md:\d+: T-102 moved from Phase 1 to Phase 2"),
    ("meta_limit", WITH_DONE, r"docs/MASTER_PLAN\.md:6: the Meta limit max_retries changed"),
    # refused twice over: the Meta key changed, and (the archive gate) a status_archive_dir outside the project
    ("meta_path", WITH_DONE, r"docs/MASTER_PLAN\.md:4: (the Meta key status_archive_dir changed|Meta `status_archive_dir`: .* inside the project)"),
    ("other_file", EMPTY, r"changed files other than .*src/sneaky\.py"),
    ("mark_notes", EMPTY, r"changed docs/HUMAN_NOTES\.md \(marked 1 note\(s\) read\)"),
    ("nothing", EMPTY, r"the draft adds no task"),
])
def test_a_draft_that_breaks_a_rule_is_refused_with_its_line_and_everything_is_put_back(tmp_path, mode, plan,
                                                                                        expected):
    ws = make_ws(tmp_path, plan)
    if mode == "mark_notes":
        add_note(ws.notes_path, "use a friendly tone", target="global")
        git(ws.root, "commit", "-qam", "a note")
    head, before = git(ws.root, "rev-parse", "HEAD").strip(), tree(ws.root)
    result = draft_plan(ws, f"MODE: {mode}")
    assert result.outcome == REFUSED and result.exit_code() == 1
    assert any(re.search(expected, r) for r in result.reasons), result.reasons
    assert result.commit is None
    assert_untouched(ws, before, head)


def test_the_cli_prints_the_refusals_with_their_lines(tmp_path):
    ws = make_ws(tmp_path)
    brief = tmp_path / "brief.txt"
    brief.write_text("MODE: no_verify")
    r = memento("plan", "draft", str(brief), str(ws.root), cwd=tmp_path)
    assert r.returncode == 1
    assert "[warn] the draft was refused, everything was put back:" in r.stdout
    assert re.search(r"  - docs/MASTER_PLAN\.md:\d+: T-102 has no verify command", r.stdout)


def test_a_persons_note_written_during_a_refused_draft_is_kept(tmp_path):
    # The draft runs in its own process (`memento plan draft`), the person's note comes from
    # outside it, as from another shell: a note from inside the draft's process tree would be
    # the drafter's own, refused (a person's action carries a receipt, SPEC §13).
    ws = make_ws(tmp_path)
    flag = tmp_path / "go"
    head = git(ws.root, "rev-parse", "HEAD").strip()
    brief = tmp_path / "brief.txt"
    brief.write_text(f"MODE: wait:{flag}:no_verify")
    runner = subprocess.Popen([sys.executable, "-m", "memento_core.cli", "plan", "draft", str(brief), str(ws.root)],
                              cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(3000):  # the drafter has started
            if Path(str(flag) + ".started").exists():
                break
            try:
                runner.wait(0.01)
                break
            except subprocess.TimeoutExpired:
                pass
        r = memento("note", "keep the greeting short", str(ws.root), cwd=tmp_path)
        assert r.returncode == 0, r.stderr
    finally:
        flag.write_text("1")
        out, err = runner.communicate(timeout=120)
    assert runner.returncode == 1, err  # refused
    assert "keep the greeting short" in ws.notes_path.read_text()
    assert parse_plan(ws.plan_path).tasks == ()
    assert git(ws.root, "rev-parse", "HEAD").strip() == head


def test_a_drafter_that_times_out_is_killed_and_put_back(tmp_path):
    ws = make_ws(tmp_path, timeout="1s")
    head, before = git(ws.root, "rev-parse", "HEAD").strip(), tree(ws.root)
    brief = tmp_path / "brief.txt"
    brief.write_text("MODE: hang")
    r = memento("plan", "draft", str(brief), str(ws.root), cwd=tmp_path)
    assert r.returncode == 2
    assert "the drafter timed out after 1s" in r.stderr and "everything was put back" in r.stderr
    assert_untouched(ws, before, head)


# --------------------------------------------------------------------------- dry run, then keep


def test_a_dry_run_changes_nothing_and_apply_keeps_exactly_its_proposal(tmp_path):
    ws = make_ws(tmp_path, WITH_DONE)
    head, before = git(ws.root, "rev-parse", "HEAD").strip(), tree(ws.root)
    proposal = draft_plan(ws, "MODE: good", dry_run=True)
    assert proposal.outcome == PROPOSED and proposal.new_ids == ("T-103", "T-104")
    assert "+- [ ] `T-103`" in proposal.diff and "docs/PROJECT_MAP.md" in proposal.diff
    assert_untouched(ws, before, head)
    kept = apply_draft(ws, proposal)
    assert kept.outcome == KEPT, kept.reasons
    plan_text = ws.plan_path.read_text()
    assert plan_text.startswith(proposal.proposed["docs/MASTER_PLAN.md"].decode().replace(
        "tick_mode: auto", "tick_mode: paused").split("## Meta")[0])
    assert "`T-104`" in plan_text and parse_plan(ws.plan_path).meta.tick_mode == "paused"
    assert history(ws.root)[0] == "memento: plan drafted from BRIEF"


def test_apply_refuses_a_proposal_when_the_plan_changed_since(tmp_path):
    ws = make_ws(tmp_path, WITH_DONE)
    proposal = draft_plan(ws, "MODE: good", dry_run=True)
    r = memento("skip", "T-102", "--reason", "not needed", str(ws.root), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    again = apply_draft(ws, proposal)
    assert again.outcome == REFUSED and "changed since the dry run" in again.reasons[0]
    assert "`T-103`" not in ws.plan_path.read_text()


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(("brief", "expected"), [
    ("", "the brief is empty"),
    ("   \n\n", "the brief is empty"),
    ("x" * (200 * 1024 + 1), "over the limit of 200 KB"),
], ids=["empty", "blank", "too-big"])
def test_a_bad_brief_runs_nothing(tmp_path, monkeypatch, brief, expected):
    prompt_copy = tmp_path / "prompt.md"
    monkeypatch.setenv("FAKE_DRAFTER_PROMPT", str(prompt_copy))
    ws = make_ws(tmp_path)
    result = draft_plan(ws, brief)
    assert result.outcome == ERROR and result.exit_code() == 2 and expected in result.reasons[0]
    assert not prompt_copy.exists()  # the drafter never ran


def test_bad_input_on_the_command_line_is_one_clear_error(tmp_path):
    ws = make_ws(tmp_path)
    missing = memento("plan", "draft", str(tmp_path / "nope.md"), str(ws.root), cwd=tmp_path)
    assert missing.returncode == 2 and "nope.md: no such file" in missing.stderr
    assert "Traceback" not in missing.stderr
    empty = memento("plan", "draft", "-", str(ws.root), cwd=tmp_path, stdin="")
    assert empty.returncode == 2 and "the brief is empty" in empty.stderr
    big = tmp_path / "big.md"
    big.write_bytes(b"x" * (200 * 1024 + 1))
    too_big = memento("plan", "draft", str(big), str(ws.root), cwd=tmp_path)
    assert too_big.returncode == 2 and "over the limit of 200 KB" in too_big.stderr
    binary = tmp_path / "bin.md"
    binary.write_bytes(b"\xff\xfe\x00bad")
    not_text = memento("plan", "draft", str(binary), str(ws.root), cwd=tmp_path)
    assert not_text.returncode == 2 and "not UTF-8" in not_text.stderr
    as_json = memento("plan", "draft", str(tmp_path / "nope.md"), str(ws.root), "--json", cwd=tmp_path)
    assert as_json.returncode == 2
    doc = json.loads(as_json.stdout)
    assert doc["outcome"] == ERROR and "nope.md: no such file" in doc["reasons"][0]
    assert history(ws.root) == ["setup"]


def test_a_workspace_without_an_agent_cannot_draft(tmp_path):
    root = tmp_path / "bare"
    init_workspace(root, project="bare")  # memento.toml as init writes it: the script preset
    brief = tmp_path / "brief.md"
    brief.write_text("A greeter.")
    r = memento("plan", "draft", str(brief), str(root), cwd=tmp_path)
    assert r.returncode == 2
    assert "no [architect] preset and no [agent] preset" in r.stderr
    assert history(root) == ["memento: init workspace"]


def test_a_tick_holding_the_lock_is_a_clear_error(tmp_path):
    from memento_core.locks import file_lock

    ws = make_ws(tmp_path)
    with file_lock(ws.tick_lock_path, blocking=False):
        result = draft_plan(ws, "MODE: good")
    assert result.outcome == ERROR and "a tick is running" in result.reasons[0]


# --------------------------------------------------------------------------- the system prompt


def test_init_writes_the_drafters_system_prompt_and_its_example_lints(tmp_path):
    root = tmp_path / "fresh"
    init_workspace(root, project="fresh")
    prompt = (root / "scripts" / "plan_system_prompt.md").read_text()
    assert "scripts/plan_system_prompt.md" in git(root, "ls-files")
    for rule in ("no right to exist", "parallel", "depends", "context_files", "red first", "PROJECT_MAP.md"):
        assert rule.lower() in prompt.lower(), rule
    example = re.search(r"```markdown\n(.*?)```", prompt, flags=re.S).group(1)
    from memento_core.plan.scan import parse_plan_text

    plan = parse_plan_text(example)
    assert len(plan.tasks) == 3 and len(plan.phases) == 2
    problems = lint_problems(plan, example, "example", root, "claude")
    assert [str(e) for e in problems if e.severity == "error"] == []


# --------------------------------------------------------------------------- hostile drafters and verify commands


def test_a_verify_that_rewrites_the_plan_during_red_first_changes_nothing_that_is_kept(tmp_path):
    """Unconfined, red first runs a verify that writes pwned.py and marks every task [x]: what was
    checked is what is kept, and what the verify did is put back."""
    ws = make_ws(tmp_path)
    result = draft_plan(ws, "MODE: hostile_verify")
    assert result.outcome == KEPT, result.reasons
    assert not (ws.root / "pwned.py").exists()
    plan = parse_plan(ws.plan_path)
    assert [t.status for t in plan.tasks] == [" ", " "]
    committed = git(ws.root, "show", "HEAD:docs/MASTER_PLAN.md")
    assert not re.search(r"^- \[x\]", committed, flags=re.M) and "- [ ] `T-102`" in committed


@needs_bwrap
def test_confined_the_drafter_can_write_only_the_plan_and_the_map(tmp_path):
    ws = make_ws(tmp_path, sandbox="bwrap")
    toml, hooks = ws.config_path.read_bytes(), sorted(p.name for p in (ws.root / ".git" / "hooks").iterdir())
    result = draft_plan(ws, "MODE: escape")
    assert result.outcome == KEPT, result.reasons
    log = (ws.root / result.log).read_text()
    assert "could not write src/evil.py" in log and "could not write memento.toml" in log
    assert "could not write .git/hooks/pre-commit" in log
    assert "[memento] sandbox: bwrap (" in log and "writable: docs/MASTER_PLAN.md, docs/PROJECT_MAP.md" in log
    assert not (ws.root / "src").exists() and ws.config_path.read_bytes() == toml
    assert sorted(p.name for p in (ws.root / ".git" / "hooks").iterdir()) == hooks


@needs_bwrap
def test_confined_red_first_sees_a_read_only_project(tmp_path):
    ws = make_ws(tmp_path, sandbox="bwrap")
    result = draft_plan(ws, "MODE: hostile_verify", dry_run=True)
    assert result.outcome == PROPOSED, result.reasons
    hostile = result.red[1]
    assert not hostile.passed and "Read-only file system" in (ws.root / hostile.log).read_text()
    assert not (ws.root / "pwned.py").exists()
    assert not re.search(r"^- \[x\]", ws.plan_path.read_text(), flags=re.M)


def test_unconfined_the_drafters_other_files_are_refused_and_removed(tmp_path):
    ws = make_ws(tmp_path)
    head, before = git(ws.root, "rev-parse", "HEAD").strip(), tree(ws.root)
    hooks = sorted(p.name for p in (ws.root / ".git" / "hooks").iterdir())
    result = draft_plan(ws, "MODE: escape")
    assert result.outcome == REFUSED
    assert "changed git's own state: wrote .git/hooks/pre-commit" in result.reasons
    assert "changed files other than the plan and the map: src/evil.py" in result.reasons
    assert "changed memento.toml (only Memento writes it)" in result.reasons
    assert_untouched(ws, before, head)
    assert sorted(p.name for p in (ws.root / ".git" / "hooks").iterdir()) == hooks


# --------------------------------------------------------------------------- a draft that does not end by itself


def _start_draft(ws: Workspace, tmp_path: Path) -> tuple[subprocess.Popen, int]:
    """`memento plan draft` whose drafter writes a draft and then sleeps; (the CLI, the drafter's pid)."""
    pidfile = tmp_path / "drafter.pid"
    brief = tmp_path / "brief.md"
    brief.write_text(f"MODE: hang_after:{pidfile}")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[4]),
                                                                     os.environ.get("PYTHONPATH")]))}
    cli = subprocess.Popen([PY, "-m", "memento_core.cli", "plan", "draft", str(brief), str(ws.root)], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for _ in range(3000):
        if pidfile.exists() or cli.poll() is not None:
            break
        try:
            cli.wait(0.01)
        except subprocess.TimeoutExpired:
            pass
    assert pidfile.exists(), cli.communicate()
    return cli, int(pidfile.read_text())


def _gone(pid: int) -> bool:
    for _ in range(1000):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state in ("Z", "X"):
            return True
        threading.Event().wait(0.01)
    return False


def test_sigterm_during_a_draft_puts_everything_back(tmp_path):
    import signal

    ws = make_ws(tmp_path, WITH_DONE)
    head, before = git(ws.root, "rev-parse", "HEAD").strip(), tree(ws.root)
    cli, drafter_pid = _start_draft(ws, tmp_path)
    assert "`T-103`" in ws.plan_path.read_text()  # the draft is on disk, the run not finished
    cli.send_signal(signal.SIGTERM)
    out, err = cli.communicate(timeout=60)
    assert cli.returncode == 2 and "interrupted by SIGTERM: everything was put back" in err
    assert _gone(drafter_pid)
    assert_untouched(ws, before, head)
    assert not (ws.memento_dir / "records" / "ARCHITECT.json").exists()


def test_a_draft_killed_outright_is_put_back_by_the_next_tick(tmp_path):
    from memento_core.tick.__main__ import run_tick

    ws = make_ws(tmp_path, WITH_DONE)
    plan_before = ws.plan_path.read_bytes()
    cli, drafter_pid = _start_draft(ws, tmp_path)
    cli.kill()
    cli.communicate(timeout=60)
    assert "`T-103`" in ws.plan_path.read_text()
    run_tick(ws.root)
    assert _gone(drafter_pid)  # the recovery killed the drafter it had started
    assert not (ws.memento_dir / "records" / "ARCHITECT.json").exists()
    plan = parse_plan(ws.plan_path)
    assert [t.id for t in plan.tasks] == ["T-101", "T-102"]
    text, was = ws.plan_path.read_text(), plan_before.decode()
    done = was[was.index("- [x] `T-101`"):was.index("- [ ] `T-102`")]
    assert "`T-103`" not in text and done in text  # the tick then tried T-102: its retries may differ
    assert any("interrupted, rolled back" in (e.field("Event") or "") for e in status_log.parse_status(ws.status_path))
    assert not any(s.startswith("memento: plan drafted") for s in history(ws.root))


def test_a_brief_file_with_a_newline_in_its_name_makes_a_one_line_commit_subject(tmp_path):
    ws = make_ws(tmp_path)
    brief = tmp_path / "my\nbrief\x1b[31m.md"
    brief.write_text("MODE: good")
    r = memento("plan", "draft", str(brief), str(ws.root), cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert git(ws.root, "log", "-1", "--format=%B").strip() == "memento: plan drafted from my brief.md"
    assert "\x1b" not in ws.status_path.read_text()


@needs_bwrap
def test_a_persons_hand_edit_of_the_notes_during_a_confined_draft_is_kept(tmp_path):
    """Issue 38 item 17: a person edits docs/HUMAN_NOTES.md in an editor while `memento plan draft`
    runs; the draft is refused for its own reason, and the edit is kept, not put back with the
    draft: confined, the drafter cannot write the notes (read-only in its sandbox), so a change
    there is the person's, never held against the draft."""
    ws = make_ws(tmp_path, sandbox="bwrap")
    add_note(ws.notes_path, "use a friendly tone", target="global")
    git(ws.root, "commit", "-qam", "a note")
    flag = ws.root / ".memento" / "worker" / "go"  # the drafter can write there, confined
    brief = tmp_path / "brief.txt"
    brief.write_text("MODE: wait:.memento/worker/go:no_verify")
    runner = subprocess.Popen([sys.executable, "-m", "memento_core.cli", "plan", "draft", str(brief), str(ws.root)],
                              cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(3000):
            if Path(str(flag) + ".started").exists() or runner.poll() is not None:
                break
            threading.Event().wait(0.01)
        text = ws.notes_path.read_text()  # the person's editor: the note reworded, one more line, saved whole
        edited = text.replace("use a friendly tone", "use a friendly tone, and no exclamation marks")
        ws.notes_path.write_text(edited + "\nA line the person added by hand.\n")
    finally:
        flag.write_text("1")
        out, err = runner.communicate(timeout=120)
    assert runner.returncode == 1, out + err  # refused: T-102 has no verify
    assert "T-102 has no verify command" in out and "HUMAN_NOTES" not in out
    after = ws.notes_path.read_text()
    assert "use a friendly tone, and no exclamation marks" in after and "A line the person added by hand." in after
    assert parse_plan(ws.plan_path).tasks == ()


@needs_bwrap
def test_confined_the_drafter_cannot_write_the_notes(tmp_path):
    ws = make_ws(tmp_path, sandbox="bwrap")
    add_note(ws.notes_path, "use a friendly tone", target="global")
    git(ws.root, "commit", "-qam", "a note")
    before = ws.notes_path.read_bytes()
    result = draft_plan(ws, "MODE: mark_notes")
    assert result.outcome in (ERROR, REFUSED)  # it crashed on the read-only file
    assert ws.notes_path.read_bytes() == before
    assert "Read-only file system" in (ws.root / result.log).read_text()
