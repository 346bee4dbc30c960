"""Parallel workers judged on the whole repository, without a sandbox (SPEC §13).

A worker's agent runs in its worktree, but unconfined it can write anywhere the
person can: the main work tree's plan, status log and notes, a new file there
(a ``conftest.py`` every later verify would import), or another worker's
worktree. :class:`MainWatch` keeps what the main work tree held at the crew's
start (the documents, the untracked files) and brings it up to date after each of
Memento's own writes there (:meth:`MainWatch.settle`, under the crew's lock, where
the claims, results and merges are written). At each worker's guards (under the
same lock) whatever differs is someone else's: a worker's agent or a person.

They are told apart by time. Each worker has a window, from its snapshot until
its thread ends, in which its agent, its verify and Memento's work in its
worktree run. A change whose ctime (nothing can set a ctime back) falls in the
judging worker's window is that worker's: a guard failure, and it is undone (the
document put back, the new file moved to logs/rollback/). In another running
worker's window: left for that worker's guards. In none: a person's, kept.

Other worktrees: a worker's worktree is fresh (exactly its base) until its
snapshot, so anything git shows changed there before it is foreign: the judging
worker's when its window holds the change, and always removed before that
worker's snapshot (:meth:`MainWatch.clean_fresh`). Once it runs, only its own
agent and its own verify write its files: each worker records when they ran
(agent.own_run), and a change of its worktree whose ctime falls outside both
(after its agent ended: while it waits for its guards, verifies, waits to
commit) is someone else's: :func:`own_run_at` says ''. A change while its own
verify ran is its verify's unless another worker's window holds it too: then
no one can tell (crew_judge.judge_worktree: the task is set aside, never committed with it).
A write into a worktree while that worker's own agent runs is the one thing
time cannot tell from its agent's: only the sandbox prevents it.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from .. import notes
from ..errors import MementoError
from ..git.run import run_git
from ..git.status import status
from ..locks import atomic_write_bytes
from ..workspace import OWN_DOCS, Workspace, own_file
from .context import read_or_none
from .guards import is_own_temp, notes_damage, own_definition_change, plan_damage
from .receipts import held
from .rollback import rollback_folder

SLACK = 0.05  # the kernel stamps ctimes with a coarse clock, a few ms behind time.time()
PLAN, STATUS, NOTES = "docs/MASTER_PLAN.md", "docs/TICK_STATUS.md", "docs/HUMAN_NOTES.md"
# The documents judged: CURRENT_STATE.md is left out, a person's `memento note`/`skip` rewrites it
# and the tick writes it whole when it ends (as a serial attempt's guards leave it).
WATCHED = tuple(rel for rel in OWN_DOCS if rel != "docs/CURRENT_STATE.md")


@dataclass
class Window:
    """When a worker's processes and Memento's work in its worktree may write: from its snapshot
    to the end of its thread (``end`` None while it runs)."""

    start: float
    end: float | None = None

    def holds(self, moment: float) -> bool:
        return moment >= self.start - SLACK and (self.end is None or moment <= self.end + SLACK)


def own_run_at(moment: float, runs: list | None) -> str:
    """Which of a worker's own processes ran at ``moment`` ("agent", "verify"; '' none): ``runs`` as
    agent.own_run records them (kind, start, end or None while it runs)."""
    # A ctime is stamped by a coarse clock that lags time.time(): a write at t has a ctime in
    # [t - SLACK, t]. So a run's own writes may look older than its start, never newer than its
    # end (recorded once its processes are gone): no slack after the end, where another worker's
    # write just after it (once the guards have run) would be taken for this run's.
    for kind, start, end in sorted(runs or (), key=lambda r: r[0] != "agent"):  # the agent first
        if moment >= start - SLACK and (end is None or moment <= end):
            return kind
    return ""


def changed_at(path: Path) -> float:
    """The ctime of ``path``, or of its folder when it is gone (a deletion changes the folder)."""
    for candidate in (path, *path.parents):
        try:
            return os.lstat(candidate).st_ctime
        except OSError:
            continue
    return 0.0


class MainWatch:
    """The main work tree as Memento left it, and the judgment of what changed since."""

    def __init__(self, ws: Workspace, archive_dir: str | None):
        self.ws, self.root, self.archive = ws, Path(ws.root), archive_dir
        self.docs: dict[str, bytes | None] = {}
        self.untracked: set[str] = set()
        self.settle(untracked=True)

    def _untracked_now(self) -> set[str]:
        return {e.path for e in status(self.root) if e.xy == "??" and not own_file(e.path, self.archive)
                and not is_own_temp(e.path)}

    def settle(self, *, untracked: bool = False) -> None:
        """Memento has written the main work tree (under the crew's lock): this is its state now."""
        self.docs = {rel: read_or_none(self.root / rel) for rel in WATCHED}
        if untracked:
            self.untracked = self._untracked_now()

    # ------------------------------------------------------------ the main work tree

    def judge(self, running: dict[str, Window], judging: str | None = None, *,
              untracked: bool = True) -> dict[str, list[str]]:
        """What changed in the main work tree since Memento last wrote it, judged: reasons per task id
        of the running workers (``running``: their windows) whose window holds the change, undone.
        ``judging``: a worker's guards look, and judge only what its window holds (a change in
        another's window is left to its guards); None: Memento is about to write there, and the one
        worker whose window holds a change answers for it (held by several: undone, and the reasons
        go under ``""``, nobody's, for the cron log)."""
        found: dict[str, list[str]] = {}

        def holders(when: float) -> list[str] | None:
            held = [tid for tid, window in running.items() if window.holds(when)]
            if judging is not None and held:
                return [judging] if judging in held else None  # None: left to the others' guards
            return held

        for rel, known in list(self.docs.items()):
            now = read_or_none(self.root / rel)
            if now == known:
                continue
            who = holders(changed_at(self.root / rel))
            if who is None:
                continue
            damage = {tid: said for tid in who if (said := self._doc_damage(rel, known, now, tid))}
            if len(damage) > 1:
                damage = {"": f"while {', '.join(sorted(damage))} ran: " + next(iter(damage.values()))}
            if not damage:
                self.docs[rel] = now  # a person's (no agent ran), or done through Memento (`skip`, `note`)
                continue
            self._save(rel, f"main-{'-'.join(sorted(damage))}")
            self._put_back(rel, known)
            for tid, said in damage.items():
                found.setdefault(tid, []).append(f"{said} in the main work tree (put back)")
        planted: dict[str, list[str]] = {}
        for rel in sorted(self._untracked_now() - self.untracked) if untracked else ():
            who = holders(changed_at(self.root / rel))
            if who == []:
                self.untracked.add(rel)  # a person's new file
            for tid in (who if who is None or len(who) < 2 else [""]) or ():
                planted.setdefault(tid, []).append(rel)
        for tid, paths in planted.items():
            self._move_aside([p for p in paths if (self.root / p).exists() or (self.root / p).is_symlink()],
                             f"main-{tid}")
            found.setdefault(tid, []).append(f"added files to the main work tree: {listed(paths)} "
                                            "(moved to logs/rollback/)")
        return found

    def _doc_damage(self, rel: str, known: bytes | None, now: bytes | None, task_id: str) -> str:
        if rel == PLAN:
            if known is None:
                return f"made {PLAN}"
            said = "; ".join(s for s in (own_definition_change(known, now, task_id),
                                         plan_damage(known, now, task_id, held(self.ws))) if s)
            return f"{said} in {PLAN}" if said else ""
        if rel == STATUS:
            return f"wrote into {STATUS} (only Memento appends to it)"
        if rel == NOTES and known is not None:
            keys, new_keys = _note_keys(known), _note_keys(now)
            if new_keys is None:
                return f"made {NOTES} unreadable"
            if keys is not None and not keys <= new_keys:
                return f"removed {len(keys - new_keys)} note(s) from {NOTES}"
            forged = notes_damage(known, now, held(self.ws).notes)
            return f"{forged} in {NOTES} (a person adds notes with `memento note`)" if forged else ""
        return f"changed {rel} (Memento's own file)"

    def _save(self, rel: str, label: str) -> None:
        data = read_or_none(self.root / rel)
        if data is None:
            return
        dest = rollback_folder(self.ws, label) / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)

    def _put_back(self, rel: str, known: bytes | None) -> None:
        path = self.root / rel
        if known is None:
            if path.is_symlink() or path.is_file():
                path.unlink()
            return
        if path.is_symlink() or (path.exists() and not path.is_file()):
            _remove(path)
        atomic_write_bytes(path, known)

    def _move_aside(self, paths: list[str], label: str, root: Path | None = None) -> None:
        root = root or self.root
        dest = rollback_folder(self.ws, label)
        for rel in paths:
            src = root / rel
            if not (src.exists() or src.is_symlink()):
                continue
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.replace(src, target)
            except OSError:
                shutil.copy2(src, target, follow_symlinks=False) if src.is_file() else None
                _remove(src)

    # ------------------------------------------------------------ other workers' worktrees

    def foreign_in_fresh(self, worktree: Path, base: str | None) -> list[str]:
        """What git shows changed in a worktree that no agent has run in yet (it was made at
        ``base`` and holds exactly that): someone else's writes."""
        if not base or not (worktree / ".git").exists():
            return []
        return sorted({e.path for e in status(worktree)} - {""})

    def clean_fresh(self, task_id: str, worktree: Path, base: str | None, paths: list[str]) -> None:
        """Put a fresh worktree back at ``base``: changed files checked out again, new ones moved
        to logs/rollback/ (saved, like every rollback)."""
        tracked = set(_tree_paths(worktree, base, paths))
        untracked = [p for p in paths if p not in tracked]
        if untracked:
            self._move_aside(untracked, f"worktree-{task_id}", root=worktree)
        if tracked:
            for rel in sorted(tracked):
                self._save_from(worktree, rel, f"worktree-{task_id}")
            run_git(worktree, ["checkout", base, "--", *sorted(tracked)], check=False)

    def _save_from(self, root: Path, rel: str, label: str) -> None:
        data = read_or_none(root / rel)
        if data is not None:
            dest = rollback_folder(self.ws, label) / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)


def _note_keys(data: bytes | None) -> frozenset[str] | None:
    if data is None:
        return None
    try:
        return frozenset(n.key for n in notes.parse_notes_text(data.decode("utf-8", "replace")))
    except MementoError:
        return None


def _tree_paths(root: Path, base: str | None, paths: list[str]) -> list[str]:
    if not base or not paths:
        return []
    out = run_git(root, ["ls-tree", "-r", "-z", "--name-only", base, "--", *paths], check=False).stdout
    return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def listed(names: list[str], limit: int = 10) -> str:
    """The first ``limit`` names joined, and how many more there are."""
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")

