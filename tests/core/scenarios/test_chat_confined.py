"""The agent and the chat (SPEC §18, §13): a confined agent never reads the chat's token and,
under the default network = "model", never reaches the chat service; with network = "all" it
can, which the test sees and `memento doctor` warns about. Judged from git, the files and what
the Bot API stand-in received."""

from __future__ import annotations

import subprocess

from memento_core.doctor.runner import check_workspace
from memento_core.tick.__main__ import run_tick
from tests.core.sandbox import test_home
from tests.core.sandbox.test_home import committed_blobs, files_holding
from tests.core.sandbox.test_sandbox import needs_bwrap, sandboxed_ws

from .test_engine import agent, entries, git

person = test_home.person  # the fixture: a fake home folder outside /tmp (HOME points there)
CHAT = 123456789


def chat_ws(tmp_path, telegram, person, network: str):
    token = person.home / ".config" / "memento" / "telegram-token"  # where the docs put it
    token.parent.mkdir(parents=True, exist_ok=True)
    token.write_text(telegram.token + "\n")
    token.chmod(0o600)
    ws = sandboxed_ws(tmp_path, agent("reaches_for_the_chat.py", str(token), str(telegram.port)),
                      extra=f'network = "{network}"\n' if network != "model" else "")
    with open(ws.config_path, "a", encoding="utf-8") as fh:
        fh.write(f'[chat]\ntelegram = {{ token_file = "~/.config/memento/telegram-token", chats = [{CHAT}], '
                 f'api = "{telegram.api}" }}\n')
    git(ws.root, "commit", "-qam", "chat")
    return ws


@needs_bwrap
def test_a_confined_agent_neither_reads_the_token_nor_reaches_the_chat(tmp_path, telegram, person):
    ws = chat_ws(tmp_path / "model", telegram, person, "model")
    assert run_tick(ws.root).exit_code == 0
    (entry,) = entries(ws)
    assert entry.status == "SUCCESS", entry.field("Reason")
    log = (ws.root / entry.log_path).read_text()
    assert "REACHED" not in log and "No such file or directory" in log
    assert not any("/agent/" in p for p in telegram.paths)  # only Memento's own rounds reached it
    assert [s["text"].splitlines()[0] for s in telegram.sent] == ["Memento · engine test: ALL TASKS COMPLETE"]
    assert not any(telegram.token.encode() in blob for blob in committed_blobs(ws.root))
    assert files_holding([telegram.token], ws.root, skip=(ws.root / ".git",)) == []
    assert [f.severity for f in check_workspace(ws) if f.check == "chat"] == ["OK"]


@needs_bwrap
def test_with_the_whole_network_the_agent_reaches_the_chat_and_the_doctor_says_so(tmp_path, telegram, person):
    ws = chat_ws(tmp_path / "all", telegram, person, "all")
    [finding] = [f for f in check_workspace(ws) if f.check == "chat"]
    assert finding.severity == "WARNING" and 'network = "all"' in finding.message
    run_tick(ws.root)
    (entry,) = entries(ws)
    assert "REACHED the chat service" in (ws.root / entry.log_path).read_text()  # the test can see a leak
    assert any("/agent/" in p for p in telegram.paths)
    # Still no token: the home the agent sees is not the person's.
    assert not any(telegram.token.encode() in blob for blob in committed_blobs(ws.root))
    assert subprocess.run(["git", "status", "--porcelain"], cwd=ws.root, capture_output=True, text=True).stdout == ""
