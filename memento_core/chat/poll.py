"""One chat round (SPEC §18): read what came in, act on it, post what is new, within a budget.

The tick runs a round before its pick (at most 3 s: :func:`before_pick`) and posts what it
changed after it (:func:`after_tick`); `memento chat poll` and the dashboard run the same round.
A round holds ``.memento/chat.lock`` (another round going on: this one does nothing), so no
message is acted on twice. A service that is down costs the round its deadline and no more: the
tick goes on, what was not sent stays in chat.json for the next round, and `memento doctor`
says the service was unreachable.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field

from ..config.load import load_config
from ..config.model import Config
from ..errors import MementoError
from ..lines import message_text
from ..locks import LockBusy, file_lock
from ..runlog import cron_log, utc_stamp
from ..workspace import Workspace
from . import record as records
from .chatlog import chat_log, preview
from .inbox import Incoming, from_matrix, from_telegram, obeyed
from .matrix import Matrix
from .telegram import Telegram
from .tokens import TokenError, read_token
from .transport import ChatDown

TICK_BUDGET = 3.0  # what a tick gives the chat before its pick
SEND_BUDGET = 10.0  # what posting after a tick may take, like [notify]'s sends
REQUEST_SECONDS = 5.0  # one request at most (a long-poll adds its wait)


@dataclass
class Round:
    """What one round did: messages acted on and ignored, posts sent, errors (safe to print)."""

    acted: int = 0
    ignored: int = 0
    sent: int = 0
    waiting: int = 0  # sends left for the next round
    errors: list[str] = field(default_factory=list)
    busy: bool = False  # another round held the lock


def configured(config: Config) -> bool:
    return config.chat_telegram is not None or config.chat_matrix is not None


def clients(config: Config, ws: Workspace) -> list:
    """A client per configured service, its token read from its file (TokenError when it cannot be)."""
    out: list = []
    if config.chat_telegram is not None:
        out.append(Telegram(config.chat_telegram.api, read_token(config.chat_telegram.token_file, ws.root)))
    if config.chat_matrix is not None:
        m = config.chat_matrix
        out.append(Matrix(m.homeserver, m.user, m.room, read_token(m.token_file, ws.root)))
    return out


def targets(config: Config) -> list[str]:
    """Where a post goes: each Telegram chat, and the Matrix room."""
    out = [f"telegram:{chat}" for chat in config.chat_telegram.chats] if config.chat_telegram else []
    return out + (["matrix"] if config.chat_matrix else [])


def run_round(ws: Workspace, config: Config, *, budget: float, wait: float = 0.0, read: bool = True,
              in_tick: bool = False) -> Round:
    """Read (waiting up to ``wait`` s for a message), act, post; all within ``budget`` seconds.
    TokenError when a token file cannot be used (nothing is read or sent then)."""
    deadline = time.monotonic() + budget
    result = Round()
    try:
        with file_lock(records.lock_path(ws), blocking=False):
            services = clients(config, ws)
            record = records.load(ws)
            if read:
                for client in services:
                    share = wait / len(services) if wait else 0.0
                    _read(ws, config, client, record, result, deadline, share, in_tick)
            queue_events(ws, config, record)
            deliver(ws, record, services, deadline, result, allowed=set(targets(config)))
            records.save(ws, record)
    except LockBusy:
        result.busy = True
    return result


# --------------------------------------------------------------------------- reading


def _read(ws: Workspace, config: Config, client, record: dict, result: Round, deadline: float,
          wait: float, in_tick: bool) -> None:
    left = deadline - time.monotonic()
    if left <= 0.3:
        return
    try:
        if isinstance(client, Telegram):
            offset = record["telegram"].get("offset")
            updates = client.get_updates(offset if isinstance(offset, int) else None, int(min(wait, left - 1)),
                                         min(left, REQUEST_SECONDS + wait))
            for update in updates:
                message = from_telegram(update)
                record["telegram"]["offset"] = update["update_id"] + 1
                if message is not None:
                    _one(ws, config, message, record, result, in_tick)
                records.save(ws, record)  # acted on once, even if the round dies after
        else:
            since = record["matrix"].get("since")
            token, events, invited = client.sync(since if isinstance(since, str) else None,
                                                 int(max(0, min(wait, left - 1)) * 1000),
                                                 min(left, REQUEST_SECONDS + wait))
            if invited:
                client.join(max(0.5, deadline - time.monotonic()))
            for event in events:
                if event.get("sender") == client.user:
                    continue  # Memento's own posts come back in the timeline
                message = from_matrix(event, client.room)
                if message is not None:
                    _one(ws, config, message, record, result, in_tick)
            record["matrix"]["since"] = token
            records.save(ws, record)
        record["errors"].pop(client.name, None)
    except ChatDown as exc:
        _down(ws, record, client.name, str(exc), result)


def _one(ws: Workspace, config: Config, message: Incoming, record: dict, result: Round, in_tick: bool) -> None:
    who = f"{message.service} {message.where} from {message.sender}"
    why = obeyed(message, config.chat_telegram, config.chat_matrix)
    if why:
        result.ignored += 1
        chat_log(ws, f"ignored ({why}): {who}: {preview(message.text)}")
        return
    from .commands import act

    try:
        answer = act(ws, message, record["questions"], record["old_questions"], in_tick=in_tick)
    except Exception as exc:  # noqa: BLE001 - one message's failure never stops the round (or the tick)
        answer = f"✗ could not do that: {type(exc).__name__}"
        chat_log(ws, f"failed: {who}: {preview(message.text)}: {type(exc).__name__}: {exc}")
    result.acted += 1
    chat_log(ws, f"{who}: {preview(message.text)} -> {preview(answer, 120)}")
    reply_to = {message.target: message.message_id}
    record["pending"].append({"id": uuid.uuid4().hex, "key": "reply", "text": answer,
                              "targets": [message.target], "reply_to": reply_to})


def _down(ws: Workspace, record: dict, service: str, error: str, result: Round) -> None:
    record["errors"][service] = {"error": error, "at": utc_stamp()}
    result.errors.append(f"{service}: {error}")
    cron_log(ws, f"chat: {service} unreachable, retried next round: {error}")


# --------------------------------------------------------------------------- posting


def queue_events(ws: Workspace, config: Config, record: dict) -> None:
    """Queue what [notify] would send now (its events, once per change of state); a question's post
    is kept so that a reply to it answers it."""
    from ..notify import current_events, message
    from ..plan.scan import parse_plan
    from ..state import TickState
    from ..state_word import word_for
    from ..status_log import parse_status

    plan = parse_plan(ws.plan_path, display=ws.rel(ws.plan_path))
    state = TickState.load(ws)
    events = [e for e in current_events(ws, plan, state, parse_status(ws.status_path))
              if e.kind in config.notify_events]
    now = {e.key: e for e in events}
    states = record["states"]
    record["pending"] = [p for p in record["pending"] if p.get("key") == "reply" or
                         (p.get("key") in now and p.get("signature") == now[p["key"]].signature)]
    for key in [k for k in states if k not in now]:
        del states[key]
    for task in [t for t in record["questions"] if f"question:{t}" not in now]:
        # Answered, or no longer asked: a reply to its message answers nothing (nor another question).
        for target, sent in record["questions"].pop(task).items():
            record["old_questions"][f"{target} {sent}"] = task
    while len(record["old_questions"]) > records.MAX_OLD_QUESTIONS:
        del record["old_questions"][next(iter(record["old_questions"]))]
    word = word_for(ws, plan, state)[0] if events else ""
    project = plan.title or ws.root.name
    for event in events:
        if states.get(event.key) == event.signature:
            continue
        states[event.key] = event.signature
        note = message(project, event, word)
        text = f"{note['title']}\n{note['body']}"
        if event.kind == "question":
            text += question_detail(ws, event.key.partition(":")[2])
        record["pending"].append({"id": uuid.uuid4().hex, "key": event.key, "signature": event.signature,
                                  "text": text, "targets": targets(config)})


def question_detail(ws: Workspace, task_id: str) -> str:
    """How to answer from the chat (the question and its choices are the event's own text)."""
    from ..questions import open_questions

    question = next((q for q in open_questions(ws) if q.task_id == task_id), None)
    if question is None:
        return ""
    if question.choices:
        return "\nReply to this message with your answer, or with a choice's number."
    return "\nReply to this message with your answer."


def deliver(ws: Workspace, record: dict, services: list, deadline: float, result: Round, *,
            allowed: set[str]) -> None:
    """Send the pending posts, oldest first, until ``deadline``; what failed stays for the next round.
    ``allowed``: the chats configured now (a post for one taken out of memento.toml is dropped)."""
    by_name = {c.name: c for c in services}
    down: set[str] = set()
    for item in record["pending"]:
        for target in list(item["targets"]):
            service = target.partition(":")[0]
            client = by_name.get(service)
            if client is None or target not in allowed:
                item["targets"].remove(target)  # a chat no longer configured
                continue
            left = deadline - time.monotonic()
            if service in down or left <= 0.3:
                continue
            reply_to = (item.get("reply_to") or {}).get(target)
            text = message_text(item["text"])  # whatever a task title or an agent put in it (SPEC §13)
            try:
                if service == "telegram":
                    chat = int(target.partition(":")[2])
                    sent = str(client.send(chat, text, int(reply_to) if reply_to else None, min(left, REQUEST_SECONDS)))
                else:
                    sent = client.send(text, reply_to, item["id"], min(left, REQUEST_SECONDS))
            except ChatDown as exc:
                down.add(service)  # one failure per service and round: the rest waits for the next
                _down(ws, record, service, str(exc), result)
                continue
            except ValueError:
                item["targets"].remove(target)
                continue
            item["targets"].remove(target)
            result.sent += 1
            record["sent"][service] = utc_stamp()
            record["errors"].pop(service, None)
            if str(item.get("key", "")).startswith("question:"):
                record["questions"].setdefault(item["key"].partition(":")[2], {})[target] = sent
    record["pending"] = [p for p in record["pending"] if p["targets"]]
    result.waiting = sum(len(p["targets"]) for p in record["pending"])


# --------------------------------------------------------------------------- the tick's rounds


def before_pick(ws: Workspace, config: Config) -> None:
    """The tick's round before its pick: at most 3 s; never raises, never stops the tick. A token
    file that cannot be used skips the chat with a line in logs/cron.log."""
    if not configured(config):
        return
    try:
        run_round(ws, config, budget=TICK_BUDGET, in_tick=True)
    except TokenError as exc:
        cron_log(ws, f"chat skipped: {exc}")
    except Exception as exc:  # noqa: BLE001 - the chat never breaks a tick
        cron_log(ws, f"chat failed: {type(exc).__name__}: {exc}")


def after_tick(ws: Workspace) -> None:
    """After the tick: post what it changed (a question asked, a task blocked). Never raises; a
    token file that cannot be used was already logged by :func:`before_pick`."""
    try:
        config = load_config(ws.config_path)
    except MementoError:
        return
    if not configured(config):
        return
    try:
        run_round(ws, config, budget=SEND_BUDGET, read=False)
    except TokenError:
        pass
    except Exception as exc:  # noqa: BLE001
        cron_log(ws, f"chat failed: {type(exc).__name__}: {exc}")
