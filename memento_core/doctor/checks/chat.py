"""The chat check (SPEC §18): usable token files, the services reachable at the last round, and
the agent's network when a chat is connected. Files only: the doctor calls no service."""

from __future__ import annotations

from ...chat import record as records
from ...chat.tokens import TokenError, outside_home, read_token
from ..context import Context
from ..findings import CRITICAL, WARNING, CheckResult, Finding


def check_chat(c: Context) -> CheckResult:
    config, _ = c.config_and_error
    if config is None:
        return None  # the config check said why
    services = [(name, chat) for name, chat in (("telegram", config.chat_telegram), ("matrix", config.chat_matrix))
                if chat is not None]
    if not services:
        return "chat: none configured ([chat])"
    rel = c.rel(c.ws.config_path)
    found = []
    for name, chat in services:
        try:
            read_token(chat.token_file, c.ws.root)
        except TokenError as exc:
            found.append(Finding(CRITICAL, "chat", f"[chat] {name}: {exc}: the chat is not read nor posted to", rel))
            continue
        if outside_home(chat.token_file) and config.sandbox_mode != "none":
            found.append(Finding(WARNING, "chat", f"[chat] {name}: token file {chat.token_file} is outside your home "
                                 "folder: the sandbox hides your home from the agent, not the rest of the system "
                                 "(it sees it read-only); keep the token under ~/.config/memento/", rel))
    record = records.load(c.ws)
    waiting = sum(len(p["targets"]) for p in record["pending"])
    for name, _ in services:
        error = record["errors"].get(name)
        if isinstance(error, dict) and error.get("error"):
            found.append(Finding(WARNING, "chat", f"{name} was unreachable at the last round ({error.get('at') or '?'}): "
                                 f"{error['error']}; {waiting} send(s) wait for the next round",
                                 c.rel(records.record_path(c.ws))))
    if config.sandbox_network == "all":
        found.append(Finding(WARNING, "chat", '[sandbox] network = "all" with [chat] set: the agent can reach the '
                             'chat service (it never has the token); "model" keeps it to its model API', rel))
    if found:
        return found
    sent = [f"{name} last posted {record['sent'][name]}" for name, _ in services if record["sent"].get(name)]
    return f"chat: {', '.join(n for n, _ in services)} configured, token files 0600" + (f"; {'; '.join(sent)}" if sent else "")
