"""`memento status [DIR] [--json]`: progress, blocked tasks and the next task."""

from __future__ import annotations

import argparse

from ...lines import clipped, listed
from ...workspace import Workspace
from ..context import load_plan, with_dir, workspace_of
from ..output import EXIT_ATTENTION, EXIT_OK, bar, plural, safe_doc, safe_json, safe_text


def register(sub, common: argparse.ArgumentParser) -> None:
    p = with_dir(sub.add_parser("status", parents=[common], help="progress, blocked tasks and the next task"))
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(func=cmd_status)


def status_document(ws: Workspace) -> dict:
    """Everything `memento status` shows, as plain data (also its --json schema).

    ``state`` is the one word (state_word.pipeline_word, the dashboard header's): RUNNING
    only when something will tick; ``pipeline`` the same word and why; ``schedule`` the
    cron facts it was judged on.
    """
    from ...overview import summarize
    from ...state import TickState
    from ...state_word import cron_facts, pipeline_word
    from ...status_log import parse_status

    plan = load_plan(ws)  # once: 10,000 tasks take tens of milliseconds to read (SPEC §11)
    doc = summarize(ws, plan, parse_status(ws.status_path))
    installed, daemon = cron_facts(ws.root)
    word, why = pipeline_word(doc, TickState.load(ws), cron_installed=installed, cron_daemon=daemon)
    doc["state"] = word
    doc["pipeline"] = {"state": word, "why": why}
    doc["unreviewed"] = _unreviewed(ws)
    doc["schedule"] = {"cron_installed": installed, "cron_daemon": daemon}
    doc["needs_you"] = _needs_you(ws, plan, doc)
    return doc


def _needs_you(ws: Workspace, plan, doc: dict) -> list[dict]:
    """What needs a person, as `memento report --json` says it (a question waiting first among tasks)."""
    from ...report import needs_of
    from ...state import TickState

    needs, _ = needs_of(ws, plan, doc, TickState.load(ws), doc["state"], doc["pipeline"]["why"])
    return needs


def _unreviewed(ws: Workspace) -> list[dict]:
    """Passed tasks nobody has acknowledged yet (CURRENT_STATE.md's Unsurfaced Results, the
    dashboard's "Needs you"): {task, title, commit, at}."""
    from ...checkpoint import unsurfaced_results
    from ...state import TickState

    try:
        found = unsurfaced_results(ws, TickState.load(ws))
    except Exception:  # noqa: BLE001 - an unreadable acknowledgement file hides nothing else
        return []
    return [{k: u.get(k) for k in ("task", "title", "commit", "at")} for u in found]


def cmd_status(args: argparse.Namespace) -> int:
    ws = workspace_of(args)
    doc = status_document(ws)
    if args.json:
        print(safe_json(doc, indent=2))
    else:
        render_status(doc)
    return EXIT_ATTENTION if needs_attention(doc) else EXIT_OK


def needs_attention(doc: dict) -> bool:
    """Exit 1: blocked, invalid (the plan, memento.toml, no git repository), a tick refused a
    dirty tree, nothing will tick, the breaker tripped, a verify change the architect made, a
    worker's question waits for a person, a required check fails on a phase's pull request or
    GitHub refuses the token."""
    from ...state_word import ATTENTION_WORDS

    return bool(_word(doc) in ATTENTION_WORDS or doc["breaker"]["tripped"] or doc["config_error"]
                or doc.get("verify_changes") or doc.get("plan_errors") or doc.get("questions")
                or doc.get("forge_trouble") or any(_failing(pr) for pr in doc.get("pull_requests") or ()))


def _failing(pr: dict) -> bool:
    return pr.get("checks") == "failing" and pr.get("state") in ("open", "merged")


def _word(doc: dict) -> str:
    return doc["state"]


def header_tag(doc: dict) -> str:
    """The header's prefix says what the state means: ``[error]`` while nothing can run
    (an invalid plan or memento.toml, no git repository), ``[warn]`` when it needs a person,
    else ``[ok]``."""
    if _word(doc) == "INVALID" or doc["config_error"]:
        return "[error]"
    return "[warn]" if needs_attention(doc) else "[ok]"


def render_status(doc: dict) -> None:
    """The human form of the status document."""
    # Rich is imported here only: `status --json` and the cron tick must stay light.
    from rich.console import Console

    console = Console(highlight=False, soft_wrap=True)
    doc = safe_doc(doc)  # titles, reasons, phase names: text from files and agents (SPEC §13)
    console.print(_header(doc))
    console.print(_phase_table(doc))
    for line in _attention_lines(doc):
        console.print(line)


def _header(doc: dict):
    from rich.text import Text

    c = doc["counts"]
    header = Text(f"{header_tag(doc)} {doc['project'] or doc['root']}: ", style="bold")
    word = _word(doc)
    header.append(word, style={"RUNNING": "green", "COMPLETE": "green"}.get(word, "yellow"))
    waiting = f"{c['questions']} waiting for an answer, " if c.get("questions") else ""
    header.append(f"  {c['done']}/{c['total']} done, {c['pending']} pending, {c['blocked']} blocked, {waiting}"
                  f"{c['in_progress']} in progress, {c['skipped']} skipped; {plural(doc['total_ticks'], 'tick')}")
    return header


def _phase_table(doc: dict):
    from rich.table import Table
    from rich.text import Text

    table = Table(box=None, pad_edge=False, show_header=True, header_style="bold")
    table.add_column("phase")
    table.add_column("progress", width=24)
    table.add_column("done", justify="right")
    table.add_column("blocked", justify="right")
    table.add_column("")
    for p in doc["phases"]:
        table.add_row(
            Text(p["title"]),
            bar(p["done"], p["total"], 22),
            f"{p['done']}/{p['total']}",
            str(p["blocked"]) if p["blocked"] else "",
            "" if p["open"] else "waits on " + ", ".join(p["depends"]),
        )
    return table


def _pull_words(pr: dict | None) -> str:
    """A phase's pull request in words: ``PR #13 open, checks failing, changes requested``."""
    if not pr or not pr.get("number"):
        return ""
    words = [f"PR #{pr['number']} {pr['state']}"]
    if pr["checks"] != "none":
        words.append(f"checks {pr['checks']}")
    if pr["review"] != "none":
        words.append(pr["review"].replace("_", " "))
    return ", ".join(words)


def _spending_lines(doc: dict) -> list:
    """Today's usage and cost, the budget, and "rate limited until …" (SPEC §14)."""
    from rich.text import Text

    today, budget, limit = doc["usage"]["today"], doc["budget"], doc["rate_limit"]
    lines = []
    if today["tokens_in"] or today["tokens_out"] or today["cost_usd"]:
        of = f" of ${budget['daily_usd']:.2f}" if budget["daily_usd"] else ""
        lines.append(Text(f"[ok] usage today: {today['tokens_in']:,} in / {today['tokens_out']:,} out tokens, "
                          f"${today['cost_usd']:.3f}{of}"))
    if budget["reached"]:
        lines.append(Text("[warn] daily budget reached: ticks skip until the next UTC day"))
    if limit["until"]:
        lines.append(Text(f"[warn] rate limited until {limit['until']} (preset {safe_text(limit['preset'] or '?')}): "
                          "ticks skip until then"))
    window = doc.get("window") or {}
    if window.get("until"):
        lines.append(Text(f"[warn] usage window {safe_text(window['what'] or '?')} until {window['until']} "
                          f"(preset {safe_text(window['preset'] or '?')}): no attempt starts until then"))
    return lines


def _attention_lines(doc: dict) -> list:
    """Blocked tasks, problems, the breaker, the next step, the ETA and the alert, in that order."""
    from rich.text import Text

    from ...durations import format_duration

    lines = []
    for b in doc["blocked"]:
        lines.append(Text(f"[warn] {b['id']} blocked after {b['retries']} retries: {b['title']}"))
        if b["last_error"]:
            lines.append(Text("       " + safe_text(clipped(b["last_error"].splitlines()[0], 200)), style="dim"))
    for q in doc.get("questions") or []:
        how = f"`memento answer {q['id']} --choice N`" if q["choices"] else f"`memento answer {q['id']} TEXT`"
        lines.append(Text(f"[warn] {q['id']} asks: {safe_text(clipped(q['question'], 200))} — answer with {how}"))
        lines += [Text(f"       [{n}] {safe_text(clipped(choice, 160))}") for n, choice in enumerate(q["choices"], 1)]
    for c in doc.get("verify_changes") or []:
        was = f"`{c['old']}` → " if c["old"] else "(a new task) "
        lines.append(Text(f"[warn] the architect changed {c['task']}'s verify: {safe_text(was + '`' + c['new'] + '`')}"
                          f" — {c['task']} does not run until you check it, then `memento architect --ack {c['task']}`"))
    for pr in doc.get("pull_requests") or []:
        if pr.get("number"):
            tag = "[warn]" if _failing(pr) or pr["review"] == "changes_requested" else "[ok]"
            lines.append(Text(f"{tag} {pr['phase']}: {_pull_words(pr)}" + (f" — {pr['url']}" if pr["url"] else "")))
        for check in pr["failing"] if _failing(pr) else ():
            where = f" ({check['url']})" if check["url"] else ""
            lines.append(Text(f"[warn] {pr['phase']}: check {check['name']} fails on pull request #{pr['number']}"
                              f"{where} — fix it on {pr['branch']}, or add a task that does"))
    if doc.get("forge_trouble"):
        t = doc["forge_trouble"]
        lines.append(Text(f"[warn] GitHub refuses the token from {t['source']} since {t['since']} "
                          f"({t['doing']}): {clipped(t['message'], 200)}"))
    for e in doc["plan_errors"]:
        lines.append(Text(f"[error] {e}"))
    if doc.get("git_error"):
        lines.append(Text(f"[error] {safe_text(doc['git_error'])}"))
    if doc["config_error"]:
        lines.append(Text(f"[error] {safe_text(doc['config_error'])}"))
    if doc.get("refused"):
        lines.append(Text(f"[warn] the last tick refused to run over uncommitted changes: "
                          f"{safe_text(listed(doc['refused']))} — commit or stash them"))
    word, why = _word(doc), (doc.get("pipeline") or {}).get("why", "")
    if word == "IDLE":
        lines.append(Text(f"[warn] {why}: `memento cron install` (or auto-tick in memento-tui)"))
    if doc["breaker"]["tripped"]:
        lines.append(Text(f"[warn] circuit breaker tripped at {doc['breaker']['at']}: "
                          f"{safe_text(doc['breaker']['reason'])} — fix the cause, then `memento resume`"))
    lines += _spending_lines(doc)
    box = doc["sandbox"]
    fix = " — `memento doctor` says what to do" if box.get("fix") else ""
    if box["mode"] == "bwrap" and not box["confined"]:
        lines.append(Text(f"[error] sandbox: {safe_text(box['reason'] or '')}{fix}"))
    elif not box["confined"]:
        lines.append(Text(f"[warn] unconfined: the agent runs without a sandbox ({safe_text(box['reason'] or '')})"
                          f"{fix}"))
    lines += _notify_lines(doc.get("notify") or {})
    tag = "[ok]" if doc["next"]["kind"] in ("task", "complete", "waiting") and word != "INVALID" else "[warn]"
    after = " (once the problem above is fixed)" if word == "INVALID" and not doc["plan_errors"] else ""
    lines.append(Text(f"{tag} {doc['next']['message']}{after}"))
    if doc["eta_seconds"] is not None and word == "RUNNING":
        lines.append(Text(f"[ok] estimated time left: ~{format_duration(doc['eta_seconds'])}"))
    if doc.get("unreviewed"):
        ids = listed(str(u["task"]) for u in doc["unreviewed"])
        lines.append(Text(f"[warn] {plural(len(doc['unreviewed']), 'passed task')} not yet reviewed: {safe_text(ids)}"
                          " — look at them (`git show`), then `memento ack`"))
    if doc["alert"]:
        lines.append(Text("[warn] .memento_alert is present: the pipeline needs attention"))
    return lines


def _notify_lines(notify: dict) -> list:
    """Where notifications go (URLs masked: they hold tokens) and whether the last send failed."""
    from rich.text import Text

    if not notify.get("urls"):
        return []
    sent = f"; last sent {notify['last_sent']}" if notify.get("last_sent") else ""
    lines = [Text(f"[ok] notify: {safe_text(', '.join(notify['urls']))}{sent}")]
    if notify.get("last_error"):
        lines.append(Text(f"[warn] notify: the last send failed: {safe_text(notify['last_error'])} "
                          "(retried next tick)"))
    return lines
