"""The dashboard's plan draft (SPEC §17): `D` opens a brief composer, the dry run's diff and checks are
shown, `y` keeps the draft (Pilot, a fake drafter through the real `command` preset, judged on disk and in
git); a refused draft cannot be kept; the demo's own drafter works without a model."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from memento_core.plan.scan import parse_plan
from memento_core.scaffold import init_workspace
from memento_tui.app import MementoApp
from memento_tui.screens.draft import BriefComposer, DraftScreen
from tests.tui.pilot import screen_text, settle, strip_ws, wait_for

AGENTS = Path(__file__).resolve().parents[2] / "agents"

PLAN = """# MASTER_PLAN: draft test

## Meta
- tick_mode: auto
- max_retries: 2
- max_tasks_per_tick: 1

## Phase 1: Start
<!-- depends: none -->

- [x] `T-101` [MODULE:greet] Greet
  - verify: `grep -q hello greet.txt`
  - context_files: [greet.txt]
  - retries: 0
"""


@pytest.fixture(scope="module", autouse=True)
def _tick_beacon_started():
    """A tick run in this process starts the tick's one process-wide beacon thread (tick/record.py)
    for good: start it before the per-test thread-leak check looks (as screens/test_architect.py does)."""
    from memento_core.tick import record

    if record._BEACON["thread"] is None:  # noqa: SLF001
        record._beacon(None)  # noqa: SLF001


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def fake(action: str) -> str:
    return shlex.join([sys.executable, str(AGENTS / "drafts_for_tui.py"), *shlex.split(action)])


def make_ws(tmp_path: Path, action: str, *, architect: bool = True, worker: str = "true") -> Path:
    """T-101 done; with a ``worker`` other than `true`, also T-102 pending, for a tick to do."""
    root = tmp_path / "proj"
    init_workspace(root, project="proj", commit=False)
    pending = ("\n- [ ] `T-102` Wait a while\n  - verify: `true`\n  - context_files: [greet.txt]\n  - retries: 0\n"
               if worker != "true" else "")
    (root / "docs" / "MASTER_PLAN.md").write_text(PLAN + pending)
    (root / "greet.txt").write_text("hello\n")
    section = f'[architect]\npreset = "command"\ncommand = """{fake(action)}"""\ntimeout = "30s"\n' if architect else ""
    agent = ('[agent]\npreset = "script"\n' if not architect
             else f'[agent]\npreset = "command"\ncommand = """{worker}"""\n')
    (root / "memento.toml").write_text(f'{agent}[verify]\ntimeout = "20s"\n[sandbox]\nmode = "none"\n'
                                       f'env = ["FAKE_DRAFTER_PROMPT"]\n{section}')  # what the fake drafter reads
    git(root, "add", "-A")
    git(root, "commit", "-qm", "setup")
    return root


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".git" not in p.parts and ".memento" not in p.parts and "logs" not in p.parts}


def log(root: Path) -> list[str]:
    return git(root, "log", "--format=%s").splitlines()


async def type_brief(app, pilot, brief: str) -> None:
    """`D`, the brief typed key by key, F2."""
    await pilot.press("D")
    assert await wait_for(pilot, lambda: isinstance(app.screen, BriefComposer))
    for ch in brief:
        await pilot.press("enter" if ch == "\n" else ch)
    await pilot.press("f2")


async def compose_and_submit(app, pilot, brief: str) -> None:
    """`D`, the brief, F2, and the dry run's result (or its error) on screen."""
    await type_brief(app, pilot, brief)
    assert await wait_for(pilot, lambda: isinstance(app.screen, DraftScreen))
    assert await wait_for(pilot, lambda: app.screen.result is not None or "could not run" in screen_text(app),
                          tries=1200)
    await pilot.pause()


async def drop(app, pilot, key: str = "escape") -> None:
    """Leave the draft screen without keeping anything."""
    await pilot.press(key)
    assert await wait_for(pilot, lambda: not isinstance(app.screen, DraftScreen))
    await settle(app, pilot)


async def test_D_drafts_shows_the_checks_and_the_diff_and_y_keeps_it(tmp_path, git_env, monkeypatch):
    prompt = tmp_path / "prompt.txt"
    monkeypatch.setenv("FAKE_DRAFTER_PROMPT", str(prompt))
    root = make_ws(tmp_path, "good")
    before, commits = tree(root), log(root)
    app = MementoApp(root, show_clock=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await compose_and_submit(app, pilot, "Greet loudly\nand greet at all")
        text = strip_ws(screen_text(app))
        assert app.screen.proposal is not None, text
        assert "Proposed: 2 new task(s) T-201, T-202" in text
        assert "1 warning(s)" in text
        assert "T-201 fails as it should" in text  # red first: its verify fails on the current tree
        assert "T-202 passes already" in text and "it proves nothing" in text
        assert "+- [ ] `T-201` [MODULE:greet] Greet loudly" in text  # the diff, as the plan's lines
        assert "+ - verify: `grep -q LOUD greet.txt`" in text
        # The dry run changed nothing on disk or in git.
        assert tree(root) == before and log(root) == commits
        await pilot.press("y")
        assert await wait_for(pilot, lambda: not isinstance(app.screen, DraftScreen), tries=1200)
        await settle(app, pilot)
        # Back on the dashboard, which reads the kept plan: paused, three tasks.
        assert await wait_for(pilot, lambda: "PAUSED" in screen_text(app) and "T-202" in screen_text(app))
    assert "Greet loudly\nand greet at all" in prompt.read_text()  # the brief reached the drafter
    plan = parse_plan(root / "docs" / "MASTER_PLAN.md")
    assert [t.id for t in plan.tasks] == ["T-101", "T-201", "T-202"]
    assert plan.task("T-101").status == "x" and plan.task("T-201").status == " "
    assert plan.meta.tick_mode == "paused"
    assert log(root)[1:] == commits and log(root)[0] == "memento: plan drafted from the dashboard"
    changed = git(root, "show", "--name-only", "--format=", "HEAD").split()
    assert sorted(changed) == ["docs/MASTER_PLAN.md", "docs/PROJECT_MAP.md", "docs/TICK_STATUS.md"]  # + its entry
    assert git(root, "status", "--porcelain", "--", "docs/MASTER_PLAN.md", "docs/PROJECT_MAP.md") == ""


async def test_y_keeps_nothing_when_a_person_changed_the_plan_since_the_dry_run(tmp_path, git_env):
    root = make_ws(tmp_path, "good")
    commits = log(root)
    app = MementoApp(root, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await compose_and_submit(app, pilot, "Greet loudly")
        assert app.screen.proposal is not None
        plan = root / "docs" / "MASTER_PLAN.md"
        edited = plan.read_text() + "\n<!-- a person's own line -->\n"
        plan.write_text(edited)  # the person edits the plan while reading the proposal
        await pilot.press("y")
        assert await wait_for(pilot, lambda: not isinstance(app.screen, DraftScreen), tries=1200)
        await settle(app, pilot)
        assert any("not kept" in n.message and "changed since the dry run" in n.message
                   for n in app._notifications)  # noqa: SLF001
    assert plan.read_text() == edited and log(root) == commits  # the person's plan, no draft, no commit


async def test_the_progress_line_follows_the_draft_while_it_runs(tmp_path, git_env):
    flag = tmp_path / "go"
    root = make_ws(tmp_path, f"wait {shlex.quote(str(flag))} good")
    app = MementoApp(root, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await type_brief(app, pilot, "Greet")
        assert await wait_for(pilot, lambda: Path(f"{flag}.started").exists(), tries=1200)
        assert await wait_for(pilot, lambda: "drafting: the command agent writes the plan" in screen_text(app))
        assert app.screen.result is None and "nothing changes until you press y" in screen_text(app)
        flag.write_text("go")
        assert await wait_for(pilot, lambda: app.screen.result is not None, tries=1200)
        await pilot.pause()
        text = screen_text(app)
        assert "Proposed: 2 new task(s)" in text and "drafting: the command agent" not in text
        await drop(app, pilot, "n")


async def test_a_running_tick_holds_the_draft_until_it_has_finished(tmp_path, git_env):
    """The tick holds the tick lock: the draft waits for it (and says so) instead of failing."""
    flag = tmp_path / "go"
    root = make_ws(tmp_path, "good", worker=fake(f"wait {shlex.quote(str(flag))} work"))
    app = MementoApp(root, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("t")
        assert await wait_for(pilot, lambda: Path(f"{flag}.started").exists(), tries=1200)
        assert app.ticking
        await type_brief(app, pilot, "Greet")
        assert await wait_for(pilot, lambda: "a tick is running: the draft starts when it has finished"
                              in screen_text(app))
        assert not app.screen.started
        flag.write_text("go")
        assert await wait_for(pilot, lambda: app.screen.result is not None, tries=1200)
        await pilot.pause()
        assert app.screen.proposal is not None, screen_text(app)
        assert app.screen.proposal.new_ids == ("T-201", "T-202")
        await drop(app, pilot)
    assert parse_plan(root / "docs" / "MASTER_PLAN.md").task("T-102").status == "x"  # the tick's work
    assert [t.id for t in parse_plan(root / "docs" / "MASTER_PLAN.md").tasks] == ["T-101", "T-102"]  # dropped


async def test_auto_tick_waits_while_a_draft_is_open(tmp_path, git_env):
    now = [1000.0]
    root = make_ws(tmp_path, "good", worker=fake("work"))
    app = MementoApp(root, show_clock=False, watch=False, auto_tick=True, auto_interval=30, clock=lambda: now[0])

    def status():
        return parse_plan(root / "docs" / "MASTER_PLAN.md").task("T-102").status

    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert app.next_tick_at == 1030.0
        await pilot.press("D")
        assert await wait_for(pilot, lambda: isinstance(app.screen, BriefComposer))
        now[0] = 1031.0
        app.every_second()
        assert not app.ticking  # the composer is open: the tick waits
        await pilot.pause()
        assert not app.ticking and status() == " "  # the app's own beat did not start it either
        await pilot.press("escape")
        assert await wait_for(pilot, lambda: not isinstance(app.screen, BriefComposer))
        # Back on the dashboard the due tick starts: this beat, or the app's own beat
        # already did (and the tick may have finished) while the composer was closing.
        app.every_second()
        assert await wait_for(pilot, lambda: status() == "x" and not app.ticking, tries=1200)
        await settle(app, pilot)
    assert status() == "x"


async def test_quit_while_drafting_waits_until_the_draft_has_put_everything_back(tmp_path, git_env):
    flag = tmp_path / "go"
    root = make_ws(tmp_path, f"wait {shlex.quote(str(flag))} good")
    before, commits = tree(root), log(root)
    app = MementoApp(root, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await type_brief(app, pilot, "Greet")
        assert await wait_for(pilot, lambda: Path(f"{flag}.started").exists(), tries=1200)
        await pilot.press("q")
        await pilot.pause()
        assert app.is_running and app.screen.quit_requested
        assert any("closes when it has finished" in n.message for n in app._notifications)  # noqa: SLF001
        flag.write_text("go")
        assert await wait_for(pilot, lambda: not app.is_running, tries=1200)
    assert tree(root) == before and log(root) == commits  # the dry run put everything back before the exit


@pytest.mark.parametrize("action", ["no_verify", "mark_done"])
async def test_a_refused_draft_shows_its_reasons_and_cannot_be_kept(tmp_path, git_env, action):
    root = make_ws(tmp_path, action)
    before, commits = tree(root), log(root)
    app = MementoApp(root, show_clock=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await compose_and_submit(app, pilot, "Greet badly")
        text = strip_ws(screen_text(app))
        assert app.screen.proposal is None and app.screen.result.outcome == "refused", text
        assert "Refused: the draft cannot be kept" in text
        assert "T-201" in text and "Reasons (the draft is refused)" in text
        await pilot.press("y")  # nothing to keep
        await pilot.pause()
        assert isinstance(app.screen, DraftScreen)
        await drop(app, pilot)
    assert tree(root) == before and log(root) == commits


async def test_the_drafters_markup_and_escapes_are_shown_literally(tmp_path, git_env):
    root = make_ws(tmp_path, "hostile")
    app = MementoApp(root, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await compose_and_submit(app, pilot, "Greet")
        text = screen_text(app)
        assert app.screen.proposal is not None, text
        assert "Greet [bold red]loudly[/] [link=file:///etc/passwd]x[/link]" in text
        assert "[bold red]map[/]" in text
        # The escapes are gone (never sent to the terminal), not shown as text either.
        assert "\x1b" not in text and "cHduZWQ=" not in text and "[31m" not in text
        await pilot.press("escape")
        await settle(app, pilot)


async def test_an_empty_brief_is_refused_in_the_composer_and_no_drafter_is_an_error(tmp_path, git_env):
    root = make_ws(tmp_path, "good", architect=False)  # [agent] preset script, no [architect]: no drafter
    before, commits = tree(root), log(root)
    app = MementoApp(root, show_clock=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("D")
        assert await wait_for(pilot, lambda: isinstance(app.screen, BriefComposer))
        await pilot.press("space", "enter", "f2")
        assert await wait_for(pilot, lambda: "the brief is empty" in screen_text(app))
        assert isinstance(app.screen, BriefComposer)
        for ch in "Greet":
            await pilot.press(ch)
        await pilot.press("f2")
        assert await wait_for(pilot, lambda: isinstance(app.screen, DraftScreen))
        assert await wait_for(pilot, lambda: "could not" in screen_text(app).lower(), tries=1200)
        text = strip_ws(screen_text(app))
        assert "Traceback" not in text and app.screen.proposal is None
        assert "drafting needs an agent" in text and "Why it could not draft" in text
        await drop(app, pilot)
    assert tree(root) == before and log(root) == commits


async def test_the_palette_and_the_help_name_the_draft_key(tmp_path, git_env):
    root = make_ws(tmp_path, "good")
    app = MementoApp(root, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert "draft the plan from a brief" in strip_ws(screen_text(app))
        await pilot.press("escape")
        await app.run_action("command_palette")
        await pilot.pause()
        for ch in "Draft plan":
            await pilot.press(ch)
        await pilot.pause(0.3)
        assert "Draft plan [D]" in screen_text(app)
        await pilot.press("enter")
        assert await wait_for(pilot, lambda: isinstance(app.screen, BriefComposer))
        await pilot.press("escape")
        assert await wait_for(pilot, lambda: not isinstance(app.screen, BriefComposer))


def test_the_demo_drafts_without_a_model(demo, snap_compare):
    """The demo's [architect] (memento_core/templates/demo_drafter.py): each line of the brief, one task, red first."""

    async def run_before(pilot) -> None:
        app = pilot.app
        await settle(app, pilot)
        await compose_and_submit(app, pilot, "Add a power function\nPrint the version")
        screen = app.screen
        assert screen.proposal is not None and screen.proposal.new_ids == ("T-401", "T-402")
        assert [(r.task_id, r.passed) for r in screen.proposal.red] == [("T-401", False), ("T-402", False)]
        await settle(app, pilot)

    app = MementoApp(demo, show_clock=False, watch=False)
    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)
