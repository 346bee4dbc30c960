"""Notifications (SPEC §15): what needs a person, sent once per change of state through Apprise.

After each tick :func:`after_tick` reads the workspace's current event states
(blocked tasks, a worker's question, the breaker, ALL TASKS COMPLETE, a refused
dirty tree, a rate limit, the budget, the architect), compares them with `.memento/notify.json`
and sends each state that is new, once. A send that fails stays pending there
and the next tick retries it; all sends of a tick share a 10-second budget.
Apprise is imported only when there is something to send: a project without
`[notify] urls` pays nothing. URLs are secrets (tokens, chat ids): what Memento
prints shows them through :func:`mask_url`.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from pathlib import Path

from .config.load import load_config
from .config.model import Config
from .errors import MementoError
from .lines import message_text, read_text_file
from .locks import atomic_write_text
from .runlog import cron_log, parse_utc_stamp, utc_stamp
from .state import TickState
from .workspace import Workspace

TOTAL_SECONDS = 10.0  # what the sends of one tick may take together
SEND_SECONDS = 5.0  # what one send may take
_HOST_RE = re.compile(r"^(?:localhost|\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-fA-F:.]+\]|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)(?::\d+)?$")


@dataclass(frozen=True)
class Event:
    """One state a person is told about: its key (one per thing), a signature that changes
    with the state, what happened, the one-line reason and what to do."""

    kind: str  # one of config/model.NOTIFY_EVENTS
    key: str
    signature: str
    what: str
    reason: str
    action: str


def notify_path(ws: Workspace) -> Path:
    return ws.root / ".memento" / "notify.json"


def mask_url(url: str) -> str:
    """``url`` with its secrets hidden: the scheme, and the host when it is a host name or an
    address (``json://127.0.0.1:8080/***``); a "host" that is a token (``tgram://BOT/CHAT``)
    or has a user or password is hidden too (``tgram://***``)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return "***"
    host = re.split(r"[/?#]", rest, maxsplit=1)[0]
    shown = host if "@" not in host and _HOST_RE.match(host) else ""
    return f"{scheme}://{shown}/***" if shown else f"{scheme}://***"


# --------------------------------------------------------------------------- the record


def load_record(ws: Workspace) -> dict:
    """`.memento/notify.json`: {"states": {key: signature}, "pending": [message], "last_sent",
    "last_error", "last_error_at"}; missing or damaged, an empty record."""
    try:
        data = json.loads(read_text_file(notify_path(ws)))
    except (OSError, ValueError):
        data = {}
    if not isinstance(data, dict):
        data = {}
    states = data.get("states") if isinstance(data.get("states"), dict) else {}
    pending = [p for p in data.get("pending") or [] if isinstance(p, dict) and isinstance(p.get("urls"), list)]
    return {"states": states, "pending": pending, "last_sent": data.get("last_sent"),
            "last_error": data.get("last_error"), "last_error_at": data.get("last_error_at")}


def save_record(ws: Workspace, record: dict) -> None:
    path = notify_path(ws)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(record, indent=2, ensure_ascii=False) + "\n")


def summary(ws: Workspace, config: Config | None = None) -> dict:
    """The "notify" part of `memento status --json`: masked URLs, events, the last send."""
    if config is None:
        try:
            config = load_config(ws.config_path)
        except MementoError:
            config = Config()
    record = load_record(ws) if notify_path(ws).exists() else {}
    return {"urls": [mask_url(u) for u in config.notify_urls], "events": list(config.notify_events),
            "last_error": record.get("last_error"), "last_sent": record.get("last_sent")}


# --------------------------------------------------------------------------- the states


def current_events(ws: Workspace, plan, state: TickState, entries) -> list[Event]:
    """Every state that needs telling now, from the plan, state.json, the status log and the alert."""
    from . import scheduler

    events = [_blocked(task, entries) for task in plan.tasks if task.status == "!"]
    events += question_events(ws, plan)
    if state.breaker_reason:
        events.append(Event("breaker", "breaker", state.breaker_at or state.breaker_reason,
                            "the circuit breaker tripped; the pipeline is paused", state.breaker_reason,
                            "fix the cause, then `memento resume`"))
    if plan.tasks and not plan.plan_errors and scheduler.pick(plan).kind == scheduler.COMPLETE:
        events.append(Event("complete", "complete", str(len(plan.tasks)), "ALL TASKS COMPLETE",
                            f"{len(plan.tasks)} task(s) in the plan are done or skipped",
                            "read `memento report`, then add the next tasks"))
    if state.dirty_signature:
        paths = state.dirty_signature.splitlines()
        events.append(Event("dirty", "dirty", state.dirty_signature, "tick refused: uncommitted changes",
                            ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else ""),
                            "commit them or `git stash push -- <paths>`"))
    if state.stale_tick:  # tick/lock.py
        events.append(Event("stale_tick", "stale_tick", state.stale_tick, "a stopped tick was taken over",
                            state.stale_tick[:300], "find what stopped it (its agent?), then `memento ack`"))
    events += _limits(ws, state)
    events += _architect(ws, entries)
    events += _verify_changed(ws)
    return events


def _verify_changed(ws: Workspace) -> list[Event]:
    """Each verify command the architect changed, until a person acknowledges it (SPEC §13)."""
    from .verify_changes import ACK_COMMAND, pending

    return [Event("architect", f"verify:{c.task}", f"{c.at} {c.old} {c.new}",
                  f"the architect {'wrote' if not c.old else 'changed'} {c.task}'s verify command", c.describe(),
                  f"{c.task} does not run until then: check that it still judges the task, then `{ACK_COMMAND} {c.task}`") for c in pending(ws)]


QUESTION_TEXT_CHARS = 1500  # a question's text in a notification: what a phone shows whole


def question_events(ws: Workspace, plan) -> list[Event]:
    """Each open question (SPEC §18): the question, its choices and how to answer. The signature
    changes with each new question of the task, so a second question is told again. A chat
    (``[chat]``) posts these as they are and matches replies on the key ``question:T-1``."""
    from .questions import question_of

    out = []
    for task in plan.tasks:
        if task.status != "?":
            continue
        q = question_of(ws, task)
        text = q.text if len(q.text) <= QUESTION_TEXT_CHARS else q.text[:QUESTION_TEXT_CHARS - 1] + "…"
        listed = "".join(f"\n{n}. {c}" for n, c in enumerate(q.choices, 1)) if q.choices and "- [ ]" not in text else ""
        how = (f"`memento answer {task.id} --choice N` (or a text)" if q.choices else
               f"`memento answer {task.id} TEXT`")
        out.append(Event("question", f"question:{task.id}", f"{task.questions} {q.first_line}",
                         f"{task.id} asks: {q.first_line}"[:200], f"{text}{listed}",
                         f"answer with {how}, in the dashboard, or by replying to this message in a connected chat"))
    return out


def _blocked(task, entries) -> Event:
    last = None
    for entry in entries:
        if entry.task_id == task.id and not entry.is_event:
            last = entry
    why = " ".join(str(getattr(last, "error", None) or "no reason recorded").split())[:300]
    return Event("blocked", f"blocked:{task.id}", "blocked", f"{task.id} is blocked: {task.title}"[:200], why,
                 f"fix it, then `memento reset {task.id}` (or `memento skip {task.id}`)")


def _limits(ws: Workspace, state: TickState) -> list[Event]:
    out = []
    until = state.rate_limited_until
    if until and until > utc_stamp():
        preset = state.rate_limited_preset or "the agent"
        out.append(Event("rate_limited", "rate_limited", preset, f"rate limited until {until}",
                         f"{preset} refused with a rate limit", "wait (ticks skip until then), or add a fallback"))
    out += _long_limit(state)
    today = utc_stamp()[:10]
    if state.budget_reached_day == today:
        out.append(Event("budget", "budget", today, "the daily budget is reached",
                         "no agent runs until the next UTC day", "raise [budget] daily_usd or daily_tokens, or wait"))
    return out


LONG_LIMIT_SECONDS = 2 * 3600  # a rate limit lasting longer is told once (SPEC §14)


def _long_limit(state: TickState) -> list[Event]:
    """Rate limited since ``rate_limited_since`` (no attempt got through since), over 2 hours: once."""
    from datetime import UTC, datetime

    from .durations import format_duration

    since = parse_utc_stamp(state.rate_limited_since)
    if since is None:
        return []
    lasted = (datetime.now(UTC) - since).total_seconds()
    if lasted <= LONG_LIMIT_SECONDS or not state.rate_limit_streak:
        return []
    preset = state.rate_limited_preset or "the agent"
    return [Event("rate_limited", "rate_limited_long", state.rate_limited_since,
                  f"rate limited for {format_duration(lasted)}",
                  f"{preset} has refused every attempt since {state.rate_limited_since} "
                  f"({state.rate_limit_streak} in a row)",
                  "check the account's quota or the agent's key, add [agent] fallback, or wait")]


def _architect(ws: Workspace, entries) -> list[Event]:
    """The newest "🏗 ARCHITECT" entry, and an alert saying the architect could not help (issue 16)."""
    out = []
    for entry in reversed(entries):
        head = entry.field("Event") or ""
        if "ARCHITECT" in head.upper():
            out.append(Event("architect", "architect", entry.timestamp, "the architect changed the plan",
                             " ".join(head.replace("🏗", "").split())[:300], "read the plan's changes (git log)"))
            break
    try:
        alert = read_text_file(ws.alert_path, "replace")
    except OSError:
        alert = ""
    for line in alert.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "problem" and value.strip().startswith("architect:"):
            why = value.strip()[len("architect:"):].strip()
            out.append(Event("architect", "architect_alert", why, "the architect could not help", why[:300],
                             "a person must change the plan"))
    return out


def message(project: str, event: Event, word: str = "") -> dict:
    """The title and body of one notification; ``word`` is the pipeline's (state_word), said
    first in the body as `memento status` says it."""
    title = f"Memento · {project}: {event.what}"
    body = (f"Pipeline: {word}\n" if word else "") + f"{event.what}\n{event.reason}\nWhat to do: {event.action}"
    return {"title": title[:250], "body": body}


# --------------------------------------------------------------------------- sending


UNREADABLE = "Apprise cannot read this URL"


def _apprise():
    """The apprise module, its log kept off stderr (its messages can hold a URL's secrets: the
    errors Memento reports come from its results, masked)."""
    import logging
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # apprise 2.3 imports imghdr
        import apprise
    log = logging.getLogger("apprise")
    if log.propagate:
        log.addHandler(logging.NullHandler())
        log.propagate = False
    return apprise


def unreadable_urls(urls) -> list[str]:
    """The URLs (masked) Apprise cannot read: a typo in a scheme, a missing token."""
    apprise = _apprise()
    return [mask_url(u) for u in urls if not apprise.Apprise().add(u)]


def send(url: str, title: str, body: str, timeout: float) -> str | None:
    """One message to one Apprise URL within ``timeout`` seconds; None when it was delivered,
    else why not (with no secret of the URL in it)."""
    title, body = message_text(title), message_text(body)  # the agent's words reach a chat (SPEC §15)
    box = _apprise().Apprise()
    if not box.add(url):
        return f"{mask_url(url)}: {UNREADABLE}"
    for plugin in box:
        for name in ("socket_connect_timeout", "socket_read_timeout"):
            if hasattr(plugin, name):
                setattr(plugin, name, max(0.5, min(float(getattr(plugin, name) or timeout), timeout)))
    try:
        result = box.notify(body=body, title=title, timeout=timeout)
    except Exception as exc:  # noqa: BLE001 - a plugin's failure is a failed send, never a failed tick
        return f"{mask_url(url)}: {type(exc).__name__}"
    if result:
        return None
    logs = [e.message for e in result.logs() if getattr(e, "level", "") in ("WARNING", "ERROR", "CRITICAL")]
    return f"{mask_url(url)}: {_scrub(logs[-1] if logs else 'not delivered', url)}"


def _scrub(text: str, url: str) -> str:
    """Apprise's message, without any part of the URL past its scheme."""
    rest = url.partition("://")[2]
    for part in filter(None, re.split(r"[/?#@:&=]", rest)):
        if len(part) >= 3:
            text = text.replace(part, "***")
    return " ".join(text.split())[:200]


def url_id(url: str) -> str:
    """How notify.json names a URL: a digest, so the file holds no secret."""
    import hashlib

    return hashlib.sha256(url.encode("utf-8")).hexdigest()[:16]


def deliver(ws: Workspace, record: dict, urls, budget: float | None = None) -> tuple[int, list[str]]:
    """Send the record's pending messages to ``urls`` (the configured ones), oldest first, within
    ``budget`` seconds; what was delivered leaves the list, a failure stays (logged to cron.log),
    a URL no longer configured is forgotten. How many were sent, and the errors."""
    deadline = time.monotonic() + (TOTAL_SECONDS if budget is None else budget)
    by_id = {url_id(u): u for u in urls}
    sent, errors = 0, []
    for item in record["pending"]:
        item["urls"] = [i for i in item["urls"] if i in by_id]
        for uid in list(item["urls"]):
            url = by_id[uid]
            left = deadline - time.monotonic()
            if left <= 0.2:
                break
            error = send(url, item.get("title", ""), item.get("body", ""), min(SEND_SECONDS, left))
            if error is None:
                item["urls"].remove(uid)
                record["last_sent"], record["last_error"] = utc_stamp(), None
                sent += 1
                continue
            record["last_error"], record["last_error_at"] = error, utc_stamp()
            errors.append(error)
            if error.endswith(UNREADABLE):  # never deliverable: `memento doctor` names it
                item["urls"].remove(uid)
                cron_log(ws, f"notify: not sent ({item.get('key')}): {error}")
            else:
                cron_log(ws, f"notify: send failed ({item.get('key')}), retried next tick: {error}")
    record["pending"] = [item for item in record["pending"] if item["urls"]]
    return sent, errors


def after_tick(ws: Workspace) -> None:
    """After a tick (its lock still held): send what is new since the last tick. Never raises."""
    try:
        config = load_config(ws.config_path)
    except MementoError:
        return
    if not config.notify_urls:
        return
    try:
        _after_tick(ws, config)
    except Exception as exc:  # noqa: BLE001 - telling people must never break the tick
        cron_log(ws, f"notify failed: {type(exc).__name__}: {_scrub(str(exc), ' '.join(config.notify_urls))}")


def _after_tick(ws: Workspace, config: Config) -> None:
    from .plan.scan import parse_plan
    from .state_word import word_for
    from .status_log import parse_status

    plan = parse_plan(ws.plan_path, display=ws.rel(ws.plan_path))
    state = TickState.load(ws)
    events = [e for e in current_events(ws, plan, state, parse_status(ws.status_path))
              if e.kind in config.notify_events]
    record = load_record(ws)
    word = word_for(ws, plan, state)[0] if events else ""
    if not queue_changes(record, events, plan.title or ws.root.name, config.notify_urls, word) \
            and not record["pending"]:
        return
    if record["pending"]:
        deliver(ws, record, config.notify_urls)
    save_record(ws, record)


def queue_changes(record: dict, events: list[Event], project: str, urls, word: str = "") -> bool:
    """Put each new state's message in the record's pending list; drop pending messages whose
    state is over. Whether the record changed."""
    now = {e.key: e for e in events}
    states = record["states"]
    changed = False
    keep = [p for p in record["pending"] if p.get("key") in now and p.get("signature") == now[p["key"]].signature]
    if len(keep) != len(record["pending"]):
        record["pending"], changed = keep, True
    for key in [k for k in states if k not in now]:
        del states[key]
        changed = True
    for event in events:
        if states.get(event.key) != event.signature:
            states[event.key] = event.signature
            record["pending"].append({"key": event.key, "signature": event.signature,
                                      "urls": [url_id(u) for u in urls],
                                      **message(project, event, word)})
            changed = True
    return changed


def send_test(ws: Workspace) -> list[str]:
    """`memento notify test`: one message to every URL; the errors (empty: all delivered)."""
    config = load_config(ws.config_path)
    if not config.notify_urls:
        raise MementoError(f"{ws.rel(ws.config_path)}: [notify] urls is empty; add an Apprise URL first")
    from .plan.scan import parse_plan

    project = parse_plan(ws.plan_path, display=ws.rel(ws.plan_path)).title or ws.root.name
    test = {"key": "test", "signature": utc_stamp(), "urls": [url_id(u) for u in config.notify_urls],
            "title": f"Memento · {project}: test notification",
            "body": f"A test from `memento notify test` in {project}.\nWhat to do: nothing."}
    record = load_record(ws)
    saved, record["pending"] = record["pending"], [test]
    _, errors = deliver(ws, record, config.notify_urls)
    untried = len(test["urls"]) - sum(not e.endswith(UNREADABLE) for e in errors)
    if untried > 0:
        errors.append(f"{untried} URL(s) not tried: the {TOTAL_SECONDS:.0f} s for sending ran out")
    record["pending"] = saved
    save_record(ws, record)
    return errors
