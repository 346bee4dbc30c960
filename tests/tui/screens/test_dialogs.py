"""The dashboard's answer to a worker's question (SPEC §18): "Needs you" shows the question, ``w``
opens a composer that shows it with its choices, and the answer lands in the files (Pilot tests)."""

from __future__ import annotations

import re

from memento_core.notes import parse_notes
from memento_core.plan.edits import edit_plan
from memento_core.plan.scan import parse_plan
from memento_core.questions import save_question
from memento_core.workspace import Workspace
from memento_tui.app import MementoApp
from memento_tui.screens.dialogs import AnswerComposer
from tests.tui.pilot import screen_text, select_task, settle

QUESTION = "Which rounding for div: [b]banker's[/b] or half-up?\n\nThe plan says neither.\n\n- [ ] banker's\n- [ ] half-up\n"


def _ask(root, task_id: str = "T-202", text: str = QUESTION) -> None:
    ws = Workspace(root)
    first = text.splitlines()[0]
    edit_plan(ws.plan_path, lambda e: (e.set_status(task_id, "?"), e.set_field(task_id, "question", first),
                                       e.set_field(task_id, "questions", "1")))
    choices = tuple(line[6:] for line in text.splitlines() if line.startswith("- [ ] "))
    save_question(ws, task_id, text.strip(), first, choices, "2026-11-29T15:00:00Z")


async def test_needs_you_shows_the_question_and_w_answers_it_with_a_choice(scripted):
    _ask(scripted)
    app = MementoApp(scripted, show_clock=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        text = screen_text(app)
        assert "T-202 asks: Which rounding for div: [b]banker's[/b] or half-up?" in text  # literal, no markup
        assert "answer it (w)" in text and "ASKS (w)" in text
        select_task(app, "T-101")  # not waiting: w takes the first question waiting
        await pilot.press("w")
        await pilot.pause()
        assert isinstance(app.screen, AnswerComposer)
        shown = screen_text(app)
        assert "T-202 asks" in shown and "The plan says neither." in shown
        assert "1. banker's" in shown and "2. half-up" in shown
        await pilot.press("down")  # the second choice
        await pilot.press("enter")
        await pilot.press("f2")
        await settle(app, pilot)
        task = parse_plan(scripted / "docs" / "MASTER_PLAN.md").task("T-202")
        assert (task.status, task.retries) == (" ", 1)  # its retries as they were
        [note] = [n for n in parse_notes(scripted / "docs" / "HUMAN_NOTES.md") if n.is_answer]
        assert (note.target, note.text, note.source) == ("T-202", "half-up", "dashboard")
        assert "asks:" not in screen_text(app)


async def test_a_written_answer_and_escape_changes_nothing(scripted):
    _ask(scripted, text="Where is the API key?\n")
    plan_before = (scripted / "docs" / "MASTER_PLAN.md").read_bytes()
    app = MementoApp(scripted, show_clock=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        select_task(app, "T-202")
        await pilot.press("w")
        await pilot.pause()
        assert isinstance(app.screen, AnswerComposer) and not app.screen.query("#answer-choices")
        await pilot.press("escape")
        await settle(app, pilot)
        assert (scripted / "docs" / "MASTER_PLAN.md").read_bytes() == plan_before
        await pilot.press("w")
        await pilot.pause()
        app.screen.query_one("#answer-input").load_text("in ~/.config/calc/key")
        await pilot.press("f2")
        await settle(app, pilot)
        [note] = [n for n in parse_notes(scripted / "docs" / "HUMAN_NOTES.md") if n.is_answer]
        assert note.text == "in ~/.config/calc/key"
        assert parse_plan(scripted / "docs" / "MASTER_PLAN.md").task("T-202").status == " "
        await pilot.press("w")
        await pilot.pause()
        assert not isinstance(app.screen, AnswerComposer)
        assert any("no question waits" in n.message for n in app._notifications)


def test_the_browser_view_shows_the_question_and_answers_it(demo, tmp_path):
    """`memento-tui --serve`: a real Chromium sees the question; a page's websocket (the keys a
    person types in the browser) answers it, and the note says it came from the browser."""
    import asyncio

    import aiohttp
    import pytest

    from memento_tui.browser import (
        BrowserUnavailable,
        Chromium,
        free_port,
        look_at,
        serve_process,
        stop_group,
        wait_for_http,
    )
    from tests.tui.test_serve import TOKEN, token_file

    _ask(demo)
    port = free_port()
    proc = serve_process(demo, port, tmp_path / "serve.log", "--token-file", str(token_file(tmp_path)))
    url = f"http://127.0.0.1:{port}/?token={TOKEN}"

    async def answer_in_the_page() -> None:
        async with aiohttp.ClientSession(cookies={f"memento_token_{port}": TOKEN}) as session, \
                session.ws_connect(f"http://127.0.0.1:{port}/ws?width=120&height=40") as ws:
            await ws.send_str('["resize", {"width": 120, "height": 40}]')
            seen = ""

            async def until(words: str, seconds: float = 60) -> None:
                nonlocal seen
                deadline = asyncio.get_running_loop().time() + seconds
                # What the page shows, its styles and cursor moves left out (a styled word may be
                # drawn as several runs).
                while words not in re.sub(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>]", "", seen):
                    left = deadline - asyncio.get_running_loop().time()
                    assert left > 0, f"never saw {words!r}"
                    try:
                        msg = await ws.receive(timeout=left)
                    except TimeoutError:
                        continue
                    if msg.type in (aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY):
                        data = msg.data if isinstance(msg.data, str) else msg.data.decode("utf-8", "replace")
                        seen += data
                    elif msg.type in (aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR):
                        raise AssertionError("the dashboard closed its websocket")

            await until("Progress")
            await until("answer it (w)")  # the question is on the screen: the dashboard has read the plan
            await ws.send_str('["stdin", "w"]')
            await until("Answer (F2)")
            await ws.send_str('["stdin", "2"]')  # the second choice, by its number
            await asyncio.sleep(0.5)  # the pick is made before F2 reads it
            await ws.send_str('["stdin", "\\u001bOQ"]')  # F2
            notes = demo / "docs" / "HUMAN_NOTES.md"
            for _ in range(300):
                if any(n.is_answer for n in parse_notes(notes)):
                    return
                await asyncio.sleep(0.1)

    try:
        wait_for_http(url, proc)
        try:
            browser = Chromium().start()
        except BrowserUnavailable as exc:
            pytest.skip(f"no usable headless Chromium ({exc})")
        try:
            view = look_at(url, expect=("T-202 asks: Which rounding for div",), browser=browser)
        finally:
            browser.close()
        assert "T-202 asks: Which rounding for div" in view.text
        asyncio.run(answer_in_the_page())
    finally:
        stop_group(proc)
    [note] = [n for n in parse_notes(demo / "docs" / "HUMAN_NOTES.md") if n.is_answer]
    assert (note.target, note.text, note.source) == ("T-202", "half-up", "browser")
    assert parse_plan(demo / "docs" / "MASTER_PLAN.md").task("T-202").status == " "
