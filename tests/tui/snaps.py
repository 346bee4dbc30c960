"""What the snapshot tests (pytest-textual-snapshot) share: the app as they show it and the steps before the shot.

The workspace is the scripted one: fixed dates, fixed commit ids, the clock
hidden, no temporary path on screen. Each baseline is keyed by its test file and
name (`__snapshots__/<file>/<test>.svg` beside the file). Update them with
`pytest tests/tui --snapshot-update` after a deliberate change, and look at them.
"""

from __future__ import annotations

from textual.pilot import Pilot

from memento_tui.app import MementoApp
from tests.tui.pilot import select_task, settle


def make(root) -> MementoApp:
    return MementoApp(root, show_clock=False, watch=False)


def ready(*steps):
    async def run_before(pilot) -> None:
        app = pilot.app
        await settle(app, pilot)
        for step in steps:
            result = step(app)
            if result is not None:
                await result
            await settle(app, pilot)

    return run_before


def on_task(task_id):
    return lambda app: select_task(app, task_id)


def press(*keys):
    async def run(app):
        await Pilot(app).press(*keys)

    return run
