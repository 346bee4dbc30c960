"""A workspace whose [chat] telegram is the Bot API stand-in (tests/core/telegram_standin.py), and what the
chat's tests read back: the replies to a message, the questions posted, the answers in the notes."""

from __future__ import annotations

import subprocess

from memento_core.chat import poll
from memento_core.config.load import load_config
from memento_core.notes import parse_notes
from tests.core.scenarios.test_engine import agent, make_ws

# The listed chat and the person in it; a chat and a sender that are not listed.
CHAT, PERSON = 123456789, 111222333
STRANGER_CHAT, STRANGER = 555000555, 999000999
WRITES = agent("does_task.py", "{task_id}.txt", "done")


TASKS = "".join(f"- [ ] `T-{n}` [MODULE:m] Write file {n}\n  - verify: `grep -q done T-{n}.txt`\n"
                f"  - context_files: [T-{n}.txt]\n" for n in (1, 2, 3))


def token_file(tmp_path, token: str, mode: int = 0o600):
    """The bot's token in tmp_path/secrets/telegram-token, of ``mode``."""
    path = tmp_path / "secrets" / "telegram-token"
    path.parent.mkdir(exist_ok=True)
    path.write_text(token + "\n")
    path.chmod(mode)
    return path


def chat_ws(tmp_path, telegram, *, senders=(PERSON,), mode: int = 0o600, tasks: str = TASKS, extra: str = ""):
    """A committed workspace of ``tasks`` whose [chat] telegram is ``telegram``, CHAT listed, ``senders`` obeyed."""
    ws = make_ws(tmp_path, WRITES, tasks)
    path = token_file(tmp_path, telegram.token, mode)
    ws.config_path.write_text(ws.config_path.read_text() + extra + (
        f'[chat]\ntelegram = {{ token_file = "{path}", chats = [{CHAT}], '
        f'senders = [{", ".join(map(str, senders))}], api = "{telegram.api}" }}\n'))
    subprocess.run(["git", "commit", "-qam", "chat"], cwd=ws.root, check=True)
    return ws


def chat_round(ws, budget: float = 10.0):
    """One chat round, as `memento chat poll` runs it."""
    return poll.run_round(ws, load_config(ws.config_path), budget=budget)


def replies(telegram, to: int) -> list[str]:
    """What Memento answered to the person's message ``to``."""
    return [s["text"] for s in telegram.sent_to(CHAT)
            if (s.get("reply_parameters") or {}).get("message_id") == to]


def asking(tmp_path, telegram, *ids: str, choices=("Redis", "Postgres")):
    """A workspace whose tasks ``ids`` wait for an answer ([?]) to "Redis or Postgres?"."""
    from memento_core import questions

    tasks = TASKS
    for task_id in ids:
        tasks = tasks.replace(f"- [ ] `{task_id}`", f"- [?] `{task_id}`").replace(
            f"  - context_files: [{task_id}.txt]\n",
            f"  - context_files: [{task_id}.txt]\n  - retries: 1\n  - question: Redis or Postgres?\n  - questions: 1\n")
    ws = chat_ws(tmp_path, telegram, tasks=tasks)
    text = "Redis or Postgres?\n\nThe plan names both.\n" + "".join(f"- [ ] {c}\n" for c in choices)
    for task_id in ids:
        questions.save_question(ws, task_id, text.strip(), "Redis or Postgres?", tuple(choices))
    return ws


def posted_question(telegram, task_id: str) -> dict:
    """The one message that asked ``task_id``'s question in CHAT."""
    [post] = [s for s in telegram.sent_to(CHAT) if s["text"].startswith(f"Memento · engine test: {task_id} asks:")]
    return post


def answers(ws) -> list[tuple[str, str, str]]:
    """The answers in the notes: (task, text, source)."""
    return [(n.target, n.text, n.source) for n in parse_notes(ws.notes_path) if n.is_answer]
