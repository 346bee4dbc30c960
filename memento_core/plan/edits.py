"""docs/MASTER_PLAN.md written: minimal line edits under the plan's lock (SPEC §3).

Edits re-read the file under the plan lock, locate their line by task id or
Meta key in a fresh scan (scan.py), replace that one line (or insert one) and
atomically replace the file: every other byte stays as it was, CRLF and a BOM
included, and a person's concurrent edit to any other line survives.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path

from ..errors import EditConflict, MementoError
from ..lines import LineDoc, decode, ensure_eol, eol_of, strip_eol
from ..locks import locked_edit
from .model import INLINE_RETRIES_RE, REPEATABLE_FIELDS, STATUS_NAMES, TASK_ID, Plan, Task
from .scan import META_RE, parse_plan_doc

_TASK_RE = re.compile(
    r"^(?P<indent> {0,3})[-*+] \[(?P<status>.)\][ \t]+"
    rf"(?P<tick>`?)(?P<id>{TASK_ID})(?P=tick):?(?:[ \t]+(?P<rest>.*))?$"
)
_FIELD_RE = re.compile(r"^(?P<indent>[ \t]+)[-*+] (?P<key>[A-Za-z_][\w-]*):(?P<sp>[ \t]*)(?P<value>.*)$")


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
            m = INLINE_RETRIES_RE.search(text)
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
        self._insert(task.end_line, f"{self._indent(task)}- {key}: {value}")
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
            at = self._task(task_id).end_line + 1  # after the task's last non-blank line
        indent = self._indent(self._task(task_id))
        nl = self.doc.newline
        ensure_eol(self.doc.lines, at - 2, nl)
        i = at - 1
        self.doc.lines[i:i] = [f"{indent}- {key}: {v}{nl}" for v in values]
        self._plan = None
        return True

    def insert_lines(self, after_lineno: int, texts: Iterable[str]) -> None:
        """Insert whole lines (without line endings) after line ``after_lineno`` (0: at the top)."""
        nl = self.doc.newline
        ensure_eol(self.doc.lines, after_lineno - 1, nl)
        self.doc.lines[after_lineno:after_lineno] = [t + nl for t in texts]
        self._plan = None

    def _indent(self, task: Task) -> str:
        """The indentation of the task's first field line, two spaces when it has none. An inline
        ``[retries: N]`` is on the task line itself: not a field line to copy."""
        lines = [ln for ln in task.field_lines.values() if ln != task.line]
        if not lines:
            return "  "
        return _FIELD_RE.match(strip_eol(self.doc.lines[min(lines) - 1])).group("indent")

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
            m = META_RE.match(text)
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


def set_meta(path: Path | str, key: str, value: str) -> Plan:
    return edit_plan(path, lambda e: e.set_meta(key, value))


def reset_task(path: Path | str, task_id: str) -> Plan:
    """``[!]`` (or any state but done) back to ``[ ]`` with retries 0: the person's "try again"."""
    from ..receipts import root_of_doc, vouch

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
    from ..receipts import root_of_doc, vouch

    def apply(e: PlanEditor) -> None:
        e.set_status(task_id, "-", expect=" !-?")  # a task waiting for an answer may be dropped too
        e.set_field(task_id, "reason", reason)
        e.update_counters()
        vouch(root_of_doc(path), {"op": "skip", "task": task_id, "reason": reason})  # as reset_task's

    return edit_plan(path, apply)
