"""[chat] telegram (SPEC §18) through a local stand-in of the Bot API (tests/core/telegram_standin.py), as
the doctor judges it: the agent's whole network beside a chat, a token file the sandbox hides. (The chat
package's own tests: test_commands.py, test_inbox.py, test_poll.py, test_tokens.py.)"""

from __future__ import annotations

import os

from tests.core.chat.chats import chat_ws


def test_doctor_warns_when_the_agent_has_the_whole_network(tmp_path, telegram):
    from memento_core.doctor.runner import check_workspace

    ws = chat_ws(tmp_path, telegram, extra="")
    text = ws.config_path.read_text().replace('mode = "none"\n', 'mode = "none"\nnetwork = "all"\n')
    ws.config_path.write_text(text)
    [finding] = [f for f in check_workspace(ws) if f.check == "chat"]
    assert finding.severity == "WARNING" and '[sandbox] network = "all" with [chat] set' in finding.message


# --------------------------------------------------------------------------- questions


def test_doctor_warns_of_a_token_file_outside_the_home_the_sandbox_hides(tmp_path, telegram):
    import shutil
    import tempfile
    from pathlib import Path

    from memento_core.doctor.runner import check_workspace

    base = Path(tempfile.mkdtemp(prefix="memento-token-", dir="/var/tmp" if os.access("/var/tmp", os.W_OK) else None))
    try:
        ws = chat_ws(tmp_path, telegram)
        token = base / "telegram-token"
        token.write_text(telegram.token)
        token.chmod(0o600)
        text = ws.config_path.read_text().replace(str(tmp_path / "secrets" / "telegram-token"), str(token))
        ws.config_path.write_text(text.replace('mode = "none"', 'mode = "auto"'))
        [finding] = [f for f in check_workspace(ws) if f.check == "chat"]
        assert finding.severity == "WARNING" and "is outside your home folder" in finding.message
    finally:
        shutil.rmtree(base, ignore_errors=True)
