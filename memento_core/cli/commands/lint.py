"""`memento lint [DIR]`: check the plan and memento.toml; exit 0 clean, 1 warnings, 2 errors."""

from __future__ import annotations

import argparse

from ...errors import MementoError
from ...workspace import Workspace
from ..context import load_plan, with_dir, workspace_of
from ..output import EXIT_ATTENTION, EXIT_ERROR, EXIT_OK, error, ok, plural, safe_text, warn


def register(sub, common: argparse.ArgumentParser) -> None:
    p = with_dir(sub.add_parser("lint", parents=[common], help="check the plan: exit 0 clean, 1 warnings, 2 errors"))
    p.set_defaults(func=cmd_lint)


def _preset(ws: Workspace) -> str | None:
    from ...config.load import load_config

    try:
        return load_config(ws.config_path).agent_preset
    except MementoError:
        return None


def config_problems(ws: Workspace) -> tuple[str | None, list[str]]:
    """(the error that stops memento.toml from loading, warnings about keys it ignores)."""
    from ...config.lint import key_problems, unknown_key_message, unknown_keys
    from ...config.load import load_config

    warnings: list[str] = []
    try:
        config = load_config(ws.config_path)
        text = ws.config_path.read_text(encoding="utf-8") if ws.config_path.exists() else ""
        for what, line in unknown_keys(config, text):
            where = f"{ws.rel(ws.config_path)}:{line}" if line else ws.rel(ws.config_path)
            warnings.append(f"{where}: {unknown_key_message(what)}")
        for what, line in key_problems(config, text):
            warnings.append(f"{ws.rel(ws.config_path)}:{line}: {what}" if line else f"{ws.rel(ws.config_path)}: {what}")
    except MementoError as exc:
        return str(exc), warnings
    return None, warnings


def cmd_lint(args: argparse.Namespace) -> int:
    # Here, not at the top: every command builds this parser, `status --json` too.
    from ...plan_lint import lint_problems

    ws = workspace_of(args)
    plan = load_plan(ws)
    display = ws.rel(ws.plan_path)
    problems = lint_problems(plan, ws.plan_path.read_text(encoding="utf-8", errors="replace"), display, ws.root,
                             _preset(ws))
    errors = [e for e in problems if e.severity == "error"]
    warnings = [e for e in problems if e.severity != "error"]
    config_error, config_warnings = config_problems(ws)
    for e in problems:
        line = safe_text(str(e))
        if e.severity == "error":
            error(line)
        else:
            warn(line)
    if config_error:
        error(safe_text(config_error))
    for line in config_warnings:
        warn(safe_text(line))
    # Each file is named with its own count: memento.toml's problems are not the plan's.
    summary = f"{display}: {plural(len(plan.tasks), 'task')} in {plural(len(plan.phases), 'phase')}, " + \
        _counts(len(errors), len(warnings))
    if config_error or config_warnings:
        summary += f"; {ws.rel(ws.config_path)}: {_counts(1 if config_error else 0, len(config_warnings))}"
    if errors or config_error:
        error(summary)
        return EXIT_ERROR
    if warnings or config_warnings:
        warn(summary)
        return EXIT_ATTENTION
    ok(summary)
    return EXIT_OK


def _counts(errors: int, warnings: int) -> str:
    if not errors and not warnings:
        return "no problems"
    return ", ".join(p for p in ((plural(errors, "error") if errors else ""),
                                 (plural(warnings, "warning") if warnings else "")) if p)
