"""keymap.py: every key a Binding with an id, remapped from memento.toml [keys]; the footer keeps to 80 columns."""

from __future__ import annotations

from memento_tui.app import MementoApp
from memento_tui.keymap import conflicts, key_line, user_keymap
from tests.tui.pilot import messages, plan_of, screen_text, settle, wait_for


async def test_keys_are_remapped_from_memento_toml(scripted):
    toml = scripted / "memento.toml"
    toml.write_text(toml.read_text() + '\n[keys]\npause = "f6"\nnot_an_action = "z"\n')
    app = MementoApp(scripted, show_clock=False)
    async with app.run_test(size=(120, 40)) as pilot:
        # Looked for as it comes: a notice lasts its few seconds of wall time, which a loaded machine's
        # settle() can outlast.
        assert await wait_for(pilot, lambda: any("not_an_action" in m for m in messages(app)), tries=400)
        await settle(app, pilot)
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


def test_user_keymap_takes_the_known_actions_and_names_the_rest():
    assert user_keymap({"tick": "f5", "tick_now": "f6", "log": "f7"}) == ({"tick": "f5", "log": "f7"}, ["tick_now"])


def test_a_remap_onto_another_actions_key_is_refused_and_a_swap_is_not():
    assert conflicts({"tick": "q"}) == {"tick": "quit"}
    assert conflicts({"log": "?"}) == {"log": "help"}  # "?" is question_mark, help's key
    assert conflicts({"tick": "q", "quit": "t"}) == {}  # a swap leaves every key one action
    assert conflicts({"tick": "f5", "log": "f5"}) == {"tick": "log", "log": "tick"}
    assert conflicts({"tick": "f5"}) == {}
    # tick refused keeps its own t, so log cannot have t either
    assert conflicts({"tick": "q", "log": "t"}) == {"tick": "quit", "log": "tick"}


def test_key_line_finds_the_action_in_the_keys_table_only():
    toml = ('[agent]\ntick = "not here"\n\n[keys]  # the dashboard\n# tick = "f4"\n"log" = "f7"\n'
            'tick = "f5"\n\n[schedule]\nquit = "x"\n')
    assert key_line(toml, "tick") == 7
    assert key_line(toml, "log") == 6
    assert key_line(toml, "quit") == 0
