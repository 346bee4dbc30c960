"""Task ``depends: T-101, T-102`` (SPEC §16): what a task waits on, and the plan's problems with it.

A task is picked only when every task it names is ``[x]`` or ``[-]``. The
problems are values at the ``depends:`` line: an id that is no task, a task
naming itself, and cycles — through other tasks and through phases (a task
waits for every task of the phases its own phase depends on). Pure functions
over a parsed plan; nothing here decodes a task without a ``depends:`` field.
"""

from __future__ import annotations

import re

from .errors import PlanError

FINISHED = frozenset("x-")
_ID_RE = re.compile(r"[A-Z][A-Z0-9]*-\d+")  # plan/model.TASK_ID (plan/model.py imports this module)


def satisfied(plan, task) -> bool:
    """Every dependency of ``task`` exists and is done or skipped."""
    by_id = plan.by_id
    for dep in task.depends:
        other = by_id.get(dep)
        if other is None or other.status not in FINISHED:
            return False
    return True


def waits_on(plan) -> dict[str, list[str]]:
    """Unfinished tasks whose dependencies are not all done: task id -> the ids not yet done."""
    found: dict[str, list[str]] = {}
    by_id = plan.by_id
    for task in plan.tasks:
        if task.status in FINISHED or not task.depends:
            continue
        left = [d for d in task.depends if d not in by_id or by_id[d].status not in FINISHED]
        if left:
            found[task.id] = left
    return found


def dependency_errors(plan) -> tuple[PlanError, ...]:
    """Unknown or malformed ids, self-dependencies and cycles, each at its task's ``depends:`` line."""
    dependents = [t for t in plan.tasks if t.depends]
    if not dependents:
        return ()
    errors: list[PlanError] = []
    by_id = plan.by_id
    for task in dependents:
        line = task.field_lines.get("depends", task.line)
        for dep in task.depends:
            if not _ID_RE.fullmatch(dep):
                problem = f"depends: `{dep}` is not a task id (write ids like T-101, comma-separated)"
            elif dep == task.id:
                problem = "depends on itself"
            elif dep not in by_id:
                problem = f"depends on unknown task `{dep}`"
            else:
                continue
            errors.append(PlanError(plan.path, line, task.id, problem, scope="task"))
    errors += _cycle_errors(plan)
    errors.sort(key=lambda e: e.line)
    return tuple(errors)


# ------------------------------------------------------------------ cycles

def _graph(plan) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """Nodes ("t", id) and ("p", phase): a task points at the tasks it names and at the phases its
    phase depends on; a phase points at its tasks (it is finished when they all are)."""
    by_id = plan.by_id
    phase_deps = {p.id: p.depends for p in plan.phases}
    graph: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for phase in plan.phases:
        graph[("p", phase.id)] = [("t", t) for t in phase.task_ids]
    for task in plan.tasks:
        if by_id.get(task.id) is not task:
            continue  # a duplicate id: reported elsewhere
        edges = [("t", d) for d in task.depends if d in by_id and d != task.id]
        edges += [("p", q) for q in phase_deps.get(task.phase, ())]
        graph[("t", task.id)] = edges
    return graph


def strongly_connected(graph) -> list[list]:
    """Strongly connected components with more than one node (Tarjan, iterative) of ``graph``,
    a mapping of node to the nodes it points at (also used by tests/test_architecture.py)."""
    index: dict = {}
    low: dict = {}
    on_stack: set = set()
    stack: list = []
    found: list[list] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph.get(root, ())))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            advanced = False
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(graph.get(nxt, ()))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
    return found


def _cycle_errors(plan) -> list[PlanError]:
    """One error per task whose ``depends:`` closes a cycle (phase-only cycles are the phases' error)."""
    graph = _graph(plan)
    errors = []
    for component in strongly_connected(graph):
        members = set(component)
        for node in sorted(n for n in members if n[0] == "t"):
            task = plan.by_id[node[1]]
            for dep in task.depends:
                if ("t", dep) in members:
                    path = _path(graph, ("t", dep), node, members)
                    errors.append(PlanError(plan.path, task.field_lines.get("depends", task.line), task.id,
                                            "dependency cycle: " + _describe([node, *path]), scope="task"))
                    break
    return errors


def _path(graph, start, goal, members) -> list:
    """The shortest path start → … → goal inside one component (breadth first)."""
    before = {start: None}
    queue = [start]
    for node in queue:
        if node == goal:
            break
        for nxt in graph.get(node, ()):
            if nxt in members and nxt not in before:
                before[nxt] = node
                queue.append(nxt)
    path = [goal]
    while path[-1] != start:
        path.append(before[path[-1]])
    return path[::-1]


def _describe(nodes) -> str:
    """``T-1 → T-5 → Phase 1 (T-5's phase depends on it) → T-1``."""
    words = []
    for (kind, name), (_, before) in zip(nodes, [("", ""), *nodes], strict=False):
        words.append(name if kind == "t" else f"{name} ({before}'s phase depends on it)")
    return " → ".join(words)
