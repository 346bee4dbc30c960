"""The checks of `memento lint` beyond the parser's (SPEC §3, §13): what the plan's scanner reads
past but a person meant otherwise, a verify the worker could rewrite, Memento's own files named
in context_files. :func:`lint_problems` is the whole engine, used by `memento lint` and by the
checks of a drafted plan (tick/architect/draft_checks.py)."""

from __future__ import annotations

import re
from pathlib import Path

from .errors import PlanError


def lint_problems(plan, text: str, display: str, root: Path, preset: str | None) -> list[PlanError]:
    """Every error and warning `memento lint` reports on ``plan`` (``text`` its file's text), by line."""
    problems = [*plan.errors, *verify_judged_by_worker(plan, display, root), *names_mementos_files(plan, display)]
    problems += archive_through_link(root, plan, display)
    problems += verify_programs_missing(plan, display, root)
    if not plan.tasks:
        problems.append(PlanError(display, 0, None, "the plan has no tasks: nothing will ever run (write a task "
                                  "under a `## Phase 1: …` heading, or `memento plan draft BRIEF`)",
                                  severity="warning", scope="task"))
    problems += text_problems(plan, text, display, preset)
    problems += questions_unanswerable(plan, display)
    problems.sort(key=lambda e: e.line)
    return problems


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
    from .git.patterns import matches_any

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
               "accept", "reason", "changes", "question", "questions", "import_error")
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


def questions_unanswerable(plan, display: str) -> list[PlanError]:
    """A warning per task waiting ``[?]`` with no ``question:`` line (SPEC §18): a person sees no
    question to answer; `memento answer` still puts it back to [ ]."""
    return [PlanError(display, task.line, task.id, "waits for an answer ([?]) but has no `question:` line: "
                      "answer it with `memento answer " + task.id + " TEXT`, or reset it",
                      severity="warning", scope="task")
            for task in plan.tasks if task.status == "?" and not task.question]


def names_mementos_files(plan, display: str) -> list[PlanError]:
    """A warning per task whose context_files name one of Memento's own files (SPEC §13): the
    worker can never change them (read-only in the sandbox, refused by the guards)."""
    from .workspace import own_file

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


def archive_through_link(root: Path, plan, display: str) -> list[PlanError]:
    """An error when Meta ``status_archive_dir`` leads out of the project through a link (the
    text itself is checked by the plan's parser): the tick rotates into the default instead."""
    from .workspace import archive_dir_escape

    problem = archive_dir_escape(root, plan.meta.status_archive_dir)
    if not problem:
        return []
    return [PlanError(display, plan.meta.lines.get("status_archive_dir", 0), None,
                      f"Meta `status_archive_dir`: {problem}; the status log rotates into the default "
                      "logs/status_archive/", scope="task")]


# Words that start a shell command without being a program on PATH.
_SHELL_WORDS = frozenset({
    "!", "{", "}", "(", ")", "[", "[[", "]]", ".", ":", "alias", "break", "case", "cd", "command", "continue", "do",
    "done", "echo", "elif", "else", "esac", "eval", "exec", "exit", "export", "false", "fi", "for", "function", "if",
    "in", "local", "printf", "pwd", "read", "return", "set", "shift", "source", "test", "then", "time", "trap", "true",
    "type", "ulimit", "umask", "unset", "until", "wait", "while"})
_OPERATORS = frozenset({"&&", "||", ";", "|", "&", ";;", "(", ")", "|&"})


def verify_programs(verify: str) -> list[str]:
    """The programs a verify command line starts by name (``pytest`` of ``cd x && FOO=1 pytest -q``):
    the first word of each command, after variable assignments; builtins, keywords and paths left out."""
    import shlex

    lexer = shlex.shlex(verify, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        words = list(lexer)
    except ValueError:  # an unclosed quote: the backtick check says what is wrong
        return []
    found, starts = [], True
    for word in words:
        if word in _OPERATORS:
            starts = True
            continue
        if not starts:
            continue
        if "=" in word.split("/", 1)[0] and not word.startswith("="):
            continue  # FOO=1 before the program
        starts = False
        if word not in _SHELL_WORDS and "/" not in word and "$" not in word and "`" not in word:
            found.append(word)
    return found


def verify_programs_missing(plan, display: str, root, path: str | None = None) -> list[PlanError]:
    """A warning per open task whose verify starts a program that is not on PATH here (a typo such
    as `pytset`, or a tool not installed): every attempt would end with exit 127, each a retry.
    The nearest program that is there is offered."""
    import difflib
    import os
    import shutil

    search = os.environ.get("PATH", "") if path is None else path
    found: list[PlanError] = []
    known: list[str] | None = None
    for task in plan.tasks:
        if task.status in ("x", "-") or not task.verify:
            continue
        for program in dict.fromkeys(verify_programs(task.verify)):
            if shutil.which(program, path=search):
                continue
            if known is None:
                known = _programs_on(search)
            near = difflib.get_close_matches(program, known, n=1, cutoff=0.75)
            hint = f" (did you mean `{near[0]}`?)" if near else " (not installed here?)"
            found.append(PlanError(display, task.field_lines.get("verify", task.line), task.id,
                                   f"verify runs `{program}`, which is not on PATH{hint}: every attempt "
                                   "would end with exit 127", severity="warning", scope="task"))
    return found


def _programs_on(search: str) -> list[str]:
    import os

    names: set[str] = set()
    for folder in search.split(os.pathsep):
        try:
            names.update(e.name for e in os.scandir(folder or ".") if e.is_file() and os.access(e.path, os.X_OK))
        except OSError:
            continue
    return sorted(names)
