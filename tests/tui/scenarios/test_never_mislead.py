"""Issue 25, what a person sees: the dashboard never loses a keystroke, never moves the selection
under a person's hands, uses the terminal's real size, and never says two contrary things.

Each test drives the real App through Pilot (or a real terminal for the size) and reads
the files or the screen's text afterwards.
"""

from __future__ import annotations

from pathlib import Path

from textual import events

from memento_core.notes import parse_notes
from memento_tui.app import MementoApp
from memento_tui.screens.dialogs import NoteComposer
from tests.tui.pilot import screen_text, select_task, settle, wait_for

LONG = ("Please keep evaluate() to one binary operation, and when you touch the parser, "
        "write a test for every operator first: + - * / with ints and floats, then spaces. END-OF-NOTE")


def _notes_for(root, target: str) -> list[str]:
    return [n.text for n in parse_notes(root / "docs" / "HUMAN_NOTES.md") if n.target == target]


async def _compose_for(app, pilot, task_id: str) -> None:
    """The note composer open for ``task_id``, its text field focused."""
    await settle(app, pilot)
    select_task(app, task_id)
    await pilot.press("n")
    assert await wait_for(pilot, lambda: isinstance(app.screen, NoteComposer))


async def test_a_long_note_typed_fast_and_sent_at_once_with_f2_is_kept_whole(scripted):
    """The keys arrive in one burst (a fast typist, a terminal's paste without bracketing): F2 comes last."""
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await _compose_for(app, pilot, "T-202")
        for ch in LONG:
            app.post_message(events.Key(ch if ch != " " else "space", ch))
        app.post_message(events.Key("f2", None))
        await settle(app, pilot)
        assert await wait_for(pilot, lambda: not isinstance(app.screen, NoteComposer))
        await settle(app, pilot)
        assert _notes_for(scripted, "T-202")[-1] == LONG


async def test_a_pasted_note_sent_at_once_with_f2_is_kept_whole(scripted):
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await _compose_for(app, pilot, "T-202")
        app.post_message(events.Paste(LONG + "\nsecond line"))
        app.post_message(events.Key("f2", None))
        await settle(app, pilot)
        assert await wait_for(pilot, lambda: not isinstance(app.screen, NoteComposer))
        await settle(app, pilot)
        assert _notes_for(scripted, "T-202")[-1] == LONG + "\nsecond line"


def _block_the_last_task(root) -> None:
    from memento_core.plan.edits import edit_plan

    def apply(e) -> None:
        e.set_status("T-304", "!")
        e.set_field("T-304", "retries", "3")
        e.update_counters()

    edit_plan(root / "docs" / "MASTER_PLAN.md", apply)


async def test_r_on_the_blocked_last_row_keeps_the_selection_and_s_skips_that_task(scripted):
    from memento_core.plan.scan import parse_plan
    from memento_tui.screens.dialogs import AskScreen

    _block_the_last_task(scripted)
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        pane = app.screen.query_one("TaskPane")
        select_task(app, "T-304")
        assert pane.selected_id() == "T-304"
        await pilot.press("r")
        await settle(app, pilot)
        assert parse_plan(scripted / "docs" / "MASTER_PLAN.md").task("T-304").status == " "
        assert pane.selected_id() == "T-304"
        await pilot.press("s")
        assert await wait_for(pilot, lambda: isinstance(app.screen, AskScreen))
        assert "Skip T-304:" in screen_text(app)
        await pilot.press(*"not needed", "enter")
        await settle(app, pilot)
        assert parse_plan(scripted / "docs" / "MASTER_PLAN.md").task("T-304").status == "-"
        assert pane.selected_id() == "T-304"
        # A blocked row in the middle (T-201, two lines high) too.
        select_task(app, "T-201")
        await pilot.press("r")
        await settle(app, pilot)
        assert pane.selected_id() == "T-201"


def test_a_real_120x40_terminal_wins_over_exported_columns_and_lines(scripted):
    """COLUMNS=160 LINES=50 left by an earlier shell: the screen is the terminal's 120x40 all the same."""
    import re

    from memento_core.plan.scan import parse_plan
    from tests.tui.scenarios.pty_screen import PtyDashboard

    plan = parse_plan(scripted / "docs" / "MASTER_PLAN.md")
    phases = [p.id for p in plan.phases]
    done = sum(t.status == "x" for t in plan.tasks)
    dashboard = PtyDashboard(scripted, (120, 40), {"COLUMNS": "160", "LINES": "50"})
    try:
        def complete(text: str) -> bool:
            return f"{done}/{len(plan.tasks)}" in text and all(
                re.search(rf"{re.escape(name)} .*\d+%", text) for name in phases)

        text = dashboard.read_until(lambda t: complete(t) and "Quit" in t)
    finally:
        dashboard.close()
    assert complete(text), text
    lines = text.splitlines()
    progress = next(line for line in lines if "Progress" in line)
    assert progress.rstrip().endswith("╮") and len(progress.rstrip()) == 120, progress
    assert "Quit" in lines[39], lines[39]  # the footer is on the terminal's last line, not the 50th


LONG_TITLE = "Factor numbers with a quantum computer, then explain every step in the usage notes"


async def test_cut_titles_end_in_an_ellipsis_and_progress_is_as_tall_as_controls(scripted):
    from memento_core.locks import atomic_write_text

    plan = scripted / "docs" / "MASTER_PLAN.md"
    atomic_write_text(plan, plan.read_text().replace("Factor numbers with a quantum computer", LONG_TITLE))
    for size in ((100, 30), (120, 40), (160, 50)):
        app = MementoApp(scripted, show_clock=False, watch=False)
        async with app.run_test(size=size) as pilot:
            await settle(app, pilot)
            text = screen_text(app)
            row = next(line for line in text.splitlines() if "T-304" in line and "│" in line)
            title = row.split("Phase 3", 1)[1].split("│")[0].strip()
            assert title.endswith("…") and LONG_TITLE.startswith(title[:-1]), (size, row)
            controls, progress = (app.screen.query_one(s).region for s in ("#controls", "#progress"))
            assert progress.height >= controls.height and progress.y == controls.y, (size, controls, progress)


def _waiting_agent(root, release) -> None:
    """The demo's agent becomes tests/agents/waits_for_a_person.py: a tick runs until ``release`` says go."""
    import subprocess
    import sys

    agents = Path(__file__).resolve().parents[2] / "agents"
    release.write_text("")
    command = f"{sys.executable} {agents / 'waits_for_a_person.py'} {release} go"
    (root / "memento.toml").write_text(f'[agent]\npreset = "command"\ncommand = """{command}"""\n'
                                       f'timeout = "2min"\n[sandbox]\nmode = "none"\n')
    subprocess.run(["git", "commit", "-qam", "a waiting agent"], cwd=root, check=True)


def test_a_hand_tick_says_running_not_idle_and_q_q_says_what_it_waits_for(demo, tmp_path):
    """Nothing ticks by itself (IDLE); `t` starts one: the header says it runs, and only that. `q q`
    closes the screen at once and the terminal says the tick is finishing (never a blank screen)."""
    from tests.tui.scenarios.pty_screen import PtyDashboard, plain

    release = tmp_path / "release"
    _waiting_agent(demo, release)
    dashboard = PtyDashboard(demo, (120, 40), {})
    try:
        header = lambda t: t.splitlines()[0]  # noqa: E731
        text = dashboard.read_until(lambda t: "IDLE" in header(t) and "Quit" in t)
        assert "IDLE nothing will tick" in header(text), header(text)
        dashboard.press("t")
        text = dashboard.read_until(lambda t: "TICK RUNNING" in header(t))
        assert "TICK RUNNING" in header(text) and "IDLE" not in header(text), header(text)
        assert "● RUNNING" in header(text)
        dashboard.press("q")
        text = dashboard.read_until(lambda t: "q again closes now" in t, timeout=20)
        assert "q again closes now" in text, (dashboard.proc.poll(), plain(bytes(dashboard.raw))[-3000:])
        pressed_at = len(dashboard.raw)  # what the dashboard writes after the second q
        dashboard.press("q")
        said = "the dashboard closed; the tick it started"
        tail = lambda: " ".join(plain(bytes(dashboard.raw[pressed_at:])).split())  # noqa: E731
        for _ in range(400):
            if "is finishing" in tail():
                break
            dashboard.read_until(lambda t: False, timeout=0.3)
        if said not in tail():
            dashboard.dump_threads()  # a hang is shown with every thread's stack, not only a screen
        assert said in tail(), plain(bytes(dashboard.raw[pressed_at:]))[-4000:]
        assert dashboard.proc.poll() is None  # still waiting for the tick, and saying so
        release.write_text("go")
        assert dashboard.proc.wait(120) == 0
    finally:
        release.write_text("go")
        dashboard.close()


async def test_ctrl_c_says_how_to_quit_in_plain_words(scripted):
    from tests.tui.pilot import messages

    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert "press q to quit the dashboard" in messages(app), messages(app)
        assert not any("[b]" in m or "[/b]" in m for m in messages(app))
        assert "[b]" not in screen_text(app)


async def test_a_remap_onto_quits_key_is_refused_with_file_and_line_and_q_still_quits(scripted):
    from tests.tui.pilot import messages

    toml = scripted / "memento.toml"
    toml.write_text(toml.read_text() + '\n[keys]\nlog = "f6"\ntick = "q"\n')
    line = toml.read_text().splitlines().index('tick = "q"') + 1
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        refused = [m for m in messages(app) if "is refused" in m]
        assert refused and refused[0].startswith(f"{toml}:{line}: [keys] tick = 'q' is refused: that key is quit's")
        assert app.keymap_overrides == {"log": "f6"}
        await pilot.press("q")
        await pilot.pause()
    assert not app.is_running and app.last_outcome is None  # q quit; it did not start a tick


async def test_an_invalid_memento_toml_is_not_called_unconfined(scripted):
    toml = scripted / "memento.toml"
    toml.write_text(toml.read_text() + "\n[sandbox]\nmode = 'sideways'\n")
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(app, pilot)
        header = screen_text(app).splitlines()[0]
        assert "memento.toml" in header and "unconfined" not in header, header


async def test_the_time_left_counts_the_wait_for_the_next_tick(scripted):
    """One task left, a tick every 7 minutes: it is done in about 7 minutes, not in its 0.4 s of work."""
    import re

    from memento_core.plan.edits import edit_plan

    def apply(e) -> None:
        for tid in ("T-201", "T-301", "T-302", "T-303", "T-304"):
            e.set_status(tid, "-")
        e.update_counters()

    edit_plan(scripted / "docs" / "MASTER_PLAN.md", apply)
    app = MementoApp(scripted, auto_tick=True, auto_interval=420, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        # No settle(): the countdown's workers come and go, the screen is what counts.
        assert await wait_for(pilot, lambda: "left: ~" in screen_text(app) and app.next_tick_at, tries=400)
        await pilot.pause()
        left = re.search(r"left: ~(\S+)", screen_text(app)).group(1)
        from memento_core.durations import parse_duration

        assert parse_duration(left) >= 6 * 60, left


async def test_a_key_tmux_keeps_or_no_key_at_all_is_refused_with_file_and_line(scripted):
    """Issue 38 item 9: `reset = "ctrl+b"` (tmux's prefix: it never arrives) and `skip =
    "nonsense_key"` (no key fires it) were taken silently, leaving reset and skip on no key.
    Each is refused with memento.toml:LINE and why; r and s still work; lint and doctor say it."""
    from memento_core.config.load import load_config
    from memento_core.plan.scan import parse_plan
    from tests.tui.pilot import messages

    toml = scripted / "memento.toml"
    toml.write_text(toml.read_text() + '\n[keys]\nreset = "ctrl+b"\nskip = "nonsense_key"\nlog = "f6"\n')
    lines = toml.read_text().splitlines()
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        refused = [m for m in messages(app) if "is refused" in m]
        reset, skip = lines.index('reset = "ctrl+b"') + 1, lines.index('skip = "nonsense_key"') + 1
        assert any(m.startswith(f"{toml}:{reset}: [keys] reset = 'ctrl+b' is refused: ctrl+b is tmux's prefix")
                   for m in refused), refused
        assert any(m.startswith(f"{toml}:{skip}: [keys] skip = 'nonsense_key' is refused: 'nonsense_key' is not "
                                "a key name") for m in refused), refused
        assert app.keymap_overrides == {"log": "f6"}
        select_task(app, "T-201")
        await pilot.press("r")  # reset keeps its own key
        await settle(app, pilot)
        assert parse_plan(scripted / "docs" / "MASTER_PLAN.md").task("T-201").status == " "
    assert load_config(toml).keys["reset"] == "ctrl+b"  # memento.toml itself is valid: the remap is refused
