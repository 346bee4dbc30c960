"""checks/chat.py (SPEC §18): the token files usable, the services reached at the last round (as
.memento/chat.json says), and the agent's network while a chat is connected. Files only."""

from __future__ import annotations

import os
import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memento_core.chat import record as records
from memento_core.doctor.checks.chat import check_chat
from memento_core.doctor.context import Context
from memento_core.doctor.findings import CRITICAL, WARNING
from memento_core.scaffold import init_workspace
from memento_core.workspace import Workspace

TOKEN = "123456789:AAbbCCddEEffGGhhIIjjKKllMMnnOOppQQ"


def chat_ws(tmp_path: Path, *, mode: int = 0o600, sandbox: str = 'mode = "none"',
            secrets: Path | None = None) -> tuple[Workspace, Path]:
    """A workspace with [chat] telegram whose token file (in ``secrets``, outside the project) has ``mode``."""
    token = (secrets or tmp_path / "secrets") / "telegram-token"
    token.parent.mkdir(exist_ok=True)
    token.write_text(TOKEN + "\n")
    token.chmod(mode)
    root = tmp_path / "proj"
    init_workspace(root, project="proj", commit=False)
    (root / "memento.toml").write_text(f'[sandbox]\n{sandbox}\n\n[chat]\n'
                                       f'telegram = {{ token_file = "{token}", chats = [123456789] }}\n')
    return Workspace(root), token


def chat(ws: Workspace):
    return check_chat(Context(ws, datetime.now(UTC)))


def test_no_chat_configured_is_one_ok_line_and_a_broken_config_is_left_to_its_own_check(tmp_path):
    root = tmp_path / "proj"
    init_workspace(root, project="proj", commit=False)
    ws = Workspace(root)
    assert chat(ws) == "chat: none configured ([chat])"
    ws.config_path.write_text("[chat\n")
    assert chat(ws) is None


def test_a_usable_token_file_is_ok_and_names_the_last_post(tmp_path):
    ws, _ = chat_ws(tmp_path, sandbox='mode = "auto"')  # a token under /tmp: the sandbox's /tmp is its own
    assert chat(ws) == "chat: telegram configured, token files 0600"
    record = records.load(ws)
    record["sent"]["telegram"] = "2026-01-01T00:00:00Z"
    records.save(ws, record)
    assert chat(ws) == "chat: telegram configured, token files 0600; telegram last posted 2026-01-01T00:00:00Z"


def test_a_token_file_others_can_read_is_critical_and_says_the_chat_is_not_used(tmp_path):
    ws, token = chat_ws(tmp_path, mode=0o644)
    (finding,) = chat(ws)
    assert finding.severity == CRITICAL and finding.check == "chat" and finding.path == "memento.toml"
    assert finding.message == (f"[chat] telegram: token file {token}: mode 0644, others can read it; it must be "
                               f"0600 (`chmod 600 {token}`): the chat is not read nor posted to")


def test_a_service_unreachable_at_the_last_round_is_a_warning_counting_the_sends_that_wait(tmp_path):
    ws, _ = chat_ws(tmp_path)
    record = records.load(ws)
    record["errors"]["telegram"] = {"error": "cannot reach 127.0.0.1:9", "at": "2026-01-02T03:04:05Z"}
    record["pending"] = [{"id": "1", "key": "blocked:T-1", "text": "T-1 is blocked", "targets": ["telegram:1"]},
                         {"id": "2", "key": "blocked:T-2", "text": "T-2 is blocked",
                          "targets": ["telegram:1", "matrix"]}]
    records.save(ws, record)
    (finding,) = chat(ws)
    assert finding.severity == WARNING and finding.path == ".memento/chat.json"
    assert finding.message == ("telegram was unreachable at the last round (2026-01-02T03:04:05Z): cannot reach "
                               "127.0.0.1:9; 3 send(s) wait for the next round")


def test_the_whole_network_for_the_agent_beside_a_chat_is_a_warning(tmp_path):
    ws, _ = chat_ws(tmp_path, sandbox='mode = "none"\nnetwork = "all"')
    (finding,) = chat(ws)
    assert finding.severity == WARNING
    assert finding.message.startswith('[sandbox] network = "all" with [chat] set: the agent can reach the chat')


@pytest.fixture
def outside_home(tmp_path):
    """A folder neither in the home folder nor under /tmp, which the sandbox shows the agent read-only."""
    if not os.access("/var/tmp", os.W_OK):
        pytest.skip("no writable /var/tmp")
    base = Path(tempfile.mkdtemp(prefix="memento-token-", dir="/var/tmp"))
    yield base
    shutil.rmtree(base, ignore_errors=True)


def test_a_token_outside_the_home_is_a_warning_only_when_the_agent_is_confined_and_the_token_usable(
        tmp_path, outside_home):
    ws, token = chat_ws(tmp_path, sandbox='mode = "auto"', secrets=outside_home)
    (finding,) = chat(ws)
    assert finding.severity == WARNING
    assert finding.message.startswith(f"[chat] telegram: token file {token} is outside your home folder")
    ws.config_path.write_text(ws.config_path.read_text().replace('mode = "auto"', 'mode = "none"'))
    assert chat(ws) == "chat: telegram configured, token files 0600"
    token.chmod(0o640)  # refused: said once, as the reason the chat is not used
    ws.config_path.write_text(ws.config_path.read_text().replace('mode = "none"', 'mode = "auto"'))
    assert [f.severity for f in chat(ws)] == [CRITICAL]
