"""Notifications and reports carry text without control, bidi or format characters, and chat
mentions defused (SPEC §15, §13 "Either way"): judged at a loopback json:// receiver and in
`memento report`'s output, with the hostile agent tests/agents/shouts.py, in both modes."""

from __future__ import annotations

import json
import subprocess
import sys
import unicodedata

import pytest

from memento_core.lines import message_text
from memento_core.tick.__main__ import run_tick
from tests.core.modes import MODES
from tests.core.notifyhelp import Receiver, task, with_notify
from tests.core.test_notify import _identity  # noqa: F401 - its fixture

from .test_engine import agent, make_ws

PY = sys.executable
# T-1 prints what the agent wrote and fails; three more keep the blocked share under the breaker's 30%.
TASKS = (task(1, "cat shout.txt; false").replace("[T-1.txt]", "[shout.txt]") + task(2) + task(3) + task(4))
MENTIONS = ("@everyone", "@here", "<@123>", "<@&456>", "<!channel>")


def assert_clean(text: str) -> None:
    """No control character but a newline, no format (Cf: bidi, zero-width) or separator
    character, no live mention; the words themselves still there to read."""
    bad = sorted({f"U+{ord(ch):04X}" for ch in text
                  if ch != "\n" and unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp")})
    assert not bad, (bad, text)
    for mention in MENTIONS:
        assert mention not in text.replace("\u200b", ""), (mention, text)
    assert "\x1b" not in text and "]52;" not in text and "]0;pwned" not in text


@pytest.fixture
def hook():
    """test_notify's loopback json:// receiver, listening from the start."""
    receiver = Receiver()
    receiver.start()
    yield receiver
    receiver.close()


@pytest.mark.parametrize("mode", MODES)
def test_a_blocked_notification_carries_no_control_bidi_or_mention(tmp_path, hook, mode):
    ws = make_ws(tmp_path, agent("shouts.py", "shout.txt"), TASKS.replace("Write file 1", "Write file 1 @here"),
                 sandbox=mode, max_retries=1)
    with_notify(ws, hook.url())
    run_tick(ws.root)
    assert [m["title"].split(": ", 1)[1] for m in hook.received] == ["T-1 is blocked: Write file 1 ＠here"]
    (sent,) = hook.received
    for value in (sent["title"], sent["message"]):
        assert_clean(value)
    assert "＠everyone" in sent["message"] and "‹@123›" in sent["message"] and "broke it" in sent["message"]
    assert "exe.txt" in sent["message"]  # in the order it was written, not the order the override shows


@pytest.mark.parametrize("mode", MODES)
def test_memento_report_text_and_json_carry_no_control_bidi_or_mention(tmp_path, mode):
    ws = make_ws(tmp_path, agent("shouts.py", "shout.txt"), TASKS, sandbox=mode, max_retries=1)
    run_tick(ws.root)
    text = subprocess.run([PY, "-m", "memento_core.cli", "report", str(ws.root)], capture_output=True,
                          text=True, timeout=60)
    assert "broke it" in text.stdout, text.stdout + text.stderr
    assert_clean(text.stdout)
    raw = subprocess.run([PY, "-m", "memento_core.cli", "report", "--json", str(ws.root)], capture_output=True,
                         text=True, timeout=60)
    doc = json.loads(raw.stdout)
    assert "broke it" in doc["blocked"][0]["last_reason"]

    def strings(value):
        if isinstance(value, dict):
            for k, v in value.items():
                yield k
                yield from strings(v)
        elif isinstance(value, list):
            for v in value:
                yield from strings(v)
        elif isinstance(value, str):
            yield value

    for value in strings(doc):
        assert_clean(value)


@pytest.mark.parametrize("raw, shown", [
    ("@everyone look", "＠everyone look"), ("ping <@123> and <@&456>", "ping ‹@123› and ‹@&456›"),
    ("<!channel> <!here> <#42>", "‹!channel› ‹!here› ‹#42›"), ("@\u200bhere", "＠here"),
    ("a\u202eb\u2066c\u2069d\u2060e\ufeff", "abcde"), ("\x1b[1mbold\x1b[0m\x07\r", "bold"),
    ("line\u2028two\ttab", "line two tab"), ("mail me@example.com", "mail me@example.com"),
])
def test_message_text(raw, shown):
    assert message_text(raw) == shown == message_text(shown)


EVIL = "\x1b[31mred\u202eevil\u2066x\u2069\x1b]0;title\x07"


def test_every_command_prints_files_and_agents_text_without_control_or_bidi_characters(tmp_path):
    """SPEC §13 "Either way": a title in the plan, a note and the agent's last words in the status
    log hold ESC sequences and bidi overrides; no command prints one (`status` printed the blocked
    task's title raw, `tasks --json` the bidi characters)."""
    from memento_core.notes import add_note

    ws = make_ws(tmp_path, agent("shouts.py", "shout.txt"), TASKS.replace("Write file 1", "Write " + EVIL),
                 sandbox="none", max_retries=1)
    add_note(ws.notes_path, target="T-1", text="note " + EVIL)
    subprocess.run(["git", "commit", "-qam", "a title and a note with escapes"], cwd=ws.root, check=True)
    run_tick(ws.root)

    def printed(*cmd: str) -> str:
        proc = subprocess.run([PY, "-m", "memento_core.cli", *cmd, str(ws.root)], capture_output=True, text=True,
                              timeout=60)
        return proc.stdout + proc.stderr

    def controls(text: str) -> list[str]:
        return sorted({f"U+{ord(ch):04X}" for ch in text if ch != "\n" and unicodedata.category(ch) in ("Cc", "Cf")})

    for cmd in (["status"], ["status", "--json"], ["tasks"], ["tasks", "--json"], ["report"], ["report", "--json"],
                ["doctor"]):
        out = printed(*cmd)
        assert controls(out) == [], (cmd, out)
        if cmd[0] != "doctor":
            assert "evil" in out, (cmd, out)  # the text is there, made harmless
    plan = ws.plan_path.read_text()
    ws.plan_path.write_text(plan.replace("## Phase 1: Only\n", f"## Phase 1: Only\n- [q] `T-9` {EVIL}\n", 1))
    for cmd in (["status"], ["tasks"], ["lint"], ["doctor"]):
        out = printed(*cmd)
        assert controls(out) == [], (cmd, out)
