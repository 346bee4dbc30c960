"""docs/MASTER_PLAN.md read: the one-pass scanner to frozen values (SPEC §3).

The parser reads the format of the original Agent Memento specification and
its tolerated variants, returning the values of model.py with their line
numbers. Problems are values (:class:`PlanError`), never exceptions, so one
bad task cannot hide the others.

Speed (SPEC §11: 10,000 tasks in milliseconds): one regex finds every
structural line and swallows each task's indented block, so Python runs once
per task, not once per line; a task's fields, title and problems are decoded
from its block on first use (model.py).
"""

from __future__ import annotations

import atexit
import re
from functools import lru_cache
from pathlib import Path

from ..durations import parse_duration
from ..errors import PlanError
from ..lines import LineDoc, decode, read_bytes
from ..markdown.blocks import FENCE_START, open_fence
from ..workspace import archive_dir_problem
from .model import TASK_ID, Meta, Phase, Plan, Task

# Characters a person might type for "done"; read as done, written back untouched.
_STATUS_ALIASES = {"X": "x"}

META_RE = re.compile(r"^[-*+] (?P<key>[A-Za-z_][\w-]*):(?P<sp>[ \t]*)(?P<value>.*?)(?P<comment>[ \t]*<!--.*-->)?[ \t]*$")
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


def _fast_task(**values) -> Task:
    # Frozen-dataclass __init__ costs one object.__setattr__ per field; a 10,000-task
    # plan must parse in milliseconds (SPEC §11), so fill __dict__ in one call.
    task = object.__new__(Task)
    task.__dict__.update(values)
    return task


def _strip_comment(value: str) -> str:
    idx = value.find("<!--")
    return value[:idx].rstrip() if idx >= 0 else value.strip()



def parse_plan(path: Path | str, display: str | None = None) -> Plan:
    """Parse a plan file. Unreadable input raises MementoError (file, line); all else is a value.

    ``display`` is the path used in messages (e.g. ``docs/MASTER_PLAN.md``).
    """
    shown = display or str(path)
    return _parsed(decode_text(read_bytes(Path(path), shown, "plan"), shown), shown)


def decode_text(data: bytes, path: str | Path) -> str:
    """UTF-8 text without BOM; bad bytes raise MementoError with the line (see lines.decode)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        decode(data, path)  # raises with the line number
        raise  # pragma: no mutate (never reached: decode fails on the same bytes first)
    if "\x00" in text:
        decode(data, path)
    return text[1:] if text.startswith("\ufeff") else text


def parse_plan_text(text: str, path: str = "docs/MASTER_PLAN.md") -> Plan:
    return _parsed(text[1:] if text.startswith("\ufeff") else text, path)


def parse_plan_doc(doc: LineDoc, path: str) -> Plan:
    return _parsed("".join(doc.lines), path)


@lru_cache(maxsize=2)
def _parsed(text: str, path: str) -> Plan:
    """:func:`scan_plan` of ``text``, the last two kept. A Plan is immutable, and the file is read
    at every call all the same: a tick asks for its plan at every step and the editor parses it
    before every edit, eleven parses of five versions of the file a tick, each of them all of
    its tasks. Emptied at exit: Python's finalization would walk the plans still held, 20 ms of
    CPU for one of 10,000 tasks (`memento status --json`)."""
    return scan_plan(text, path)


atexit.register(_parsed.cache_clear)


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
            continue  # pragma: no mutate (without it a task's match reaches other_line as "block": nothing)
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
    return reader.finish()


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
            mm = META_RE.match(line)
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

    def finish(self) -> Plan:
        """The plan: Meta typed, phases checked, plan-level problems added, errors in line order."""
        errors, path = self.errors, self.path
        meta = _build_meta(self.meta_values, self.meta_line, errors, path)
        phase_objs = _finish_phases(self.phases, errors, path)
        if not self.title and not self.phases and not self.tasks:
            errors.append(PlanError(path, 1, None, "the plan is empty: no `# MASTER_PLAN:` title, no phases, no tasks"))
        elif not self.meta_line and (self.phases or self.tasks):
            errors.append(PlanError(path, 1, None, "no `## Meta` section; defaults apply", severity="warning", scope="task"))
        errors.sort(key=lambda e: e.line)
        return Plan(path, self.title, meta, phase_objs, tuple(self.tasks), tuple(errors))


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


