"""docs/MASTER_PLAN.md: a one-pass scanner and minimal, locked line edits (SPEC §3).

The parser reads the format of the original Agent Memento specification and
its tolerated variants, returning frozen dataclasses that carry line numbers.
Problems are values (:class:`PlanError`), never exceptions, so one bad task
cannot hide the others. Edits re-read the file under the plan lock, locate
their line by task id or Meta key, replace that one line (or insert one) and
atomically replace the file: every other byte stays as it was.

Speed (SPEC §11: 10,000 tasks in milliseconds): one regex finds every
structural line and swallows each task's indented block, so Python runs once
per task, not once per line; a task's fields, title and problems are decoded
from its block on first use.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from .durations import duration_or_none, parse_duration
from .errors import EditConflict, MementoError, PlanError
from .lines import LineDoc, decode, ensure_eol, eol_of, read_bytes, strip_eol
from .locks import locked_edit
from .markdown.blocks import FENCE_START, open_fence
from .workspace import archive_dir_problem

TASK_ID = r"[A-Z][A-Z0-9]*-\d+"  # SPEC §3; also the notes' targets and the status log's Task field
TASK_ID_RE = re.compile(TASK_ID)
STATUS_NAMES = {
    " ": "pending",
    "x": "done",
    "!": "blocked",
    "~": "in_progress",
    "-": "skipped",
    "?": "waiting",  # the worker asked a question; a person's answer returns it to [ ] (SPEC §18)
}
# Characters a person might type for "done"; read as done, written back untouched.
_STATUS_ALIASES = {"X": "x"}
FINISHED = frozenset("x-")

_TASK_RE = re.compile(
    r"^(?P<indent> {0,3})[-*+] \[(?P<status>.)\][ \t]+"
    rf"(?P<tick>`?)(?P<id>{TASK_ID})(?P=tick):?(?:[ \t]+(?P<rest>.*))?$"
)
_FIELD_RE = re.compile(r"^(?P<indent>[ \t]+)[-*+] (?P<key>[A-Za-z_][\w-]*):(?P<sp>[ \t]*)(?P<value>.*)$")
# The value ends at its last character that is not a space, tab or CR: said greedily (the lazy
# `[^\n]*?` before `[ \t\r]*$` tried the end of line at every character: half of reading
# 10,000 tasks' fields, SPEC §11). test_plan_properties holds it to the lazy form.
_FIELD_FIND = re.compile(r"^[ \t]+[-*+] ([A-Za-z_][\w-]*):[ \t]*((?:[^\n]*[^ \t\r\n])?)[ \t\r]*$", re.M)
_META_RE = re.compile(r"^[-*+] (?P<key>[A-Za-z_][\w-]*):(?P<sp>[ \t]*)(?P<value>.*?)(?P<comment>[ \t]*<!--.*-->)?[ \t]*$")
_MODULE_RE = re.compile(r"^\[MODULE:(?P<name>[^\]]*)\][ \t]*")
_INLINE_RETRIES_RE = re.compile(r"[ \t]*\[retries:[ \t]*(?P<n>[^\]]*)\][ \t]*$")
_PHASE_META_RE = re.compile(
    r"^(?:<!--[ \t]*)?(?:[-*+] )?(?P<key>parallel|depends)[ \t]*:[ \t]*(?P<value>.*?)[ \t]*(?:-->)?[ \t]*$",
    re.IGNORECASE,
)
_HEADING_DEPENDS_RE = re.compile(r"\(depends on (?P<deps>[^)]*)\)[ \t]*$", re.IGNORECASE)
# One regex for every structural line. A task match swallows its indented block
# (field lines, continuation lines, blank lines followed by more indentation).
_SCAN_RE = re.compile(
    r"^(?:"
    rf"(?P<fence>{FENCE_START}[^\n]*)"
    r"|(?P<hashes>#{1,2})[ \t]+(?P<htext>[^\n]*)"
    rf"|(?P<task> {{0,3}}[-*+] \[(?P<st>[^\n])\][ \t]+(?P<tick>`?)(?P<id>{TASK_ID})(?P=tick):?"
    r"(?P<rest>[^\n]*))(?P<block>(?:\n[ \t\r]*(?=\n)|\n[ \t]+[^\n]*)*)"
    r"|(?P<badbox> {0,3}[-*+] \[[^\n]\][^\n]*)"
    r"|(?P<bullet>[-*+] [A-Za-z_][\w-]*[ \t]*:[^\n]*)"
    r"|(?P<other>(?:<!--|[Pp]arallel|[Dd]epends)[^\n]*)"
    r")",
    re.M,
)

REPEATABLE_FIELDS = ("accept",)
# Field names as Memento and its docs write them (lower case; `accept` apart): a block of these
# alone is told usual by one set comparison (Task._parsed).
_USUAL_KEYS = frozenset(("verify", "context_files", "guard_files", "estimate", "retries", "timeout", "do", "depends",
                         "changes", "reason", "questions", "question", "import_error"))


@dataclass(frozen=True)
class Meta:
    """The ``## Meta`` list, typed, with the line of each key."""

    created: str = ""
    tick_mode: str = "auto"
    max_retries: int = 3
    max_questions: int = 3  # questions one task may ask; the next one blocks it (SPEC §18)
    max_tasks_per_tick: int = 1
    max_diff_lines: int = 200
    max_diff_bytes: int = 5 * 1024 * 1024  # added bytes, binary files included (SPEC §13)
    stale_lock_timeout: float = 15 * 60.0
    circuit_breaker_threshold: int = 5
    status_max_entries: int = 50
    status_archive_dir: str = "logs/status_archive/"
    total_ticks: int = 0
    total_tasks: int = 0
    completed_tasks: int = 0
    last_architect_edit: str = ""
    clean_strategy: str = ""
    clean_ignore: str = ""
    extra: dict[str, str] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    line: int = 0  # the ``## Meta`` heading; 0 when the plan has none


TICK_MODES = ("auto", "paused", "stopped")
_META_INTS = {
    "max_retries": 0,
    "max_questions": 0,
    "max_tasks_per_tick": 1,
    "max_diff_lines": 1,
    "max_diff_bytes": 1,
    "circuit_breaker_threshold": 1,
    "status_max_entries": 1,
    "total_ticks": 0,
    "total_tasks": 0,
    "completed_tasks": 0,
}
_META_TEXT = ("created", "status_archive_dir", "last_architect_edit", "clean_strategy", "clean_ignore")


class _cached:
    """functools.cached_property without its lock (Python 3.11 takes one on every first use, a
    third of the cost of reading 10,000 tasks' problems): a value made from a task's frozen
    fields, so two threads at worst both make it once."""

    def __init__(self, func):
        self.func, self.name, self.__doc__ = func, func.__name__, func.__doc__

    def __set_name__(self, owner, name) -> None:
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.func(obj)
        return value


@dataclass(frozen=True)
class Task:
    """One task line and its indented block. Typed views are decoded on first use."""

    id: str
    status: str  # one of " x ! ~ -" (an alias like "X" is normalised); else the task is invalid
    phase: str | None
    line: int
    raw_rest: str = field(default="", repr=False)  # the task line after the id
    block: str = field(default="", repr=False)  # the indented lines under it, starting with "\n"

    @_cached
    def _head(self) -> tuple[str | None, str, str | None]:
        rest = self.raw_rest.strip()
        if rest.startswith(":"):
            rest = rest[1:].lstrip()
        module = None
        if rest.startswith("[MODULE:"):
            m = _MODULE_RE.match(rest)
            if m:
                module = m.group("name").strip()
                rest = rest[m.end():]
        inline = None
        if rest.endswith("]"):
            m = _INLINE_RETRIES_RE.search(rest)
            if m:
                inline = m.group("n").strip()
                rest = rest[: m.start()]
        return module, rest.strip(), inline

    @property
    def module(self) -> str | None:
        return self._head[0]

    @property
    def title(self) -> str:
        return self._head[1]

    @property
    def inline_retries(self) -> bool:
        return self._head[2] is not None

    @_cached
    def _parsed(self) -> tuple[dict[str, str], tuple[str, ...], tuple[str, ...]]:
        pairs = _FIELD_FIND.findall(self.block)
        fields = dict(pairs)
        # The usual block, told at C speed: each key once and in lower case, no `accept:`, no inline
        # [retries: N]. `memento status` and the dashboard read every task's problems (a task's
        # error is an error everywhere): on a 10,000-task plan this is most of that cost.
        if len(fields) == len(pairs) and "accept" not in fields \
                and (fields.keys() <= _USUAL_KEYS or "".join(fields).islower()) and "[retries" not in self.raw_rest:
            return fields, (), ()
        fields = {}
        accept: list[str] = []
        problems: list[str] = []
        inline = self._head[2]
        if inline is not None:
            fields["retries"] = inline
        for key, value in _FIELD_FIND.findall(self.block):
            key = key.lower()
            if key in REPEATABLE_FIELDS:
                accept.append(value)
            elif key in fields:
                problems.append(f"field `{key}` is repeated")
            else:
                fields[key] = value
        return fields, tuple(accept), tuple(problems)

    @property
    def fields(self) -> dict[str, str]:
        """Raw field values by lower-case key (``accept`` excluded: see :attr:`accept`)."""
        return self._parsed[0]

    @property
    def accept(self) -> tuple[str, ...]:
        return self._parsed[1]

    @cached_property
    def field_lines(self) -> dict[str, int]:
        """Line of each field (first occurrence; inline ``retries`` → the task line)."""
        lines: dict[str, int] = {"retries": self.line} if self.inline_retries else {}
        for m in _FIELD_FIND.finditer(self.block):
            key = m.group(1).lower()
            if key not in lines:
                lines[key] = self.line + self.block.count("\n", 0, m.start() + 1)
        return lines

    @cached_property
    def end_line(self) -> int:
        """The last non-blank line of the task block."""
        return self.line + self.block.rstrip().count("\n")

    @_cached
    def problems(self) -> tuple[str, ...]:
        """Why the task can never be picked; empty when valid."""
        fields = self.fields
        problems = list(self._parsed[2])
        if self.status not in STATUS_NAMES:
            problems.append(f"unknown status `[{self.status}]` (use one of [ ] [x] [!] [~] [-] [?])")
        if self.phase is None:
            problems.append("task is not under a phase heading (`## Phase N: …`)")
        if not unquote(fields.get("verify", "")):
            problems.append("has no verify command" + _from_issue(self.id, "verify"))
        if "context_files" not in fields:
            problems.append("has no context_files" + _from_issue(self.id, "context_files"))
        if "import_error" in fields:  # an issue's ```memento block that could not be read (SPEC §19)
            problems.append(f"import_error: {fields['import_error']} (fix the issue and import again, or write "
                            "the task's fields here and delete this line)")
        for key in ("retries", "questions"):
            raw = fields.get(key)
            if raw is not None and not raw.isdigit():
                problems.append(f"{key} must be a whole number, got `{raw}`")
        for key in ("estimate", "timeout"):
            value = fields.get(key)
            if value:
                problem = _duration_problem(value)
                if problem:
                    problems.append(f"{key}: {problem}")
        if "changes" in fields and not self.check_only:
            problems.append(f"changes: `{fields['changes']}` is not understood: `- changes: none` says the task "
                            "only checks (its verify alone judges it; an attempt that changes nothing is "
                            "otherwise a failure); leave the field out for a task that changes files")
        return tuple(problems)

    @property
    def check_only(self) -> bool:
        """``- changes: none``: a task that changes no file, judged by its verify alone (SPEC §4
        step 11); any other task's attempt that changed nothing at all is a failure."""
        return "changes" in self.block and unquote(self.fields.get("changes", "")).strip().lower() == "none"

    @property
    def state(self) -> str:
        return STATUS_NAMES.get(self.status, "unknown")

    @property
    def valid(self) -> bool:
        """A task with problems (no verify, unknown status, …) is never picked."""
        return not self.problems

    @property
    def verify(self) -> str | None:
        return unquote(self.fields.get("verify", "")) or None

    @property
    def do(self) -> str | None:
        return unquote(self.fields.get("do", "")) or None

    @property
    def reason(self) -> str | None:
        return self.fields.get("reason") or None

    @cached_property
    def context_files(self) -> tuple[str, ...]:
        return split_path_list(self.fields.get("context_files", ""))

    @cached_property
    def guard_files(self) -> tuple[str, ...]:
        return split_path_list(self.fields.get("guard_files", ""))

    @property
    def retries(self) -> int:
        raw = self.fields.get("retries", "").strip()
        return int(raw) if raw.isdigit() else 0

    @property
    def questions(self) -> int:
        """How many questions the worker asked on this task (``- questions: N``, SPEC §18)."""
        raw = self.fields.get("questions", "").strip()
        return int(raw) if raw.isdigit() else 0

    @property
    def question(self) -> str | None:
        """The first line of the worker's open question (``- question: …``), kept until the task passes."""
        return self.fields.get("question") or None

    @_cached
    def depends(self) -> tuple[str, ...]:
        """The task ids of ``depends: T-101, T-102`` (``none`` or absent: no dependencies)."""
        if "depends" not in self.block:  # most tasks: no field decoding
            return ()
        items = split_path_list(self.fields.get("depends", ""))
        return tuple(dict.fromkeys(i for i in items if i.lower() != "none"))

    @property
    def estimate_seconds(self) -> float | None:
        return duration_or_none(self.fields.get("estimate"))

    @property
    def timeout_seconds(self) -> float | None:
        return duration_or_none(self.fields.get("timeout"))

    @property
    def label(self) -> str:
        """``T-101 [MODULE:db] Title`` as written in status entries."""
        module = f" [MODULE:{self.module}]" if self.module is not None else ""
        return f"{self.id}{module} {self.title}".rstrip()


def _from_issue(task_id: str, key: str) -> str:
    """For a task imported from a GitHub issue (``GH-12``): which issue lacks the field, and how to give it."""
    if not task_id.startswith("GH-"):
        return ""
    return (f" (GitHub issue #{task_id[3:]} has no ```memento block line `{key}: …`: add it to the issue and "
            "`memento plan import` again, or write the field here)")


def _fast_task(**values) -> Task:
    # Frozen-dataclass __init__ costs one object.__setattr__ per field; a 10,000-task
    # plan must parse in milliseconds (SPEC §11), so fill __dict__ in one call.
    task = object.__new__(Task)
    task.__dict__.update(values)
    return task


@dataclass(frozen=True)
class Phase:
    id: str
    title: str
    line: int
    parallel: bool = False
    depends: tuple[str, ...] = ()
    task_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Plan:
    path: str
    title: str
    meta: Meta
    phases: tuple[Phase, ...]
    tasks: tuple[Task, ...]
    structure_errors: tuple[PlanError, ...] = ()  # everything but per-task problems
    line_count: int = 0

    def task(self, task_id: str) -> Task | None:
        return self.by_id.get(task_id)

    @cached_property
    def by_id(self) -> dict[str, Task]:
        ids: dict[str, Task] = {}
        for task in self.tasks:
            ids.setdefault(task.id, task)
        return ids

    def phase(self, phase_id: str) -> Phase | None:
        for phase in self.phases:
            if phase.id == phase_id:
                return phase
        return None

    @cached_property
    def errors(self) -> tuple[PlanError, ...]:
        """Every error and warning, plan-level and per task, in line order."""
        found = list(self.structure_errors)
        for task in self.tasks:
            for problem in task.problems:
                # A field's own problem ("estimate: …", "changes: …") at the field's line.
                line = task.field_lines.get(problem.split(":", 1)[0], task.line) if ": " in problem else task.line
                found.append(PlanError(self.path, line, task.id, problem, scope="task"))
        found += self.dependency_errors
        found.sort(key=lambda e: e.line)
        return tuple(found)

    @cached_property
    def dependency_errors(self) -> tuple[PlanError, ...]:
        """Task ``depends:`` naming unknown ids, or in a cycle (through phases too), at the field's line."""
        from .task_deps import dependency_errors

        return dependency_errors(self)

    @cached_property
    def unsatisfiable(self) -> frozenset[str]:
        """Tasks whose ``depends:`` can never be met (unknown ids, cycles): never picked."""
        return frozenset(e.task_id for e in self.dependency_errors if e.task_id)

    @property
    def plan_errors(self) -> tuple[PlanError, ...]:
        """Errors that stop the whole pipeline (SPEC §4 step 2); no task is decoded for them."""
        return tuple(e for e in self.structure_errors if e.scope == "plan" and e.severity == "error")

    @property
    def warnings(self) -> tuple[PlanError, ...]:
        return tuple(e for e in self.errors if e.severity == "warning")


_DURATION_CHECK: dict[str, str] = {}


def _duration_problem(text: str) -> str:
    """'' when ``text`` is a valid duration, else the message (memoised: plans repeat values)."""
    problem = _DURATION_CHECK.get(text)
    if problem is None:
        try:
            parse_duration(text)
            problem = ""
        except ValueError as exc:
            problem = str(exc)
        if len(_DURATION_CHECK) > 4096:  # pragma: no mutate (a memo's bound: any gives the same answers)
            _DURATION_CHECK.clear()
        _DURATION_CHECK[text] = problem
    return problem


def unquote(value: str) -> str:
    """Strip one layer of matching backticks (`` `cmd` `` or ``` ``cmd`` ```) and whitespace."""
    value = value.strip()
    if value[:1] != "`" or value[-1:] != "`" or len(value) < 2:
        return value
    if len(value) >= 4 and value[:2] == "``" and value[-2:] == "``":
        return value[2:-2].strip()
    return value[1:-1].strip()


def split_path_list(value: str) -> tuple[str, ...]:
    """``[a, b]``, ``a, b`` or ``[]`` → paths, each unquoted."""
    value = value.strip()
    if value.startswith("[") and value.endswith("]"):
        value = value[1:-1]
    items = (unquote(part).strip("'\"") for part in value.split(","))
    return tuple(item for item in items if item)


def _strip_comment(value: str) -> str:
    idx = value.find("<!--")
    return value[:idx].rstrip() if idx >= 0 else value.strip()


# --------------------------------------------------------------------------- parsing


def parse_plan(path: Path | str, display: str | None = None) -> Plan:
    """Parse a plan file. Unreadable input raises MementoError (file, line); all else is a value.

    ``display`` is the path used in messages (e.g. ``docs/MASTER_PLAN.md``).
    """
    shown = display or str(path)
    return scan_plan(decode_text(read_bytes(Path(path), shown, "plan"), shown), shown)


def decode_text(data: bytes, path: str | Path) -> str:
    """UTF-8 text without BOM; bad bytes raise MementoError with the line (see lines.decode)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        decode(data, path)  # raises with the line number
        raise
    if "\x00" in text:
        decode(data, path)
    return text[1:] if text.startswith("\ufeff") else text


def parse_plan_text(text: str, path: str = "docs/MASTER_PLAN.md") -> Plan:
    return scan_plan(text[1:] if text.startswith("\ufeff") else text, path)


def parse_plan_doc(doc: LineDoc, path: str) -> Plan:
    return scan_plan("".join(doc.lines), path)


def scan_plan(text: str, path: str) -> Plan:
    """The scanner: one regex pass, line numbers counted between matches.

    Task lines, by far the most, are handled in this loop; the rare lines
    (headings, fences, Meta and phase lines) by the methods of :class:`_Reader`.
    """
    reader = _Reader(path)
    tasks, errors, seen = reader.tasks, reader.errors, reader.seen
    pos = 0
    lineno = 1
    counted_to = 0
    search = _SCAN_RE.search
    count = text.count
    end = len(text)
    new_task = _fast_task
    aliases = _STATUS_ALIASES
    while pos < end:
        m = search(text, pos)
        if m is None:
            break
        start = m.start()
        lineno += count("\n", counted_to, start)
        counted_to = start
        pos = m.end() + 1
        task_id, status, rest, block = m.group("id", "st", "rest", "block")  # one call: once per task
        if task_id is not None:
            phase = reader.phase
            task = new_task(id=task_id, status=aliases.get(status, status),
                            phase=phase["id"] if phase is not None else None, line=lineno,
                            raw_rest=rest, block=block)
            tasks.append(task)
            first = seen.setdefault(task_id, lineno)
            if first != lineno:
                errors.append(PlanError(path, lineno, task_id, f"duplicate task id (first defined on line {first})"))
            if phase is not None:
                phase["tasks"].append(task_id)
            reader.phase_meta_allowed = False
            continue
        kind = m.lastgroup
        if kind == "htext":
            reader.heading(len(m.group("hashes")), m.group("htext").strip(), lineno)
        elif kind == "fence":
            after = reader.skip_fence(text, m, lineno)
            if after is None:
                break
            pos = after
        else:
            reader.other_line(kind, m.group(kind).rstrip("\r"), lineno)
    return reader.finish(count("\n") + (0 if text.endswith("\n") or not text else 1))


class _Reader:
    """What one pass over a plan has found so far, and what the rare lines do to it."""

    def __init__(self, path: str):
        self.path = path
        self.errors: list[PlanError] = []
        self.title = ""
        self.meta_values: dict[str, tuple[str, int]] = {}
        self.meta_line = 0
        self.phases: list[dict] = []
        self.tasks: list[Task] = []
        self.seen: dict[str, int] = {}  # task id -> the line it is first defined on
        self.section: str | None = None  # None | "meta" | "phase"
        self.phase: dict | None = None
        self.phase_meta_allowed = False  # phase lines (parallel, depends) come before its tasks

    def heading(self, level: int, heading: str, lineno: int) -> None:
        """A level-1 heading (the title) or a level-2 one (Meta or a phase)."""
        if level == 1:
            if not self.title:
                is_named = heading.upper().startswith("MASTER_PLAN:")
                self.title = heading[len("MASTER_PLAN:"):].strip() if is_named else heading
            return
        if heading.lower() == "meta":
            self.section, self.meta_line, self.phase = "meta", lineno, None
            return
        self.section, self.phase_meta_allowed = "phase", True
        deps = None
        dm = _HEADING_DEPENDS_RE.search(heading)
        if dm:
            deps = (dm.group("deps"), lineno)
            heading = heading[: dm.start()].rstrip()
        phase_id = heading.split(":", 1)[0].strip() if ":" in heading else heading
        self.phase = {"id": phase_id, "title": heading, "line": lineno, "parallel": None, "depends": deps, "tasks": []}
        self.phases.append(self.phase)

    def skip_fence(self, text: str, m: re.Match[str], lineno: int) -> int | None:
        """Where scanning goes on after a fence opened by match ``m``: the line after the
        closing one; the same line when it opens no fence; None when it is never closed."""
        fence = open_fence(m.group("fence").rstrip("\r"))
        if fence is None:
            return m.end() + 1  # e.g. ```a`b: a line of text
        close = fence.find_close(text, m.end())
        if close is None:
            self.errors.append(PlanError(self.path, lineno, None, f"code fence {fence.marker} is never closed",
                                         severity="warning", scope="task"))
            return None
        return close.end() + 1

    def other_line(self, kind: str, line: str, lineno: int) -> None:
        """A checkbox without a task id, a Meta line, or a phase's ``parallel``/``depends``."""
        if kind == "badbox":
            self.errors.append(PlanError(self.path, lineno, None,
                                         "checkbox line without a task id like `T-101`; it is not a task",
                                         severity="warning", scope="task"))
            return
        if kind == "bullet" and self.section == "meta":
            mm = _META_RE.match(line)
            if mm:
                key = mm.group("key")
                if key in self.meta_values:
                    first = self.meta_values[key][1]
                    self.errors.append(PlanError(self.path, lineno, None, f"Meta key `{key}` is repeated (first on line {first})"))
                else:
                    self.meta_values[key] = (mm.group("value").strip(), lineno)
            return
        if self.phase is not None and self.phase_meta_allowed:
            pm = _PHASE_META_RE.match(line.strip())
            if pm:
                self.phase[pm.group("key").lower()] = (pm.group("value").strip(), lineno)

    def finish(self, line_count: int) -> Plan:
        """The plan: Meta typed, phases checked, plan-level problems added, errors in line order."""
        errors, path = self.errors, self.path
        meta = _build_meta(self.meta_values, self.meta_line, errors, path)
        phase_objs = _finish_phases(self.phases, errors, path)
        if not self.title and not self.phases and not self.tasks:
            errors.append(PlanError(path, 1, None, "the plan is empty: no `# MASTER_PLAN:` title, no phases, no tasks"))
        elif not self.meta_line and (self.phases or self.tasks):
            errors.append(PlanError(path, 1, None, "no `## Meta` section; defaults apply", severity="warning", scope="task"))
        errors.sort(key=lambda e: e.line)
        return Plan(path, self.title, meta, phase_objs, tuple(self.tasks), tuple(errors), line_count)


def _build_meta(values: dict[str, tuple[str, int]], meta_line: int, errors: list[PlanError], path: str) -> Meta:
    kwargs: dict = {}
    extra: dict[str, str] = {}
    lines = {key: ln for key, (_, ln) in values.items()}
    for key, (raw, ln) in values.items():
        value = _strip_comment(raw)
        if key in _META_INTS:
            try:
                number = int(value)
            except ValueError:
                errors.append(PlanError(path, ln, None, f"Meta `{key}` must be a whole number, got `{value}`"))
                continue
            if number < _META_INTS[key]:
                errors.append(PlanError(path, ln, None, f"Meta `{key}` must be at least {_META_INTS[key]}, got {number}"))
                continue
            kwargs[key] = number
        elif key == "tick_mode":
            if value not in TICK_MODES:
                errors.append(PlanError(path, ln, None, f"Meta `tick_mode` must be auto, paused or stopped, got `{value}`"))
                continue
            kwargs[key] = value
        elif key == "stale_lock_timeout":
            try:
                kwargs[key] = parse_duration(value)
            except ValueError as exc:
                errors.append(PlanError(path, ln, None, f"Meta `stale_lock_timeout`: {exc}"))
        elif key == "status_archive_dir" and archive_dir_problem(value):
            # Never a folder outside the project (SPEC §13): the default archive is used instead;
            # an error for lint and the architect, not one that stops the pipeline.
            errors.append(PlanError(path, ln, None, f"Meta `status_archive_dir`: {archive_dir_problem(value)}; "
                                    "the status log rotates into the default logs/status_archive/",
                                    scope="task"))
        elif key in _META_TEXT:
            kwargs[key] = value
        else:
            extra[key] = value
    return Meta(**kwargs, extra=extra, lines=lines, line=meta_line)


def _finish_phases(raw: list[dict], errors: list[PlanError], path: str) -> tuple[Phase, ...]:
    ids: dict[str, int] = {}
    for p in raw:
        if p["id"] in ids:
            errors.append(PlanError(path, p["line"], None, f"phase `{p['id']}` is defined twice (first on line {ids[p['id']]})"))
        ids.setdefault(p["id"], p["line"])
    lookup = {pid.lower(): pid for pid in ids}
    phases = []
    for p in raw:
        parallel = False
        if p["parallel"] is not None:
            text, ln = p["parallel"]
            low = text.lower()
            if low in ("true", "yes", "1"):
                parallel = True
            elif low not in ("false", "no", "0"):
                errors.append(PlanError(path, ln, None, f"`parallel` of {p['id']} must be true or false, got `{text}`"))
        depends: list[str] = []
        if p["depends"] is not None:
            text, ln = p["depends"]
            for dep in (d.strip() for d in text.split(",")):
                if not dep or dep.lower() == "none":
                    continue
                real = lookup.get(dep.lower())
                if real is None:
                    errors.append(PlanError(path, ln, None, f"{p['id']} depends on unknown phase `{dep}`"))
                elif real == p["id"]:
                    errors.append(PlanError(path, ln, None, f"{p['id']} depends on itself"))
                else:
                    depends.append(real)
        phases.append(Phase(p["id"], p["title"], p["line"], parallel, tuple(depends), tuple(p["tasks"])))
    _check_cycles(phases, errors, path)
    return tuple(phases)


def _check_cycles(phases: list[Phase], errors: list[PlanError], path: str) -> None:
    graph = {p.id: p.depends for p in phases}
    line_of = {p.id: p.line for p in phases}
    state: dict[str, int] = {}  # 1 visiting, 2 done
    reported: set[frozenset] = set()

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        stack.append(node)
        for dep in graph.get(node, ()):
            if state.get(dep) == 1:
                cycle = stack[stack.index(dep):] + [dep]
                key = frozenset(cycle)
                if key not in reported:
                    reported.add(key)
                    errors.append(PlanError(path, line_of[dep], None, "dependency cycle: " + " → ".join(cycle)))
            elif state.get(dep) is None:
                visit(dep, stack)
        stack.pop()
        state[node] = 2

    for p in phases:
        if state.get(p.id) is None:
            visit(p.id, [])


# --------------------------------------------------------------------------- editing


class PlanEditor:
    """Minimal line edits on one in-memory copy of the plan, applied by :func:`edit_plan`.

    Each method locates its line from a fresh parse of the current lines, so
    edits compose and a person's concurrent edit to any other line survives.
    """

    def __init__(self, doc: LineDoc, path: str):
        self.doc = doc
        self.path = path
        self._plan: Plan | None = None

    @property
    def plan(self) -> Plan:
        if self._plan is None:
            self._plan = parse_plan_doc(self.doc, self.path)
        return self._plan

    def _task(self, task_id: str) -> Task:
        task = self.plan.task(task_id)
        if task is None:
            raise EditConflict(f"task {task_id} is not in the plan (was it renamed or removed?)", path=self.path)
        return task

    def _replace(self, lineno: int, new_text: str) -> None:
        old = self.doc.lines[lineno - 1]
        self.doc.lines[lineno - 1] = new_text + eol_of(old)
        self._plan = None

    def _insert(self, after_lineno: int, new_text: str) -> None:
        lines = self.doc.lines
        nl = self.doc.newline
        ensure_eol(lines, after_lineno - 1, nl)
        lines.insert(after_lineno, new_text + nl)
        self._plan = None

    def set_status(self, task_id: str, status: str, *, expect: Iterable[str] | None = None) -> bool:
        """Set a task's status character. ``expect``: the statuses it may have now, else refuse."""
        if status not in STATUS_NAMES:
            raise ValueError(f"unknown status {status!r}")
        task = self._task(task_id)
        if expect is not None and task.status not in set(expect):
            raise EditConflict(
                f"{task_id} is now [{task.status}] ({task.state}); expected "
                + " or ".join(f"[{s}]" for s in expect),
                path=self.path, line=task.line,
            )
        if task.status == status:
            return False
        text = strip_eol(self.doc.lines[task.line - 1])
        m = _TASK_RE.match(text)
        assert m is not None
        pos = m.start("status")
        self._replace(task.line, text[:pos] + status + text[pos + 1:])
        return True

    def set_field(self, task_id: str, key: str, value: str) -> bool:
        """Replace a field's value in place, or add the field after the task's last field line;
        whether the plan changed."""
        task = self._task(task_id)
        if key == "retries" and task.inline_retries:
            text = strip_eol(self.doc.lines[task.line - 1])
            m = _INLINE_RETRIES_RE.search(text)
            if m:
                new = text[: m.start("n")] + value + text[m.end("n"):]
                if new == text:
                    return False
                self._replace(task.line, new)
                return True
        if key in task.field_lines and key not in REPEATABLE_FIELDS:
            ln = task.field_lines[key]
            text = strip_eol(self.doc.lines[ln - 1])
            m = _FIELD_RE.match(text)
            assert m is not None
            new = text[: m.start("sp")] + (m.group("sp") or " ") + value
            if new == text:
                return False
            self._replace(ln, new)
            return True
        indent = "  "
        if task.field_lines:
            first = strip_eol(self.doc.lines[min(task.field_lines.values()) - 1])
            fm = _FIELD_RE.match(first)
            if fm:
                indent = fm.group("indent")
        self._insert(self._last_field_line(task), f"{indent}- {key}: {value}")
        return True

    def remove_field(self, task_id: str, key: str) -> bool:
        """Delete a task's ``key:`` field line (e.g. a skip's ``reason:`` when the task is reset)."""
        task = self._task(task_id)
        if key not in task.field_lines:
            return False
        del self.doc.lines[task.field_lines[key] - 1]
        self._plan = None
        return True

    def set_title(self, task_id: str, title: str) -> bool:
        """Replace a task's title, keeping its status, id, ``[MODULE:…]`` and inline retries."""
        task = self._task(task_id)
        text = strip_eol(self.doc.lines[task.line - 1])
        m = _TASK_RE.match(text)
        assert m is not None
        module, old, inline = task._head
        if old == title:
            return False
        head = text[: m.start("rest")] if m.group("rest") is not None else text + " "
        rest = (f"[MODULE:{module}] " if module is not None else "") + title
        rest += f" [retries: {inline}]" if inline is not None else ""
        self._replace(task.line, head.rstrip() + " " + rest)
        return True

    def set_repeated(self, task_id: str, key: str, values: Iterable[str]) -> bool:
        """Make a repeatable field (``accept``) exactly ``values``: the old lines go, the new
        ones come where the first was (else after the task's last field line)."""
        task = self._task(task_id)
        values = list(values)
        if list(getattr(task, key, ())) == values:
            return False
        at = None
        for ln in range(task.end_line, task.line, -1):
            m = _FIELD_RE.match(strip_eol(self.doc.lines[ln - 1]))
            if m and m.group("key").lower() == key:
                at = ln
                del self.doc.lines[ln - 1]
        self._plan = None
        if at is None:
            at = self._last_field_line(self._task(task_id)) + 1
        indent = self._indent(self._task(task_id))
        nl = self.doc.newline
        ensure_eol(self.doc.lines, at - 2, nl)
        self.doc.lines[at - 1 : at - 1] = [f"{indent}- {key}: {v}{nl}" for v in values]
        self._plan = None
        return True

    def insert_lines(self, after_lineno: int, texts: Iterable[str]) -> None:
        """Insert whole lines (without line endings) after line ``after_lineno`` (0: at the top)."""
        nl = self.doc.newline
        ensure_eol(self.doc.lines, after_lineno - 1, nl)
        self.doc.lines[after_lineno:after_lineno] = [t + nl for t in texts]
        self._plan = None

    def _indent(self, task: Task) -> str:
        if task.field_lines:
            fm = _FIELD_RE.match(strip_eol(self.doc.lines[min(task.field_lines.values()) - 1]))
            if fm:
                return fm.group("indent")
        return "  "

    def _last_field_line(self, task: Task) -> int:
        """The line after which a new field goes: the last non-blank line of the task block."""
        ln = task.end_line
        while ln > task.line and not strip_eol(self.doc.lines[ln - 1]).strip():
            ln -= 1
        return ln

    def replace_all(self, data: bytes) -> None:
        """Make the whole plan ``data`` (another version of it, e.g. the one at a snapshot)."""
        self.doc = decode(data, self.path)
        self._plan = None

    def replace_task_block(self, task_id: str, snapshot: bytes) -> bool:
        """Put a task's definition back as it is in ``snapshot`` (another version of the
        plan), keeping its current status character; every other line stays."""
        task = self._task(task_id)
        old_doc = decode(snapshot, self.path)
        old = parse_plan_doc(old_doc, self.path).task(task_id)
        if old is None:
            return False
        block = old_doc.lines[old.line - 1 : old.end_line]
        m = _TASK_RE.match(strip_eol(block[0]))
        if m:
            head = strip_eol(block[0])
            block[0] = head[: m.start("status")] + task.status + head[m.start("status") + 1 :] + eol_of(block[0])
        if not block[-1].endswith(("\n", "\r")) and task.end_line < len(self.doc.lines):
            block[-1] += self.doc.newline
        self.doc.lines[task.line - 1 : task.end_line] = block
        self._plan = None
        return True

    def set_meta(self, key: str, value: str) -> bool:
        """Set a Meta value, keeping any trailing comment; add the key (and Meta) if missing."""
        meta = self.plan.meta
        if key in meta.lines:
            ln = meta.lines[key]
            text = strip_eol(self.doc.lines[ln - 1])
            m = _META_RE.match(text)
            assert m is not None
            comment = m.group("comment") or ""
            sp = m.group("sp") or " "
            new = f"{text[: m.start('sp')]}{sp}{value}{comment}"
            if new == text:
                return False
            self._replace(ln, new)
            return True
        if meta.line:
            last = meta.line
            for ln in meta.lines.values():
                last = max(last, ln)
            self._insert(last, f"- {key}: {value}")
            return True
        # No Meta section: add one after the title (or at the top).
        at = 0
        for i, raw in enumerate(self.doc.lines, 1):
            if raw.startswith("# "):
                at = i
                break
        nl = self.doc.newline
        block = [f"## Meta{nl}", f"- {key}: {value}{nl}", nl]
        if at:
            block.insert(0, nl)
            ensure_eol(self.doc.lines, at - 1, nl)
        self.doc.lines[at:at] = block
        self._plan = None
        return True

    def update_counters(self, *, add_tick: bool = False) -> None:
        """Recompute total_tasks and completed_tasks; optionally increment total_ticks."""
        plan = self.plan
        total = sum(1 for t in plan.tasks if t.status != "-")
        done = sum(1 for t in plan.tasks if t.status == "x")
        if add_tick:
            self.set_meta("total_ticks", str(plan.meta.total_ticks + 1))
        if self.plan.meta.total_tasks != total or "total_tasks" not in self.plan.meta.lines:
            self.set_meta("total_tasks", str(total))
        if self.plan.meta.completed_tasks != done or "completed_tasks" not in self.plan.meta.lines:
            self.set_meta("completed_tasks", str(done))


def plan_display(path: Path) -> str:
    """How messages name the plan: ``docs/MASTER_PLAN.md``, as a person finds it in the project
    (the absolute path only for a plan somewhere else)."""
    return "docs/MASTER_PLAN.md" if path.name == "MASTER_PLAN.md" and path.parent.name == "docs" else str(path)


def edit_plan(path: Path | str, fn: Callable[[PlanEditor], object]) -> Plan:
    """Locked read-modify-write of the plan: ``fn`` applies edits; returns the plan as written."""
    path = Path(path)
    result: dict[str, Plan] = {}

    def transform(data: bytes) -> bytes | None:
        if not data:
            raise MementoError("plan not found or empty", path=path)
        editor = PlanEditor(decode(data, path), plan_display(path))
        fn(editor)
        result["plan"] = editor.plan
        return editor.doc.encode()

    locked_edit(path, transform)
    return result["plan"]


def set_status(path: Path | str, task_id: str, status: str, *, expect: Iterable[str] | None = None) -> Plan:
    return edit_plan(path, lambda e: e.set_status(task_id, status, expect=expect))


def set_retries(path: Path | str, task_id: str, retries: int) -> Plan:
    return edit_plan(path, lambda e: e.set_field(task_id, "retries", str(retries)))


def set_meta(path: Path | str, key: str, value: str) -> Plan:
    return edit_plan(path, lambda e: e.set_meta(key, value))


def reset_task(path: Path | str, task_id: str) -> Plan:
    """``[!]`` (or any state but done) back to ``[ ]`` with retries 0: the person's "try again"."""
    from .receipts import root_of_doc, vouch

    def apply(e: PlanEditor) -> None:
        # Not [~]: a running worker owns the task; a dead one is reset by the next tick.
        skipped = e.plan.task(task_id) is not None and e.plan.task(task_id).status == "-"
        e.set_status(task_id, " ", expect="! -")
        e.set_field(task_id, "retries", "0")
        if skipped:  # the skip's reason no longer holds
            e.remove_field(task_id, "reason")
        e.update_counters()
        # A running tick's receipt (SPEC §13): under the plan's lock, before the file is written.
        vouch(root_of_doc(path), {"op": "reset", "task": task_id})

    return edit_plan(path, apply)


def skip_task(path: Path | str, task_id: str, reason: str) -> Plan:
    """Mark a task ``[-]`` with a ``reason:`` field (the architect's "not needed")."""
    reason = " ".join(reason.split())
    if not reason:
        raise MementoError("a skip needs a reason (--reason TEXT)")
    from .receipts import root_of_doc, vouch

    def apply(e: PlanEditor) -> None:
        e.set_status(task_id, "-", expect=" !-?")  # a task waiting for an answer may be dropped too
        e.set_field(task_id, "reason", reason)
        e.update_counters()
        vouch(root_of_doc(path), {"op": "skip", "task": task_id, "reason": reason})  # as reset_task's

    return edit_plan(path, apply)
