"""`memento chat poll [DIR] [--wait SECONDS]` (SPEC §18): one chat round now.

Reads the replies and commands that came in since the last round, acts on them as the command
line would, and posts what is new; the round itself is ``memento_core/chat/poll.py``. Every tick
runs one too (before its pick), so cron needs no daemon: this is for a person who wants the
chat read now, or a loop of their own (``while memento chat poll --wait 50; do :; done``).
"""

from __future__ import annotations

import argparse

from ...errors import MementoError
from ..context import person_workspace, with_dir
from ..output import EXIT_ATTENTION, EXIT_OK, ok, warn


def register(sub, common: argparse.ArgumentParser) -> None:
    chat = sub.add_parser("chat", help="chat: read replies and commands now")
    actions = chat.add_subparsers(dest="chat_command", metavar="ACTION", required=True)
    p = with_dir(actions.add_parser("poll", parents=[common],
                                    help="read the chat's replies and commands now, and post what is new"))
    p.add_argument("--wait", type=float, default=0.0, metavar="SECONDS",
                   help="wait up to this long for a message (a long-poll; default: read what is there)")
    p.set_defaults(func=cmd_poll)


def cmd_poll(args: argparse.Namespace) -> int:
    from ...chat.poll import REQUEST_SECONDS, configured, run_round
    from ...config.load import load_config

    ws = person_workspace(args, "chat poll")
    config = load_config(ws.config_path)
    if not configured(config):
        raise MementoError(f"{ws.rel(ws.config_path)}: no [chat] section; see docs/answering-from-your-phone.md")
    wait = max(0.0, min(args.wait, 300.0))
    done = run_round(ws, config, budget=wait + 2 * REQUEST_SECONDS + 5, wait=wait)
    if done.busy:
        warn("another chat round is running (a tick or the dashboard); nothing read")
        return EXIT_OK
    for e in done.errors:
        warn(f"chat: {e}")
    ok(f"chat: {done.acted} message(s) acted on, {done.ignored} ignored (logs/chat.log), {done.sent} sent"
       + (f", {done.waiting} waiting for the next round" if done.waiting else ""))
    from ...control import wait_for_senders

    wait_for_senders()  # a notification a command made is sent before the process ends
    return EXIT_ATTENTION if done.errors else EXIT_OK
