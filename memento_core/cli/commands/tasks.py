"""`memento tasks [DIR] [--state S] [--json]` (SPEC §16): every task with its state, retries,
last result (from the status log) and line."""

from __future__ import annotations

import argparse

from ...workspace import Workspace
from ..context import load_plan, with_dir, workspace_of
from ..output import EXIT_ATTENTION, EXIT_OK, plural, safe_json, safe_text, warn

# The plan's status characters by the names this command shows and filters on.
STATES = {" ": "pending", "x": "done", "!": "blocked", "~": "running", "-": "skipped", "?": "waiting"}


def register(sub, common: argparse.ArgumentParser) -> None:
    p = with_dir(sub.add_parser("tasks", parents=[common],
                                help="every task with state, retries, last result and line"))
    p.add_argument("--state", choices=list(STATES.values()), help="only the tasks in this state")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(func=cmd_tasks)


def _last_results(ws: Workspace, plan) -> dict:
    """The newest task entry (not an event) of each task: the status log, then its archive for
    tasks that have run but are no longer in it."""
    from ...status_log import iter_status_archive, parse_status

    last: dict = {}
    for entry in parse_status(ws.status_path):
        if entry.task_id and not entry.is_event:
            last[entry.task_id] = entry
    ran = [t.id for t in plan.tasks if t.id not in last and (t.status in "x!" or t.retries)]
    if ran:
        archived: dict = {}
        for entry in iter_status_archive(ws.root / plan.meta.status_archive_dir):
            if entry.task_id in ran and not entry.is_event:
                archived[entry.task_id] = entry
        last = {**archived, **last}
    from ...status_log import entries_with_commits

    resolved = entries_with_commits(ws.root, last.values())  # "the commit that adds this entry" → its sha
    return dict(zip(last, resolved, strict=True))


def _result(entry) -> dict | None:
    if entry is None:
        return None
    reason = entry.field("Reason") or ""
    # A failed acceptance review passed verify: its reason, not verify's output, is the error.
    error = reason if reason.startswith("review:") else entry.error
    return {"tick": entry.tick, "at": entry.timestamp, "status": entry.status, "error": error,
            "commit": entry.commit_sha, "log": entry.log_path, "review": entry.field("Review")}


def task_rows(ws: Workspace, plan) -> list[dict]:
    """One dict per task, in plan order (also the --json schema's ``tasks``)."""
    from ...task_deps import waits_on

    last = _last_results(ws, plan)
    waiting = waits_on(plan)
    dep_problems: dict[str, list[str]] = {}
    for e in plan.dependency_errors:
        dep_problems.setdefault(e.task_id, []).append(e.message)
    return [{
        "id": t.id, "title": t.title, "module": t.module, "phase": t.phase,
        "state": STATES.get(t.status, "unknown"), "retries": t.retries, "max_retries": plan.meta.max_retries,
        "line": t.line, "problems": list(t.problems) + dep_problems.get(t.id, []), "last_result": _result(last.get(t.id)),
        "depends": list(t.depends), "waits_on": waiting.get(t.id, []),
        "question": t.question if t.status == "?" else None, "questions": t.questions,
    } for t in plan.tasks]


def cmd_tasks(args: argparse.Namespace) -> int:
    ws = workspace_of(args)
    plan = load_plan(ws)
    rows = task_rows(ws, plan)
    shown = [r for r in rows if args.state is None or r["state"] == args.state]
    from ...scheduler import plan_errors
    from ...state_word import ATTENTION_WORDS, word_for

    errors = plan_errors(plan)  # a task never picked is an error here as in `memento lint`
    word, why = word_for(ws, plan)  # the pipeline's word, as `memento status` and the dashboard say it
    code = EXIT_ATTENTION if errors or word in ATTENTION_WORDS else EXIT_OK
    if args.json:
        print(safe_json({"plan": ws.rel(ws.plan_path), "state": word, "tasks": shown,
                         "plan_errors": [str(e) for e in errors]}, indent=2))
        return code
    what = f"{args.state} " if args.state else ""
    tag = "[error]" if word == "INVALID" else "[warn]" if code else "[ok]"
    print(f"{tag} {safe_text(plan.title or ws.root.name)}: {word}" + (f" — {safe_text(why)}" if why else "")
          + f"; {plural(len(shown), what + 'task')} in {ws.rel(ws.plan_path)}"
          + (f" (of {len(rows)})" if args.state else ""))
    for line in render_rows(ws.rel(ws.plan_path), shown):
        print(line)
    for e in errors:
        print(f"[error] {safe_text(str(e))}")
    if plan.plan_errors:
        warn(f"the plan has {plural(len(plan.plan_errors), 'error')}: no task runs until it is fixed (`memento lint`)")
    elif errors:
        warn(f"{plural(len({e.task_id for e in errors}), 'task')} with errors never run until the plan is fixed "
             "(`memento lint`)")
    return code


def _last_text(result: dict | None) -> str:
    if result is None:
        return "—"
    tick = f"#{result['tick']} " if result["tick"] is not None else ""
    return tick + result["status"] + (f" {result['commit']}" if result["commit"] else "")


def render_rows(plan_rel: str, rows: list[dict]) -> list[str]:
    """Aligned columns ID, STATE, RETRIES, LAST, LINE, TITLE; a failure's error on the line below."""
    table = [("ID", "STATE", "RETRIES", "LAST", "LINE", "TITLE")]
    for r in rows:
        table.append((safe_text(r["id"]), r["state"], f"{r['retries']}/{r['max_retries']}",
                      safe_text(_last_text(r["last_result"])), f"{plan_rel}:{r['line']}", safe_text(r["title"])))
    widths = [max(len(row[i]) for row in table) for i in range(5)]
    lines = []
    for n, row in enumerate(table):
        lines.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:5])) + "  " + row[5])
        r = rows[n - 1] if n else None
        result = r["last_result"] if r else None
        if r and r.get("question"):
            lines.append(" " * (widths[0] + 2) + "asks: " + safe_text(r["question"])[:200]
                         + f" (`memento answer {safe_text(r['id'])} …`)")
        elif r and result and result["status"] not in ("SUCCESS", "NEEDS INPUT") and r["state"] != "done" \
                and result["error"]:
            lines.append(" " * (widths[0] + 2) + "last error: " + safe_text(result["error"])[:200])
        if r and r["waits_on"]:
            lines.append(" " * (widths[0] + 2) + "waits on " + safe_text(", ".join(r["waits_on"])))
        if r and r["problems"]:
            lines.append(" " * (widths[0] + 2) + "never picked: " + safe_text("; ".join(r["problems"])))
    return lines
