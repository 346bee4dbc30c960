"""Regenerate screenshots/*.svg from the real app on the demo project: `python -m memento_tui.screenshots`.

Builds the demo in a temporary folder, runs real ticks until T-304 blocks,
then drives the dashboard with Pilot and saves an SVG per view. Run it again
whenever the dashboard changes, and commit the SVGs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
from pathlib import Path

from textual.worker import WorkerCancelled

from memento_core.demo import create_demo
from memento_core.tick.__main__ import run_tick

from .app import MementoApp

SIZE = (120, 40)
OUT = Path(__file__).resolve().parent.parent / "screenshots"


def _identity() -> None:
    # A fresh machine may have no git identity; the demo commits anyway.
    os.environ.setdefault("GIT_AUTHOR_NAME", "Memento Demo")
    os.environ.setdefault("GIT_AUTHOR_EMAIL", "demo@memento.invalid")
    os.environ.setdefault("GIT_COMMITTER_NAME", "Memento Demo")
    os.environ.setdefault("GIT_COMMITTER_EMAIL", "demo@memento.invalid")


async def settle(app, pilot) -> None:
    """Wait until the app's workers are done and the messages they posted are handled.

    A worker that a newer one of its exclusive group replaced ends cancelled:
    that is done as well (textual's ``wait_for_complete`` raises on it).
    """
    for _ in range(3):
        await pilot.pause()
        for worker in list(app.workers):
            try:
                await worker.wait()
            except WorkerCancelled:
                pass


async def _shoot(root: Path, out: Path) -> list[Path]:
    saved: list[Path] = []
    app = MementoApp(root, show_clock=False, watch=False)
    async with app.run_test(size=SIZE) as pilot:

        async def settle_here() -> None:
            await settle(app, pilot)
            await pilot.pause(0.2)

        def save(name: str) -> None:
            app.save_screenshot(f"{name}.svg", str(out))
            saved.append(out / f"{name}.svg")

        await settle_here()
        save("main")
        table = app.screen.query_one("#task-table")
        table.move_cursor(row=table.get_row_index("T-304"), animate=False)
        await pilot.press("enter")
        await settle_here()
        save("blocked-task")
        await pilot.press("enter")
        await pilot.press("l")
        await settle_here()
        save("tick-log")
        await pilot.press("escape")
        table.move_cursor(row=table.get_row_index("T-202"), animate=False)
        await pilot.press("d")
        await settle_here()
        save("diff")
        await pilot.press("escape")
        table.move_cursor(row=table.get_row_index("T-304"), animate=False)
        await pilot.press("n")
        await settle_here()
        app.screen.query_one("#note-input").load_text("factor() needs a quantum computer: skip this one")
        await settle_here()
        save("notes-composer")
        await pilot.press("escape")
        await settle_here()
        await pilot.press("y")  # the typed note: discard it (escape asks first)
        await pilot.press("m")  # the Report view (memento report, what needs a person first)
        await settle_here()
        save("report")
        await pilot.press("escape")
        await pilot.press("question_mark")
        await settle_here()
        save("help")
        await pilot.press("escape")
        await pilot.press("D")  # the plan draft: the demo's model-free drafter, red first
        await settle_here()
        area = app.screen.query_one("#brief-input")
        area.cursor_blink = False
        area.load_text("Add a power function\nPrint the version with --version")
        await pilot.press("f2")
        await settle_here()
        save("plan-draft")
        await pilot.press("escape")
    return saved


async def _shoot_narrow(root: Path, out: Path) -> list[Path]:
    """The main view at 80x24 (controls hidden, panes stacked)."""
    app = MementoApp(root, show_clock=False, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.pause(0.2)
        app.save_screenshot("main-80x24.svg", str(out))
    return [out / "main-80x24.svg"]


DEMO_QUESTION = """Should `divide` by zero raise ZeroDivisionError or return None?

The plan says "divide numbers"; calc/cli.py prints any exception as an error,
and the tests say nothing about zero.

- [ ] raise ZeroDivisionError (the CLI prints it)
- [ ] return None (the CLI prints "undefined")
"""


async def _shoot_question(root: Path, out: Path) -> list[Path]:
    """A worker's question (SPEC §18) in "Needs you" and the answer composer (``w``): T-201 waits
    ``[?]`` with what the tick writes when its worker asks (tick/asking.py)."""
    from memento_core.plan.edits import edit_plan
    from memento_core.questions import first_line_of, read_question, save_question
    from memento_core.workspace import Workspace

    ws = Workspace(root)
    asked = ws.question_path
    asked.parent.mkdir(parents=True, exist_ok=True)
    asked.write_text(DEMO_QUESTION, encoding="utf-8")
    text, first, choices = read_question(asked)
    asked.unlink()
    save_question(ws, "T-201", text, first_line_of(text), choices)
    edit_plan(ws.plan_path, lambda e: (e.set_field("T-201", "question", first), e.set_field("T-201", "questions", "1"),
                                       e.set_status("T-201", "?")))
    app = MementoApp(root, show_clock=False, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("w")
        for _ in range(3):
            await pilot.pause()
        app.screen.query_one("#answer-input").cursor_blink = False
        await pilot.pause(0.2)
        app.save_screenshot("answer-composer.svg", str(out))
    return [out / "answer-composer.svg"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m memento_tui.screenshots", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help=f"where the SVGs go (default: {OUT})")
    args = parser.parse_args(argv)
    _identity()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="memento-shots-") as tmp:
        root = create_demo(Path(tmp) / "calc")
        for _ in range(10):  # seven passes, then T-304 fails twice and blocks
            run_tick(root)
        for path in asyncio.run(_shoot(root, args.out)) + asyncio.run(_shoot_narrow(root, args.out)):
            print(f"[ok] {path}")
        asking = create_demo(Path(tmp) / "asking" / "calc")
        for _ in range(2):  # T-101 and T-102 pass; T-201, next, asks a question
            run_tick(asking)
        for path in asyncio.run(_shoot_question(asking, args.out)):
            print(f"[ok] {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
