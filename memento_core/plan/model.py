"""docs/MASTER_PLAN.md as frozen values: a plan, its Meta, phases and tasks (SPEC §3).

What the scanner (scan.py) returns and the editor (edits.py) locates lines by:
:class:`Plan`, :class:`Meta`, :class:`Phase` and :class:`Task`, each with its line.
A task keeps its line and indented block as written; its fields, title and
problems are decoded from them on first use (SPEC §11: a 10,000-task plan is
read in milliseconds, and most callers look at a few tasks). A task's problems
are values: why it can never be picked, never an exception.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

from ..durations import duration_or_none, parse_duration
from ..errors import PlanError

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
FINISHED = frozenset("x-")

# The value ends at its last character that is not a space, tab or CR: said greedily (the lazy
# `[^\n]*?` before `[ \t\r]*$` tried the end of line at every character: half of reading
# 10,000 tasks' fields, SPEC §11). tests/core/plan/test_model.py holds it to the lazy form.
_FIELD_FIND = re.compile(r"^[ \t]+[-*+] ([A-Za-z_][\w-]*):[ \t]*((?:[^\n]*[^ \t\r\n])?)[ \t\r]*$", re.M)
_MODULE_RE = re.compile(r"^\[MODULE:(?P<name>[^\]]*)\][ \t]*")
INLINE_RETRIES_RE = re.compile(r"[ \t]*\[retries:[ \t]*(?P<n>[^\]]*)\][ \t]*$")

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
            m = INLINE_RETRIES_RE.search(rest)
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
                lines[key] = self.line + self.block.count("\n", 0, m.start())  # a match starts a line
        return lines

    @cached_property
    def end_line(self) -> int:
        """The last non-blank line of the task block."""
        return self.line + self.block.rstrip().count("\n")

    @_cached
    def problems(self) -> tuple[str, ...]:
        """Why the task can never be picked; empty when valid."""
        fields, _, repeated = self._parsed
        get = fields.get
        # A valid task, told by the checks below without building a message: `memento status` and
        # the dashboard read every task's problems (SPEC §11), and almost every task has none.
        if not repeated and self.status in STATUS_NAMES and self.phase is not None and "context_files" in fields \
                and "import_error" not in fields and "changes" not in fields and unquote(get("verify", "")) \
                and ((raw := get("retries")) is None or raw.isdigit()) \
                and ((raw := get("questions")) is None or raw.isdigit()) \
                and (not (value := get("estimate")) or not _duration_problem(value)) \
                and (not (value := get("timeout")) or not _duration_problem(value)):
            return ()
        return self._problems(fields)

    def _problems(self, fields: dict[str, str]) -> tuple[str, ...]:
        """Each problem of the task, said in full, in the order `memento lint` lists them."""
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



@dataclass(frozen=True)
class Phase:
    """A phase of the plan: its heading's line, whether its tasks may run in parallel, what it depends on."""

    id: str
    title: str
    line: int
    parallel: bool
    depends: tuple[str, ...]
    task_ids: tuple[str, ...]


@dataclass(frozen=True)
class Plan:
    """The plan as read: its metadata, phases and tasks, and what is wrong with its structure."""

    path: str
    title: str
    meta: Meta
    phases: tuple[Phase, ...]
    tasks: tuple[Task, ...]
    structure_errors: tuple[PlanError, ...]  # everything but per-task problems

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
        from ..task_deps import dependency_errors

        return dependency_errors(self)

    @cached_property
    def unsatisfiable(self) -> frozenset[str]:
        """Tasks whose ``depends:`` can never be met (unknown ids, cycles): never picked."""
        return frozenset(e.task_id for e in self.dependency_errors if e.task_id)

    @property
    def plan_errors(self) -> tuple[PlanError, ...]:
        """Errors that stop the whole pipeline (SPEC §4 step 2); no task is decoded for them."""
        return tuple(e for e in self.structure_errors if e.scope == "plan" and e.severity == "error")


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


