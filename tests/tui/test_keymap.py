"""keymap.py: every key a Binding with an id, remapped from memento.toml [keys]; the footer keeps to 80 columns."""

from __future__ import annotations

from memento_tui.app import MementoApp
from tests.tui.pilot import messages, plan_of, screen_text, settle


async def test_keys_are_remapped_from_memento_toml(scripted):
    toml = scripted / "memento.toml"
    toml.write_text(toml.read_text() + '\n[keys]\npause = "f6"\nnot_an_action = "z"\n')
    app = MementoApp(scripted, show_clock=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert any("not_an_action" in m for m in messages(app))
        await pilot.press("p")  # no longer pause
        await settle(app, pilot)
        assert plan_of(scripted).meta.tick_mode == "auto"
        await pilot.press("f6")
        await settle(app, pilot)
        assert plan_of(scripted).meta.tick_mode == "paused"


async def test_the_footer_at_80_columns_shows_log_diff_help_and_quit(scripted):
    app = MementoApp(scripted, show_clock=False, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        footer = screen_text(app).splitlines()[-1]
        for word in ("Log", "Diff", "Help", "Quit"):
            assert word in footer, footer
