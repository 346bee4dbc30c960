"""screens/help.py: every key and what it does, as memento.toml [keys] remapped them."""

from __future__ import annotations

import re

from memento_tui.app import MementoApp
from memento_tui.screens.help import HelpScreen
from tests.tui.pilot import screen_text, settle, wait_for
from tests.tui.snaps import make, press, ready


def test_help_screen(scripted, snap_compare):
    assert snap_compare(make(scripted), terminal_size=(120, 40), run_before=ready(press("question_mark")))


async def test_the_help_names_the_keys_as_memento_toml_remapped_them(scripted):
    toml = scripted / "memento.toml"
    toml.write_text(toml.read_text() + '\n[keys]\nlog = "f6"\ntick = "f5"\n')
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("question_mark")
        assert await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        shown = dict((action, key) for key, action in
                     re.findall(r"█\s+(\S+)\s+(log|tick|diff|quit)\s{2}", screen_text(app)))
        assert shown == {"log": "f6", "tick": "f5", "diff": "d", "quit": "q"}, screen_text(app)
        await pilot.press("escape")
        assert await wait_for(pilot, lambda: not isinstance(app.screen, HelpScreen))
