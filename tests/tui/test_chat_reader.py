"""The dashboard reads the chat while it runs (SPEC §18, memento_tui/chat_reader.py): a command
from the listed chat is acted on through memento_core and answered, with no tick and no cron."""

from __future__ import annotations

import subprocess

import pytest

from memento_core.plan.scan import parse_plan
from memento_tui.app import MementoApp
from tests.core.telegram_standin import TelegramStandIn
from tests.tui.pilot import settle, wait_for

CHAT, PERSON = 4242, 777
# A chat round starts at the app's once-a-second beat, in a thread: on a loaded machine the
# first one may take many seconds. wait_for returns as soon as its condition holds.
TRIES = 600


@pytest.fixture
def telegram():
    standin = TelegramStandIn()
    standin.start()
    yield standin
    standin.stop()


def with_chat(root, telegram, tmp_path, mode=0o600):
    token = tmp_path / "telegram-token"
    token.write_text(telegram.token)
    token.chmod(mode)
    config = root / "memento.toml"
    config.write_text(config.read_text() + f'\n[chat]\ntelegram = {{ token_file = "{token}", chats = [{CHAT}], '
                                           f'api = "{telegram.api}" }}\n')
    subprocess.run(["git", "commit", "-qam", "chat"], cwd=root, check=True)


async def test_the_dashboard_acts_on_a_chat_command_while_it_runs(demo, telegram, tmp_path):
    with_chat(demo, telegram, tmp_path)
    pause = telegram.say(CHAT, PERSON, "/pause")
    app = MementoApp(demo, show_clock=False)
    async with app.run_test(size=(120, 40)) as pilot:
        app.chat.every = 0.0
        plan = demo / "docs" / "MASTER_PLAN.md"
        assert await wait_for(pilot, lambda: parse_plan(plan).meta.tick_mode == "paused", tries=TRIES)
        assert await wait_for(pilot, lambda: any((s.get("reply_parameters") or {}).get("message_id") == pause
                                                 for s in telegram.sent), tries=TRIES)
        note = telegram.say(CHAT, PERSON, "/note the API moved to v2")
        assert await wait_for(pilot, lambda: "the API moved to v2" in (demo / "docs" / "HUMAN_NOTES.md").read_text(),
                              tries=TRIES)
        assert await wait_for(pilot, lambda: any((s.get("reply_parameters") or {}).get("message_id") == note
                                                 for s in telegram.sent), tries=TRIES)
        await settle(app, pilot)


async def test_a_bad_token_file_is_said_once_and_nothing_is_read(demo, telegram, tmp_path):
    with_chat(demo, telegram, tmp_path, mode=0o640)
    telegram.say(CHAT, PERSON, "/pause")
    app = MementoApp(demo, show_clock=False)
    said = []
    # Before the app runs: its first chat round may end before the test's first line inside (a loaded
    # machine), and a reason is said once.
    original = app.notify
    app.notify = lambda message, **kw: (said.append(message), original(message, **kw))[1]
    async with app.run_test(size=(120, 40)) as pilot:
        app.chat.every = 0.0
        assert await wait_for(pilot, lambda: any("mode 0640" in m for m in said), tries=TRIES)
        await pilot.pause(1.5)  # another round or two: the same reason is not said again
        await settle(app, pilot)
    assert len([m for m in said if "mode 0640" in m]) == 1
    assert telegram.requests == [] and parse_plan(demo / "docs" / "MASTER_PLAN.md").meta.tick_mode == "auto"
