"""A parallel phase's crew (SPEC §12): its workers, the lock they share, the main branch it follows.

:class:`Crew` is what the workers of one tick share: the running and ended
workers (:class:`Worker`, each a task in its own git worktree), the lock under
which one at a time touches the main work tree (also the lock of the tick's
state, limits.py), the main branch's HEAD as the crew last committed it, and,
unconfined, the watch on the main work tree (crew_watch.py). The modules above
it work on it by name: workers.py starts and waits for the workers,
crew_judge.py judges what one wrote outside its worktree or into another's,
crew_result.py turns a worker's end into a commit or a failure in main.

Git's own state is guarded per worktree (git/state.py) against a snapshot; every
ref but the worker's own branch is brought up to date in each snapshot before
its guards look (:meth:`Crew.refresh`): tags and other branches are a person's
to move. The refs the agents move at any moment are left loose there: the
other workers' branches (their own guards fold them) and the main branch,
which the crew keeps (:meth:`Crew.reclaim_main`). A person's commit on the
main branch is the crew's new HEAD (:meth:`Crew.follow_main`); any other move
is put back by whoever looks first (a worker's guards, a result being brought
in, a commit in main). An agent that pointed it at a commit of its branch
answers for it at its own guards, no other worker is failed for it; a move
elsewhere is blamed on the worker whose agent alone ran when the ref changed
(its ctime, as crew_watch.py tells files), else only the cron log says it.
Memento's own commits in main are made on the crew's HEAD only
(:meth:`Crew.commit_onto`): a move in the instant between the look and the
commit refuses it, and it is made once more after main is put back.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from pathlib import Path

from .. import sandbox
from ..git import state as git_state
from ..git import worktrees
from ..git.repo import head as git_head
from ..git.repo import repo_dirs
from ..git.run import run_git
from ..plan.model import Plan, Task
from ..runlog import cron_log
from ..state import Claim
from ..workspace import Workspace
from .context import Attempt, TaskResult, TickContext
from .crew_watch import MainWatch, Window, changed_at, own_run_at


@dataclass(frozen=True)
class WorktreeSpace(Workspace):
    """A worker's worktree as a workspace: its files are the worktree's; its logs and memory the project's."""

    main: Path | None = None

    @property
    def logs_dir(self) -> Path:
        return (self.main or self.root) / "logs"

    @property
    def memory_dir(self) -> Path:
        """The project's one memory store: the worker's prompt shows it, its queued writes go there."""
        return (self.main or self.root) / "memory"

    @property
    def memory_lock_path(self) -> Path:
        return Workspace(self.main or self.root).memory_lock_path

    @property
    def reviews_dir(self) -> Path:
        """The acceptance gate's findings outlive the worktree: the next attempt's prompt reads them."""
        return Workspace(self.main or self.root).reviews_dir

    @property
    def project_memento_dir(self) -> Path:
        """The project's `.memento/`: the worker's spending reaches the day's budget (usage.json)."""
        return Workspace(self.main or self.root).memento_dir


@dataclass
class Worker:
    """One task running in its worktree."""

    task: Task
    plan: Plan
    claim: Claim
    ctx: TickContext  # the worktree's: agent, guards, verify, rollback
    docs: TickContext  # the main work tree's, with this worker's log: plan, notes, status, commits
    branch: str = ""  # its branch (worktrees.free_branch: never a person's)
    at: Attempt | None = None
    thread: threading.Thread | None = None
    result: TaskResult | None = None
    finished: bool = False
    window: Window | None = None  # from its snapshot to its end (crew_watch.py)
    foreign: list[str] = field(default_factory=list)  # what other workers' guards found it did
    set_aside: bool = False  # its worktree was written by someone else: failed, no retry counted


class Crew:
    """The workers of one tick, and the lock under which they touch the main work tree."""

    def __init__(self, ctx: TickContext):
        self.ctx, self.ws = ctx, ctx.ws
        self.size = ctx.config.workers_max
        self.lock = ctx.state_lock  # also the lock of the tick's state the workers share (limits.py)
        self.changed = threading.Event()
        self.running: list[Worker] = []
        self.started: list[Worker] = []  # every worker of this crew, ended ones too (their windows)
        self.main_ref = worktrees.head_ref(ctx.root)
        self.main_head = git_head(ctx.root)
        self.on_branches: set[str] = set()  # commits seen on a worker's branch (follow_main)
        # Unconfined, the whole repository is judged at each worker's guards (crew_watch.py); in the
        # sandbox the main work tree and the other worktrees are read-only to a worker.
        self.watch = None if sandbox.resolve(ctx.config).confined else \
            MainWatch(ctx.ws, ctx.plan().meta.status_archive_dir)

    def settle(self) -> None:
        """Memento wrote the main work tree (under the lock, just now): that is how it is now."""
        if self.watch is not None:
            self.watch.settle()

    def windows(self) -> dict[str, Window]:
        """The running workers' windows, by task id (those that have taken their snapshot)."""
        return {w.task.id: w.window for w in self.running if w.window is not None}

    def refresh(self, w: Worker) -> None:
        """The refs as they are now in ``w``'s snapshot, but its own branch (as the guards fold it):
        the tags and branches a person may move meanwhile are never compared nor put back by a
        worker's guards, and the refs the workers' agents move at any moment, even between this read
        and the guards' own, are left loose (git.state.GitState.loose): the other workers' branches
        (theirs to fold) and the main branch (the crew's to put back: :meth:`reclaim_main`, first,
        while a commit an agent pointed it at is still on its branch)."""
        self.reclaim_main()
        snap = w.at.snap if w.at is not None else None
        if snap is None or snap.git is None:
            return
        own = w.branch
        now = git_state.watched_refs(self.ctx.root)
        refs = {k: v for k, v in now.items() if k != own}
        refs.update({k: v for k, v in snap.git.refs.items() if k == own})
        loose = {o.branch for o in self.running if o is not w and o.branch}
        if self.main_ref and self.main_head:
            loose.add(self.main_ref)
        w.at.snap = replace(snap, git=replace(snap.git, refs=refs, loose=frozenset(loose)))

    def follow_main(self) -> str | None:
        """A person's commit on the main branch during the tick is taken as the crew's new HEAD: the
        branch moved forward to a commit no worker's branch holds. Any other move (backwards,
        elsewhere, or to a commit of a worker's branch: its agent's) stays foreign to the crew.
        Returns the main branch's commit as read (before the workers' branches: a commit an agent
        made on its branch before it pointed main at it is among ``on_branches``)."""
        root = self.ctx.root
        head = self.main_tip()
        if not self.main_head:
            return head
        # Every commit ever seen on a worker's branch (a guard folds them away later).
        prefix = "refs/heads/" + worktrees.BRANCH_PREFIX
        tips = [tip for ref, tip in worktrees.refs(root).items() if ref.startswith(prefix)]
        if tips:
            out = run_git(root, ["rev-list", *tips, "^" + self.main_head, "--"], check=False).stdout
            self.on_branches.update(out.decode("ascii", "replace").split())
        if not head or head == self.main_head or head in self.on_branches:
            return head  # unmoved, or on a worker's branch: made by its agent
        if run_git(root, ["merge-base", "--is-ancestor", self.main_head, head], check=False).returncode:
            return head
        self.main_head = head
        return head

    def main_tip(self) -> str | None:
        """The main branch's own commit: never HEAD's, which an agent may detach elsewhere."""
        if not self.main_ref:
            return git_head(self.ctx.root)
        proc = run_git(self.ctx.root, ["rev-parse", "-q", "--verify", self.main_ref + "^{commit}"], check=False)
        return proc.stdout.decode("ascii", "replace").strip() or None if proc.returncode == 0 else None

    def reclaim_main(self) -> None:
        """The main branch put back at the crew's HEAD when it is anywhere else (a person's commit on
        top of it is followed instead). Pointed at a commit of a worker's branch, the running worker
        whose branch holds it answers for it at its guards (its ``foreign``): whoever looks first,
        that worker's guards, another's, or a result being brought in, finds main where the crew
        left it and is never blamed for that move. Moved elsewhere or deleted, or the main work
        tree's HEAD detached from it: the worker whose agent alone ran when the ref changed answers
        for it (:meth:`mover`), else the cron log says it; what git refused to put back says so."""
        head = self.follow_main()
        root, ref = self.ctx.root, self.main_ref
        if not ref or not self.main_head:
            return
        if worktrees.head_ref(root) != ref:  # the main work tree's HEAD detached or sent to another branch
            mover = self.mover(self.git_dir() / "HEAD")
            put = not run_git(root, ["symbolic-ref", "-m", "memento: HEAD put back", "HEAD", ref],
                              check=False).returncode
            self.blame(mover, f"pointed the main work tree's HEAD away from {ref} "
                              f"({'put back' if put else 'could not be put back'})")
        if head == self.main_head:
            return
        mover = self.mover(self.git_dir() / ref)
        put = not run_git(root, ["update-ref", "-m", "memento: the main branch put back", ref, self.main_head,
                                 head or ""], check=False).returncode
        how = "put back" if put else "could not be put back"
        if head is None:
            self.blame(mover, f"deleted the main branch ({ref}) ({how})")
            return
        if head not in self.on_branches or not put:
            self.blame(mover, f"moved the main branch ({ref}) to {head[:7]} ({how})")
            return
        moved = f"moved the main branch ({ref}) to {head[:7]}, a commit of its branch (put back)"
        holders = [w for w in self.running if w.branch and not run_git(
            root, ["merge-base", "--is-ancestor", head, w.branch], check=False).returncode]
        if len(holders) == 1:
            holders[0].foreign.append(moved)  # said once however often it was found (judge_outside, passed)
        else:
            cron_log(self.ws, f"parallel workers: an agent {moved}")

    def git_dir(self) -> Path:
        """The main work tree's git folder (its HEAD and the main branch's loose ref are there)."""
        return repo_dirs(self.ctx.root).git_dir

    def mover(self, path: Path) -> Worker | None:
        """Unconfined, the one running worker whose own agent ran when ``path`` (the main branch's
        ref, the main work tree's HEAD) last changed, told by its ctime as crew_watch tells files;
        None when none or several did, or in the sandbox (where no agent can write `.git/`)."""
        if self.watch is None:
            return None
        moment = changed_at(path)
        found = [w for w in self.running if own_run_at(moment, w.ctx.own_runs) == "agent"]
        return found[0] if len(found) == 1 else None

    def blame(self, mover: Worker | None, said: str) -> None:
        """``said`` for the worker whose agent did it, at its guards; when time cannot name one
        (no agent ran then, or several did; in the sandbox, where none can), nobody is failed for
        it and the cron log says it: the worker that found it never answers for it."""
        if mover is None:
            cron_log(self.ws, f"parallel workers: someone {said} (no one worker's agent ran alone then)")
        else:
            mover.foreign.append(said)

    def commit_onto(self, docs: TickContext) -> None:
        """Just before Memento commits in the main work tree through ``docs``: the main branch
        reclaimed (:meth:`reclaim_main`), and the commit to be made on the crew's HEAD or not at all
        (TickContext.commit_onto: a move in the instant after this look refuses the commit)."""
        docs.commit_onto = self.reclaim_for_commit()
        docs.reclaim = self.reclaim_for_commit

    def reclaim_for_commit(self) -> str | None:
        """The main branch reclaimed just before a commit in main; the crew's HEAD, the commit it
        is to be made on."""
        self.reclaim_main()
        return self.main_head
