"""The notify check (SPEC §15): can Apprise read every `[notify] urls` entry, did the last send work?"""

from __future__ import annotations

from ... import notify
from ..context import Context
from ..findings import WARNING, CheckResult, Finding


def check_notify(c: Context) -> CheckResult:
    config, _ = c.config_and_error
    if config is None:
        return None  # the config check said why
    if not config.notify_urls:
        return "notifications: none configured ([notify] urls)"
    rel = c.rel(c.ws.config_path)
    found = [Finding(WARNING, "notify", f"[notify] urls: Apprise cannot read {masked}: nothing is sent there", rel)
             for masked in notify.unreadable_urls(config.notify_urls)]
    record = notify.load_record(c.ws)
    if record["last_error"]:
        waiting = sum(len(p["urls"]) for p in record["pending"])
        found.append(Finding(WARNING, "notify",
                             f"the last notification failed ({record.get('last_error_at') or '?'}): "
                             f"{record['last_error']}; {waiting} send(s) wait for the next tick",
                             c.rel(notify.notify_path(c.ws))))
    if found:
        return found
    sent = f"; last sent {record['last_sent']}" if record["last_sent"] else ""
    return f"notifications: {len(config.notify_urls)} URL(s) Apprise can read{sent}"
