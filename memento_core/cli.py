"""The `memento` command line (SPEC §7).

Human output lines start with ``[ok]``, ``[warn]`` or ``[error]``; ``--json``
prints one JSON document. Errors go to stderr as one clear sentence with exit
code 2, never a traceback (set MEMENTO_DEBUG=1 to see one).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from .errors import MementoError
from .workspace import Workspace

from .errors import EXIT_ATTENTION, EXIT_ERROR, EXIT_OK  # noqa: F401 (the commands import them from here)


# --------------------------------------------------------------------------- output


def ok(message: str) -> None:
    print(f"[ok] {message}")


def warn(message: str) -> None:
    print(f"[warn] {message}")


def error(message: str) -> None:
    print(f"[error] {message}", file=sys.stderr)


def _safe(text: str) -> str:
    """Text from files, made harmless for a terminal (no escape sequences)."""
    return "".join(ch if ch.isprintable() or ch in "\t" else "?" for ch in text)


# --------------------------------------------------------------------------- workspace


def workspace_of(args: argparse.Namespace) -> Workspace:
    """``--project DIR`` or the positional DIR or the current directory, searched upwards."""
    start = getattr(args, "project", None) or getattr(args, "dir", None) or os.getcwd()
    if not Path(start).exists():
        raise MementoError(f"{start}: no such directory")
    return Workspace.find(start)


def load_plan(ws: Workspace):
    from .plan import parse_plan

    return parse_plan(ws.plan_path, display=ws.rel(ws.plan_path))


# --------------------------------------------------------------------------- commands


def cmd_init(args: argparse.Namespace) -> int:
    from .scaffold import init_workspace

    root = Path(args.project or args.dir or os.getcwd())
    report = init_workspace(root, project=args.name)
    if report.made_repo:
        ok(f"made a git repository in {report.root}")
    for rel in report.created:
        ok(f"created {rel}")
    for rel in report.kept:
        ok(f"kept existing {rel}")
    if report.commit:
        ok(f"committed the new files as {report.commit[:7]} \"memento: init workspace\"")
    if not report.created:
        ok(f"{report.root} is already a Memento workspace; nothing to do")
    else:
        print("Next: write the plan in docs/MASTER_PLAN.md, check it with `memento lint`, "
              "then `memento resume` and `memento cron install` (or run `memento-tui`).")
    return EXIT_OK


def cmd_lint(args: argparse.Namespace) -> int:
    from .config import load_config, unknown_keys

    ws = workspace_of(args)
    plan = load_plan(ws)
    problems = list(plan.errors)
    errors = [e for e in problems if e.severity == "error"]
    warnings = [e for e in problems if e.severity != "error"]
    config_error = None
    config_warnings: list[str] = []
    try:
        config = load_config(ws.config_path)
        text = ws.config_path.read_text(encoding="utf-8") if ws.config_path.exists() else ""
        for what, line in unknown_keys(config, text):
            where = f"{ws.rel(ws.config_path)}:{line}" if line else ws.rel(ws.config_path)
            config_warnings.append(f"{where}: unknown {what} is ignored (a typo? the default applies)")
    except MementoError as exc:
        config_error = str(exc)
    for e in problems:
        line = _safe(str(e))
        if e.severity == "error":
            error(line)
        else:
            warn(line)
    if config_error:
        error(_safe(config_error))
    for line in config_warnings:
        warn(_safe(line))
    warnings = warnings + config_warnings
    n_err = len(errors) + (1 if config_error else 0)
    summary = f"{ws.rel(ws.plan_path)}: {plural(len(plan.tasks), 'task')} in {plural(len(plan.phases), 'phase')}"
    if n_err:
        print(f"{summary}; {n_err} error(s), {len(warnings)} warning(s)")
        return EXIT_ERROR
    if warnings:
        print(f"{summary}; {len(warnings)} warning(s)")
        return EXIT_ATTENTION
    ok(f"{summary}; no problems")
    return EXIT_OK


def status_document(ws: Workspace) -> dict:
    """Everything `memento status` shows, as plain data (also its --json schema)."""
    from .overview import summarize
    from .status_log import parse_status

    return summarize(ws, load_plan(ws), parse_status(ws.status_path))


def cmd_status(args: argparse.Namespace) -> int:
    ws = workspace_of(args)
    doc = status_document(ws)
    if args.json:
        print(json.dumps(doc, ensure_ascii=False, indent=2))
    else:
        _render_status(doc)
    attention = doc["state"] in ("BLOCKED", "INVALID") or doc["breaker"]["tripped"] or doc["config_error"]
    return EXIT_ATTENTION if attention else EXIT_OK


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _render_status(doc: dict) -> None:
    # Rich is imported here only: `status --json` and the cron tick must stay light.
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from .config import format_duration

    console = Console(highlight=False, soft_wrap=True)
    c = doc["counts"]
    header = Text(f"[ok] {doc['project'] or doc['root']}: ", style="bold")
    header.append(doc["state"], style={"RUNNING": "green", "COMPLETE": "green"}.get(doc["state"], "yellow"))
    header.append(f"  {c['done']}/{c['total']} done, {c['pending']} pending, {c['blocked']} blocked, "
                  f"{c['in_progress']} in progress, {c['skipped']} skipped; {plural(doc['total_ticks'], 'tick')}")
    console.print(header)
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
    console.print(table)
    for b in doc["blocked"]:
        line = Text(f"[warn] {b['id']} blocked after {b['retries']} retries: {b['title']}")
        console.print(line)
        if b["last_error"]:
            console.print(Text("       " + _safe(b["last_error"].splitlines()[0][:200]), style="dim"))
    for e in doc["plan_errors"]:
        console.print(Text(f"[error] {e}"))
    if doc["config_error"]:
        console.print(Text(f"[error] {_safe(doc['config_error'])}"))
    if doc["breaker"]["tripped"]:
        console.print(Text(f"[warn] circuit breaker tripped at {doc['breaker']['at']}: {_safe(doc['breaker']['reason'])}"
                           " — fix the cause, then `memento resume`"))
    tag = "[ok]" if doc["next"]["kind"] in ("task", "complete", "waiting") else "[warn]"
    console.print(Text(f"{tag} {doc['next']['message']}"))
    if doc["eta_seconds"] is not None and doc["state"] == "RUNNING":
        console.print(Text(f"[ok] estimated time left: ~{format_duration(doc['eta_seconds'])}"))
    if doc["alert"]:
        console.print(Text("[warn] .memento_alert is present: the pipeline needs attention"))


def bar(done: int, total: int, width: int) -> str:
    """A plain-text progress bar that survives pipes and logs."""
    filled = round(width * done / total) if total else 0
    return "█" * filled + "░" * (width - filled)


def _set_mode(mode: str) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        from .control import set_mode
        from .state import TickState

        ws = workspace_of(args)
        before = load_plan(ws).meta.tick_mode
        breaker = TickState.load(ws).breaker_reason
        set_mode(ws, mode)
        ok(f"tick_mode: {mode} (was {before})")
        if mode == "auto" and breaker:
            ok(f"circuit breaker reset (it had tripped: {breaker})")
        if mode == "stopped":
            print("The next ticks will exit at once. `memento cron remove` also removes the schedule.")
        return EXIT_OK

    return run


def cmd_reset(args: argparse.Namespace) -> int:
    from .plan import reset_task

    ws = workspace_of(args)
    task = load_plan(ws).task(args.task_id)
    if task is not None and task.status == "~":
        raise MementoError(f"{args.task_id} is running ([~]); if its worker is gone, the next tick resets it "
                           "(`memento doctor` shows stale claims)")
    plan = reset_task(ws.plan_path, args.task_id)
    ok(f"{args.task_id} is [ ] again with retries 0 ({plan.task(args.task_id).title})")
    return EXIT_OK


def cmd_skip(args: argparse.Namespace) -> int:
    from .plan import skip_task

    ws = workspace_of(args)
    skip_task(ws.plan_path, args.task_id, args.reason)
    ok(f"{args.task_id} skipped [-]: {' '.join(args.reason.split())}")
    return EXIT_OK


def cmd_note(args: argparse.Namespace) -> int:
    from .notes import add_note

    ws = workspace_of(args)
    target = args.task or "global"
    task = load_plan(ws).task(args.task) if args.task else None
    if args.task and task is None:
        raise MementoError(f"task {args.task} is not in {ws.rel(ws.plan_path)}")
    note = add_note(ws.notes_path, args.text, target=target)
    who = "global note" if note.is_global else f"note for {note.target}"
    ok(f"{who} added to {ws.rel(ws.notes_path)} at line {note.line}")
    if task is not None and task.status in ("x", "-"):
        warn(f"{task.id} is already {task.state}: no worker will read this note unless the task is reset")
    return EXIT_OK


def cmd_tick(args: argparse.Namespace) -> int:
    from .tick.__main__ import main as tick_main

    ws = workspace_of(args)
    return tick_main(["--project", str(ws.root)])


def cmd_demo(args: argparse.Namespace) -> int:
    from .demo import create_demo

    root = create_demo(args.dir)
    ok(f"demo project created in {root}")
    print(f"Next: `memento status {root}`, then `memento tick {root}` a few times, "
          f"or `memento-tui {root}` and press `o` to let the dashboard tick it.")
    return EXIT_OK


# --------------------------------------------------------------------------- parser


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; ``command`` limits the lazily registered commands to that one ("" = none)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--project", metavar="DIR", help="the workspace (default: search upwards from here)")

    def with_dir(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
        p.add_argument("dir", nargs="?", metavar="DIR", help="the workspace (default: the current one)")
        return p

    parser = argparse.ArgumentParser(
        prog="memento",
        description="Run a long software project with coding agents, one verified task per tick.",
    )
    from . import __version__

    parser.add_argument("--version", action="version", version=f"memento {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = with_dir(sub.add_parser("init", parents=[common], help="lay out a Memento workspace (idempotent)"))
    p.add_argument("--name", help="project name for the plan title (default: the folder name)")
    p.set_defaults(func=cmd_init)

    p = with_dir(sub.add_parser("status", parents=[common], help="progress, blocked tasks and the next task"))
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(func=cmd_status)

    p = with_dir(sub.add_parser("lint", parents=[common], help="check the plan: exit 0 clean, 1 warnings, 2 errors"))
    p.set_defaults(func=cmd_lint)

    for mode, cmd, text in (("paused", "pause", "pause the pipeline (ticks exit at once)"),
                            ("auto", "resume", "resume the pipeline"),
                            ("stopped", "stop", "stop the pipeline")):
        p = with_dir(sub.add_parser(cmd, parents=[common], help=text))
        p.set_defaults(func=_set_mode(mode))

    p = sub.add_parser("reset", parents=[common], help="[!] → [ ] with retries 0")
    p.add_argument("task_id", metavar="ID")
    with_dir(p).set_defaults(func=cmd_reset)

    p = sub.add_parser("skip", parents=[common], help="mark a task [-] with a reason")
    p.add_argument("task_id", metavar="ID")
    p.add_argument("--reason", required=True, help="why the task is not needed")
    with_dir(p).set_defaults(func=cmd_skip)

    p = sub.add_parser("note", parents=[common], help="leave a note for the worker")
    p.add_argument("--task", metavar="ID", help="the task the note is for (default: global)")
    p.add_argument("text", metavar="TEXT")
    with_dir(p).set_defaults(func=cmd_note)

    p = with_dir(sub.add_parser("tick", parents=[common], help="run one tick now (what cron runs)"))
    p.set_defaults(func=cmd_tick)

    p = sub.add_parser("demo", help="create a demo project whose plan the script agent can run")
    p.add_argument("dir", metavar="DIR", help="a new or empty folder")
    p.set_defaults(func=cmd_demo)

    # Commands whose modules are heavier to import (mistune, crontab, …) are only
    # registered when they are the command being run, or for --help: `memento status
    # --json` must stay a few times the cost of reading the plan (SPEC §11).
    for name, (module, function) in LAZY_COMMANDS.items():
        if command is None or command == name:
            register = getattr(importlib.import_module(module, __package__), function)
            register(sub, common, with_dir)
    return parser


def _register_ack(sub, common, with_dir) -> None:
    from .checkpoint import run_ack

    p = with_dir(sub.add_parser("ack", parents=[common], help="mark the unsurfaced results as seen"))
    p.set_defaults(func=run_ack)


# command -> (module, function registering its subparser(s))
LAZY_COMMANDS: dict[str, tuple[str, str]] = {
    "agents": (".agent_check", "register"),
    "cron": (".cron", "register"),
    "memory": (".memory.cli", "register"),
    "doctor": (".doctor", "register"),
    "ack": (".cli", "_register_ack"),
}


BUILTIN_COMMANDS = frozenset({"init", "status", "lint", "pause", "resume", "stop", "reset", "skip", "note",
                              "tick", "demo"})


def _command_of(argv: Sequence[str]) -> str | None:
    """The subcommand named on the command line: a lazy one, "" for a built-in one, None for all."""
    for arg in argv:
        if not arg.startswith("-"):
            if arg in LAZY_COMMANDS:
                return arg
            # A built-in needs none of the lazy ones; a typo gets them all, so that its
            # "invalid choice" message lists every command.
            return "" if arg in BUILTIN_COMMANDS else None
        if arg in ("-h", "--help"):
            return None
    return None


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_command_of(argv))
    args, extra = parser.parse_known_args(argv)
    # argparse stops filling positionals at the first option, so the DIR of
    # `memento skip T-1 --reason x DIR` arrives as an extra: take it.
    if len(extra) == 1 and not extra[0].startswith("-") and getattr(args, "dir", "") is None:
        args.dir = extra[0]
    elif extra:
        parser.error("unrecognized arguments: " + " ".join(extra))
    try:
        return int(args.func(args) or 0)
    except MementoError as exc:
        error(_safe(str(exc)))
        return EXIT_ERROR
    except KeyboardInterrupt:
        error("interrupted")
        return 130
    except BrokenPipeError:
        # `memento … | head`: the reader has seen enough; that is not an error.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except OSError as exc:
        if os.environ.get("MEMENTO_DEBUG"):
            raise
        where = f"{exc.filename}: " if exc.filename else ""
        error(f"{where}{exc.strerror or exc}")
        return EXIT_ERROR
    except Exception as exc:  # a bug: still one line, with a way to see more
        if os.environ.get("MEMENTO_DEBUG"):
            raise
        error(f"internal error: {type(exc).__name__}: {_safe(str(exc))} (MEMENTO_DEBUG=1 shows the traceback)")
        return EXIT_ERROR


if __name__ == "__main__":
    raise SystemExit(main())
