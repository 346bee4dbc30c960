"""A tick started from the dashboard imports nothing new: the dashboard imported all of
memento_core in its own thread first (memento_core.tick.__main__.preload).

Without it a tick pressed as the dashboard opened failed now and then with "ImportError: cannot
import name 'DEFAULT_GRACE' from partially initialized module 'memento_core.agents.process'":
the tick's thread and the doctor's were importing the agents package at the same moment.

Each check runs in a fresh interpreter, where nothing of the tick is imported yet.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

PROBE = textwrap.dedent("""
    import asyncio, json, sys
    from pathlib import Path
    from memento_tui.app import MementoApp

    root, when = Path(sys.argv[1]), sys.argv[2]

    async def main():
        app = MementoApp(root, show_clock=False, watch=False)
        async with app.run_test(size=(120, 40)) as pilot:
            if when == "after-paint":
                while app.first_paint_at is None:
                    await pilot.pause(0.05)
                await pilot.pause(0.2)
            before = {m for m in sys.modules if m.startswith("memento")}
            app.start_tick()  # the dashboard's `t`, before or after its first paint
            if when == "at-once":
                before = {m for m in sys.modules if m.startswith("memento")}
            while app.ticking:
                await pilot.pause(0.1)
            await app.workers.wait_for_complete()
            outcome = app.last_outcome
            print(json.dumps({"message": outcome.message if outcome else None,
                              "new": sorted({m for m in sys.modules if m.startswith("memento")} - before)}))

    asyncio.run(main())
""")


def _tick_from_a_fresh_dashboard(demo: Path, when: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", PROBE, str(demo), when], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_a_tick_pressed_after_the_first_paint_imports_nothing_new(demo):
    seen = _tick_from_a_fresh_dashboard(demo, "after-paint")
    assert seen["message"] and "passed" in seen["message"], seen
    assert seen["new"] == [], f"modules the tick imported in its own thread: {seen['new']}"


def test_a_tick_pressed_before_the_first_paint_is_preloaded_first(demo):
    seen = _tick_from_a_fresh_dashboard(demo, "at-once")
    assert seen["message"] and "passed" in seen["message"], seen
    assert seen["new"] == [], f"modules the tick imported in its own thread: {seen['new']}"
