"""`memento notify test [DIR]` (SPEC §15): one test message to every `[notify] urls` entry.

The sending itself is ``memento_core/notify.py``; URLs are shown masked (they hold tokens).
"""

from __future__ import annotations

import argparse

from ..context import with_dir, workspace_of
from ..output import EXIT_ERROR, EXIT_OK, error, ok


def register(sub, common: argparse.ArgumentParser) -> None:
    notify = sub.add_parser("notify", help="notifications: send a test message")
    actions = notify.add_subparsers(dest="notify_command", metavar="ACTION", required=True)
    p = with_dir(actions.add_parser("test", parents=[common],
                                    help="send one test message to every [notify] url"))
    p.set_defaults(func=cmd_test)


def cmd_test(args: argparse.Namespace) -> int:
    from ...config.load import load_config
    from ...notify import mask_url, send_test

    ws = workspace_of(args)
    errors = send_test(ws)
    for e in errors:
        error(f"notify: {e}")
    urls = load_config(ws.config_path).notify_urls
    sent = len(urls) - len(errors)
    if sent:
        ok(f"sent a test message to {sent} of {len(urls)} URL(s): "
           + ", ".join(mask_url(u) for u in urls))
    return EXIT_ERROR if errors else EXIT_OK
