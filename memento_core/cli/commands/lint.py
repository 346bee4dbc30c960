"""`memento lint [DIR]`: check the plan and memento.toml; exit 0 clean, 1 warnings, 2 errors."""

from __future__ import annotations

import argparse
import re

from ...errors import MementoError, PlanError
from ...workspace import Workspace
from ..context import load_plan, with_dir, workspace_of
from ..output import EXIT_ATTENTION, EXIT_ERROR, EXIT_OK, error, ok, plural, safe_text, warn


def register(sub, common: argparse.ArgumentParser) -> None:
    p = with_dir(sub.add_parser("lint", parents=[common], help="check the plan: exit 0 clean, 1 warnings, 2 errors"))
    p.set_defaults(func=cmd_lint)


def _preset(ws: Workspace) -> str | None:
    from ...config import load_config

    try:
        return load_config(ws.config_path).agent_preset
    except MementoError:
        return None


def config_problems(ws: Workspace) -> tuple[str | None, list[str]]:
    """(the error that stops memento.toml from loading, warnings about keys it ignores)."""
    from ...config import load_config, unknown_keys

    warnings: list[str] = []
    try:
        config = load_config(ws.config_path)
        text = ws.config_path.read_text(encoding="utf-8") if ws.config_path.exists() else ""
        for what, line in unknown_keys(config, text):
            where = f"{ws.rel(ws.config_path)}:{line}" if line else ws.rel(ws.config_path)
            warnings.append(f"{where}: unknown {what} is ignored (a typo? the default applies)")
    except MementoError as exc:
        return str(exc), warnings
    return None, warnings


# What verify runs rather than reads: code and test files, and folders (of tests). A data
# file verify checks (`test -f HELLO.md`) is the task's output, not its judge.
CODE_SUFFIXES = (".py", ".sh", ".bash", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".php", ".go", ".rs",
                 ".java", ".kt", ".lua", ".exs", ".ex", ".bats", ".mk", ".toml", ".cfg", ".ini", ".json")


def _verify_paths(verify: str, root) -> list[str]:
    """The words of a verify command that name code, tests or folders (``tests/x.py::test_y`` → the file)."""
    import shlex

    try:
        words = shlex.split(verify, comments=True)
    except ValueError:
        words = verify.split()
    found = []
    for word in words:
        word = word.split("::", 1)[0]
        if word.startswith("-") or "=" in word or word in ("&&", "||", ";", "|"):
            continue
        word = word.removeprefix("./")
        name = word.rstrip("/").rsplit("/", 1)[-1]
        is_folder = word.endswith("/") or (root / word).is_dir()
        if word and (is_folder or name.endswith(CODE_SUFFIXES) or name in ("Makefile", "justfile")
                     or (name.startswith("test") and ("." in name or "/" in word))):
            found.append(word)
    return found


def verify_judged_by_worker(plan, display: str, root) -> list[PlanError]:
    """A warning per task whose verify names a path inside its context_files and not in its
    guard_files: the worker could rewrite the test that judges it (SPEC §13)."""
    from ...gitops import matches_any

    found = []
    for task in plan.tasks:
        if not task.verify or not task.context_files:
            continue
        for path in _verify_paths(task.verify, root):
            folder = path.rstrip("/") + "/"
            inside = matches_any(path, task.context_files) or any(
                c.lstrip("/").startswith(folder) for c in task.context_files)
            if inside and not matches_any(path, task.guard_files):
                line = task.field_lines.get("verify", task.line)
                found.append(PlanError(display, line, task.id,
                                       f"verify runs `{path}`, which is in context_files and not in guard_files: "
                                       "the worker could rewrite the test that judges it (add it to guard_files)",
                                       severity="warning", scope="task"))
    return found


# Every field a task line's block may hold; another name is a typo the tick would ignore.
TASK_FIELDS = ("verify", "context_files", "guard_files", "do", "estimate", "timeout", "retries", "depends",
               "accept", "reason")
_LIST_FIELDS = ("context_files", "guard_files", "depends")
# A line a person meant as a task that the plan's format does not read as one: `- [] `T-2``,
# `-[ ] `T-4``, `- [ ]`T-5``, `[ ] T-6`.
_LOOSE_TASK_RE = re.compile(r"^ {0,3}(?:[-*+][ \t]*)?\[[^\]\n]{0,3}\][ \t]*`?(?P<id>[A-Z][A-Z0-9]*-\d+)\b")
_TASK_LINE_RE = re.compile(r"^ {0,3}[-*+] \[.\][ \t]+`?[A-Z][A-Z0-9]*-\d+`?(?::|[ \t]|$)")
_FENCE_RE = re.compile(r"^ {0,3}(```|~~~)")
_FIELD_RE = re.compile(r"^[ \t]+[-*+] (?P<key>[A-Za-z_][\w-]*):[ \t]*(?P<value>.*)$")  # as the plan reads them


def text_problems(plan, text: str, display: str, preset: str | None) -> list[PlanError]:
    """What the plan's scanner reads past but a person meant otherwise, each with its line:
    task-like lines it does not take for tasks, unclosed `[` lists and backticks in fields,
    unknown field names (with the nearest known one), and a `script` task without `do:`."""
    import difflib

    found: list[PlanError] = []
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        m = _FENCE_RE.match(line)
        if m:
            fence = None if fence == m.group(1) else (fence or m.group(1))
            continue
        loose = _LOOSE_TASK_RE.match(line) if fence is None else None
        if loose and not _TASK_LINE_RE.match(line):
            task_id = loose.group("id")
            found.append(PlanError(display, number, task_id, "looks like a task but is not read as one: write "
                                   f"`- [ ] `{task_id}` title` (a dash, a space, a box of one character, a space)",
                                   scope="task"))
    for task in plan.tasks:
        lines = task.block.split("\n")
        for offset, raw in enumerate(lines[1:], 1):
            fm = _FIELD_RE.match(raw.rstrip("\r"))
            if fm is None:
                continue
            key, value, where = fm.group("key").lower(), fm.group("value").strip(), task.line + offset
            if key not in TASK_FIELDS:
                near = difflib.get_close_matches(key, TASK_FIELDS, n=1, cutoff=0.6)
                hint = f" (did you mean `{near[0]}`?)" if near else f" (known: {', '.join(TASK_FIELDS)})"
                found.append(PlanError(display, where, task.id, f"unknown field `{key}:` is ignored{hint}",
                                       severity="warning", scope="task"))
            if value.count("`") % 2:
                found.append(PlanError(display, where, task.id, f"{key}: a backtick is never closed", scope="task"))
            if key in _LIST_FIELDS and value.startswith("[") != value.endswith("]"):
                found.append(PlanError(display, where, task.id,
                                       f"{key}: the list's `[` … `]` is not closed: write [a, b]", scope="task"))
        if preset == "script" and task.status not in "x-" and not task.do:
            found.append(PlanError(display, task.line, task.id, "has no `do:` command, and the `script` preset "
                                   "([agent] in memento.toml) runs nothing else: add `- do: `command`` (or set a real preset)",
                                   severity="warning", scope="task"))
    return found


def names_mementos_files(plan, display: str) -> list[PlanError]:
    """A warning per task whose context_files name one of Memento's own files (SPEC §13): the
    worker can never change them (read-only in the sandbox, refused by the guards)."""
    from ...workspace import own_file

    found = []
    for task in plan.tasks:
        own = [c for c in task.context_files if own_file(c, plan.meta.status_archive_dir)]
        if own:
            found.append(PlanError(display, task.field_lines.get("context_files", task.line), task.id,
                                   f"context_files names Memento's own {'files' if len(own) > 1 else 'file'} "
                                   f"{', '.join(own)}: the worker cannot change them (read-only in the sandbox, "
                                   "refused by the guards); only the rest of docs/ and scripts/ is the project's",
                                   severity="warning", scope="task"))
    return found


def archive_through_link(ws, plan, display: str) -> list[PlanError]:
    """An error when Meta ``status_archive_dir`` leads out of the project through a link (the
    text itself is checked by the plan's parser): the tick rotates into the default instead."""
    from ...workspace import archive_dir_escape

    problem = archive_dir_escape(ws.root, plan.meta.status_archive_dir)
    if not problem:
        return []
    return [PlanError(display, plan.meta.lines.get("status_archive_dir", 0), None,
                      f"Meta `status_archive_dir`: {problem}; the status log rotates into the default "
                      "logs/status_archive/", scope="task")]


def cmd_lint(args: argparse.Namespace) -> int:
    ws = workspace_of(args)
    plan = load_plan(ws)
    display = ws.rel(ws.plan_path)
    problems = [*plan.errors, *verify_judged_by_worker(plan, display, ws.root), *names_mementos_files(plan, display)]
    problems += archive_through_link(ws, plan, display)
    problems += text_problems(plan, ws.plan_path.read_text(encoding="utf-8", errors="replace"), display, _preset(ws))
    problems.sort(key=lambda e: e.line)
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
    warnings = warnings + config_warnings
    n_err = len(errors) + (1 if config_error else 0)
    summary = f"{ws.rel(ws.plan_path)}: {plural(len(plan.tasks), 'task')} in {plural(len(plan.phases), 'phase')}"
    if n_err:
        error(f"{summary}; {plural(n_err, 'error')}, {plural(len(warnings), 'warning')}")
        return EXIT_ERROR
    if warnings:
        warn(f"{summary}; {plural(len(warnings), 'warning')}")
        return EXIT_ATTENTION
    ok(f"{summary}; no problems")
    return EXIT_OK
