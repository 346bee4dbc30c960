"""Several machines on one plan through its git remote (SPEC §12 "Across machines").

With ``[workers] remote = "origin"`` git is the coordination engine; there is
no Memento server. Around the tick's own steps (run.py) this module:

- brings the local branch to the remote's before each pick (:func:`sync`):
  fetch, fast-forward, or rebase Memento's unpushed commits onto it (a
  conflict in Memento's documents is resolved by re-applying this host's
  edits to the remote's version; a conflict anywhere else stops the tick);
- claims the picked task with a commit marking it ``[~]`` pushed with
  ``git push --atomic`` and ``--force-with-lease=<branch>:<sha fetched>``, a
  compare-and-swap: of two hosts racing for a task exactly one wins, the loser
  fetches and picks again (:func:`pick`);
- heartbeats the claim as ``refs/memento/claims/<ID>`` (a commit whose
  committer time is the heartbeat), pushed every :data:`HEARTBEAT_SECONDS`;
- pushes the result the same way, rebasing on rejection, and deletes the
  heartbeat ref in the same atomic push, leased on the value this host last
  pushed: a claim taken over meanwhile is never completed twice
  (:func:`publish`); a tick that goes on claims its next task in that same
  push (the claim commit on top of the result, its heartbeat ref created), so
  a task costs one push, not two, and the next pick needs no fetch;
- while its pushes lose races, claims its share of a parallel phase's unfinished
  tasks (up to four) in one commit and pushes their results together
  (:func:`_batch`): a fraction of a push a task;
- takes over a ``[~]`` task whose heartbeat ref is older than
  ``stale_lock_timeout`` (its retry counted) (:func:`take_over_stale`).

Every push names what it expects to replace, so nothing a person pushed is
ever overwritten: a rejected push is fetched, rebased and tried again. A push
the remote itself refuses (``! [remote rejected]``: a pre-receive hook, a
protected branch) is no lost race: :class:`PushRefused` carries the remote's
own words, the tick stops there and the next one tries again. A push whose
answer never arrived (the connection cut after the refs landed) is settled by
reading the remote's refs (:func:`landed`) before anything is declared lost.
Without a remote every function here returns at once (today's tick).
"""

from __future__ import annotations

import json
import os
import random
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from .. import gitobjects, gitops, notes, status_log, verify_changes
from ..crashpoints import crash_point
from ..errors import EXIT_ATTENTION, EXIT_OK, EditConflict, MementoError
from ..lines import decode
from ..locks import atomic_write_bytes
from ..plan import Plan, PlanEditor, Task, edit_plan, parse_plan_doc
from ..runlog import Outcome, cron_log, utc_stamp
from ..scheduler import TASK, overlap, pickable
from ..scheduler import pick as pick_verdict
from ..state import read_claim
from ..workspace import OWN_DOCS
from . import plan_merge
from .context import TaskResult, TickContext
from .held import held_tasks
from .record import read_record
from .rollback import rollback_folder

HEARTBEAT_SECONDS = float(os.environ.get("MEMENTO_REMOTE_HEARTBEAT_SECONDS", "60"))
MAX_RACES = 8  # lost races (rejected pushes) in a row before the tick gives up until the next one
BATCH = 4  # the most tasks one claim takes, once this tick's pushes have lost races (see _batch)
CLAIMS = "refs/memento/claims/"
SEEN = "refs/memento/seen/"  # the remote's claim refs as this host last fetched them
PLAN, STATUS, NOTES_DOC, STATE_DOC = ("docs/MASTER_PLAN.md", "docs/TICK_STATUS.md", "docs/HUMAN_NOTES.md",
                                      "docs/CURRENT_STATE.md")


class PushRefused(MementoError):
    """The remote itself refused the push (a hook, a protected branch): no race was lost."""

    def __init__(self, remote: str, said: str):
        super().__init__(f"the remote {remote!r} refused the push: {said}")
        self.remote, self.said = remote, said


class FleetConflict(MementoError):
    """The local commits cannot be replayed on the remote's branch: these paths conflict."""

    def __init__(self, paths: list[str]):
        super().__init__("conflict with the remote's branch in " + ", ".join(paths))
        self.paths = paths


@dataclass(frozen=True)
class Beat:
    """One claim ref as fetched: its commit, the host that wrote it and when."""

    sha: str
    host: str
    at: float


@dataclass
class Held:
    """A claim ref this host holds: the heartbeat commit it last pushed there, and the ones pushed
    since whose answer never arrived."""

    ref: str
    unsure: set[str] = field(default_factory=set)


class Fleet:
    """This host in the fleet for one tick: the remote, the branch, and the claims it holds."""

    def __init__(self, ctx: TickContext):
        self.ctx = ctx
        self.remote = ctx.config.workers_remote
        self.host = ctx.config.host
        self.branch = _branch(ctx)
        self.task = ""  # the claim in hand: the task being attempted, or the one the next pick() gets
        self.claims: dict[str, Held] = {}  # every claim ref held: in hand, queued, or done here and not pushed
        self.queued: list[str] = []  # claimed, not yet handed to pick(); the first is chained (in hand)
        self.lost = ""  # why a claim stopped being ours while it was held
        self.races = 0  # pushes that lost a race in a row (the back-off doubles with each)
        self.fetched_at: float | None = None  # when the last fetch began (_clock)
        self.window = 0.0  # seconds from that fetch to the end of the last push: another push landing
        # inside it loses this one its race, so the back-off's first pause is sized by it
        self.contended = False  # the last push to the branch lost a race first: a claim takes this host's share
        self.plan_notes: list[str] = []  # this host's plan edits the remote's word overrode in a rebase
        # The remote's branch and claim refs as the last fetch left them (:func:`_fetched`), read
        # once per fetch; a fetch or a push (which moves the remote-tracking branch) forgets it.
        self.fetched: tuple[str | None, dict[str, Beat]] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def tracking(self) -> str:
        return f"refs/remotes/{self.remote}/{self.branch}"

    @property
    def ref(self) -> str:
        """The heartbeat commit last pushed for the claim in hand ('' when none)."""
        held = self.claims.get(self.task)
        return held.ref if held else ""

    @property
    def chained(self) -> str:
        """The task the next pick() gets without a claim of its own ('' when none)."""
        return self.queued[0] if self.queued else ""

    def start_beating(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._beat, name=f"claim-ref-{self.task}", daemon=True)
        self._thread.start()

    def stop_beating(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None

    def _beat(self) -> None:
        while not self._stop.wait(HEARTBEAT_SECONDS):
            for task in list(self.claims):
                try:
                    with self._lock:
                        held = self.claims.get(task)
                        if held is None:
                            continue
                        new = heartbeat_commit(self.ctx, task, self.host)
                        ref = f"{CLAIMS}{task}"
                        held.unsure.add(new)  # until the remote's answer says otherwise
                        if push(self.ctx, [f"{new}:{ref}"], [f"{ref}:{held.ref}"]):
                            self.adopt(new, task)
                        elif not self.adopt(remote_ref(self.ctx, ref), task):
                            self.lost = f"its heartbeat ref {ref} was changed by another host"
                            return
                except (OSError, MementoError) as exc:
                    cron_log(self.ctx.ws, f"claim heartbeat not pushed (tried again in {HEARTBEAT_SECONDS:g}s): {exc}")

    def adopt(self, sha: str | None, task: str | None = None) -> bool:
        """``sha`` is the value on the remote of the claim ref of ``task`` (the claim in hand when
        None): True when it is a beat of this host's (the last one it knows landed, or one whose
        push answered with an error but landed)."""
        held = self.claims.get(self.task if task is None else task)
        if held is None or not sha or (sha != held.ref and sha not in held.unsure):
            return False
        held.ref, held.unsure = sha, set()
        save_pending(self.ctx)
        return True


def enabled(ctx: TickContext) -> bool:
    return ctx.config is not None and bool(ctx.config.workers_remote)


def fleet(ctx: TickContext) -> Fleet:
    if ctx.fleet is None:
        ctx.fleet = Fleet(ctx)
    return ctx.fleet


# ---------------------------------------------------------------- the tick's call sites


def foreign_claims(ctx: TickContext, plan: Plan) -> frozenset[str]:
    """`[~]` tasks this host has no claim or record of: another host's, judged by their heartbeat
    ref (:func:`take_over_stale`), never by the local stale recovery."""
    if not enabled(ctx):
        return frozenset()
    return frozenset(t.id for t in plan.tasks if t.status == "~" and not _local(ctx, t.id))


def refresh(ctx: TickContext, plan: Plan) -> Plan:
    """A plan paused on this host may have been resumed on the remote (or paused here by a
    person, which the fleet then hears of): sync before the tick_mode check."""
    if not enabled(ctx) or plan.meta.tick_mode == "auto":
        return plan
    try:
        sync(ctx)
    except MementoError as exc:
        cron_log(ctx.ws, f"the remote {ctx.config.workers_remote!r} could not be used: {exc}")
        return plan
    fresh = ctx.plan()
    return plan if fresh.plan_errors else fresh


def pick(ctx: TickContext, pick_task: Callable, afterwards: Callable,
         room: int = 1) -> tuple[Plan, Task] | Outcome:
    """Sync with the remote, pick, claim by compare-and-swap; a lost race fetches and picks again.
    A remote that cannot be used ends the tick (run.afterwards when tasks ran). ``room``: how
    many more tasks this tick may attempt (a claim may take more than one, :func:`_batch`)."""
    if not enabled(ctx):
        return pick_task(ctx)
    chained = _take_chained(ctx)
    if chained is not None:
        return chained
    stop = partial(_stopped, ctx, afterwards=afterwards)
    try:
        for _ in range(MAX_RACES):
            sync(ctx)
            mode = ctx.plan().meta.tick_mode
            if mode != "auto":  # a person paused the fleet by pushing the plan
                cron_log(ctx.ws, f"tick skipped: tick_mode is {mode} on {ctx.config.workers_remote}")
                return stop(f"tick skipped: tick_mode is {mode} (the remote's plan)", code=EXIT_OK)
            picked = pick_task(ctx)
            if isinstance(picked, Outcome):
                return picked
            picked = _spread(ctx, *picked)
            if claim(ctx, picked[1], _batch(ctx, *picked, room)):
                return picked
            cron_log(ctx.ws, f"lost the race for {picked[1].id} to another host: fetching and picking again")
    except FleetConflict as exc:
        return stop(f"{exc}; rebase or merge by hand, then the next tick runs")
    except PushRefused as exc:
        return stop(f"{exc}; nothing was claimed, the next tick tries again")
    except MementoError as exc:
        return stop(f"the remote {ctx.config.workers_remote!r} could not be used: {exc}")
    return stop(f"lost the race to the remote {MAX_RACES} times; the next tick tries again")


def _take_chained(ctx: TickContext) -> tuple[Plan, Task] | None:
    """The task claimed with the last result's push (:func:`publish`) or with the task before it
    (a claim of two, :func:`_batch`): no sync, no claim of its own."""
    f = ctx.fleet
    if f is None or not f.chained:
        return None
    task_id = f.chained
    if f.task != task_id:
        return None
    plan = ctx.plan()
    task = None if plan.plan_errors else plan.task(task_id)
    if task is None:  # the work tree's plan cannot be read: the claims go back (finish), a normal pick follows
        release_chained(ctx)
        return None
    f.queued.pop(0)
    return plan, task


def _batch(ctx: TickContext, plan: Plan, task: Task, room: int, rev: str = "HEAD") -> list[Task]:
    """The tasks one claim takes: ``task``, and, while the remote's branch is contended (the last
    push lost a race, or lost one before it landed) and ``room`` (the tasks this tick may still
    attempt) allows, more free tasks of its `parallel: true` phase, at random: this host's share
    of the phase's unfinished tasks (free or claimed, over the hosts holding claims, this one
    counted), at most BATCH. The host attempts them one after another and pushes their results
    together with its next claim: a task then costs a fraction of a push to the branch, which
    every host's push must take in turn, so the fleet loses fewer races. The share keeps one
    host from queueing tasks that others, finishing sooner, would start; hosts whose pushes
    land at their first try claim one task at a time, so a task never waits on another host's
    queue unless the fleet's pushes contend (a fleet woken in the same minute claims its share
    once, then one by one)."""
    f = fleet(ctx)
    phase = plan.phase(task.phase) if task.phase else None
    if not f.contended or room < 2 or phase is None or not phase.parallel:
        return [task]
    max_retries = plan.meta.max_retries
    held = held_tasks(ctx, plan, rev)  # a task whose verify the architect changed waits for a person
    running = [t.context_files for t in plan.tasks if t.status == "~"]  # other hosts' claims
    others = [t for t in plan.tasks if t.phase == task.phase and t.id != task.id and t.id not in held
              and pickable(t, max_retries, plan) and not any(overlap(t.context_files, r) for r in running)]
    hosts = 1 + len({beat.host for beat in _seen(ctx).values()} - {f.host})
    unfinished = sum(1 for t in plan.tasks if t.phase == task.phase and t.status in (" ", "~"))
    size = min(BATCH, room, max(1, unfinished // hosts))
    return [task, *_CHANCE.sample(others, min(len(others), size - 1))]


def _spread(ctx: TickContext, plan: Plan, task: Task, rev: str = "HEAD") -> tuple[Plan, Task]:
    """In a `parallel: true` phase, any of its pickable tasks at random rather than the first:
    hosts that fetched the same plan race for the same task less often (each lost race is a
    fetch and a push more). Other phases keep the first, in file order."""
    phase = plan.phase(task.phase) if task.phase else None
    if phase is None or not phase.parallel:
        return plan, task
    max_retries = plan.meta.max_retries
    held = held_tasks(ctx, plan, rev)
    running = [t.context_files for t in plan.tasks if t.status == "~"]  # other hosts' claims
    candidates = [t for t in plan.tasks if t.phase == task.phase and t.id not in held
                  and pickable(t, max_retries, plan) and not any(overlap(t.context_files, r) for r in running)]
    return plan, (_CHANCE.choice(candidates) if candidates else task)


def publish(ctx: TickContext, result: TaskResult, *, chain: bool = False, room: int = 1) -> TaskResult:
    """Push the attempt's result commit (and drop its heartbeat ref) the same way, rebasing on rejection.

    ``chain`` (the tick goes on after a passed task): the same atomic push also claims the next
    task of the plan it lands on (:func:`_chain_claim`); won, the fleet holds that claim and the
    next :func:`pick` returns it without a sync or a claim push of its own. A lost race goes
    round again (the next task may be another); a refusal or an error undoes the claim commit
    and the result is treated as without ``chain``. ``room``: the tasks the tick may attempt
    after this one (the next claim may take more than one, :func:`_batch`).

    With a task of this host's claim still queued (a claim of two), a passed result that goes
    on is not pushed yet: it stays committed here, its claim ref kept and beaten, and the push
    after the queued task carries both. Every push deletes every claim ref this host holds: the
    results it carries mark their tasks, and a queued task never attempted is `[ ]` in them
    (the work tree's plan never had its `[~]`), so it goes back with no retry counted."""
    f = ctx.fleet
    if not enabled(ctx) or f is None or not f.task:
        return result
    f.stop_beating()
    _release_if_still_claimed(ctx, f.task)
    chain = chain and result.passed
    if chain and f.queued and f.queued[0] != f.task:
        f.task = f.queued[0]  # in hand: the next pick gets it (_take_chained)
        save_pending(ctx)
        f.start_beating()
        return result
    if f.queued:  # claimed, never attempted: each goes back with a commit that says so
        _release_commits(ctx, list(f.queued))
    try:
        for _ in range(MAX_RACES):
            commit_own_docs(ctx)
            fetch(ctx)
            upstream, seen = _fetched(ctx)
            for task_id in f.claims:
                if not f.lost and not f.adopt(seen.get(task_id, Beat("", "", 0)).sha, task_id):
                    f.lost = f"its claim ref {CLAIMS}{task_id} is gone or another host's (taken over as stale?)"
            if f.lost:
                return _claim_lost(ctx, result, upstream)
            try:
                local, arrive = integrate_later(ctx, upstream)
            except FleetConflict as exc:
                result = _conflicted(ctx, result, upstream, exc.paths)
                chain = False
                continue
            nxt = None
            if chain:
                try:
                    nxt = _chain_claim(ctx, seen, local, room)
                except MementoError as exc:  # the result is pushed as without a chain
                    cron_log(ctx.ws, f"the next task was not claimed with the result of {result.task_id}: {exc}")
                    chain = False
            # The claim commit goes on the result as an object only: HEAD moves to it once the
            # push has won, so a lost race or a refusal leaves nothing to undo here.
            specs = [f"{nxt.made.sha if nxt else local or 'HEAD'}:refs/heads/{f.branch}",
                     *(f":{CLAIMS}{t}" for t in f.claims)]
            leases = [_lease(f, upstream), *(f"{CLAIMS}{t}:{held.ref}" for t, held in f.claims.items())]
            if nxt is not None:
                for task_id, old in nxt.tasks:
                    specs.append(f"{nxt.beat}:{CLAIMS}{task_id}")
                    leases.append(f"{CLAIMS}{task_id}:{old}")
            landed = push(ctx, specs, leases)
            if landed:
                _answered(ctx)  # the pending file first: a kill from here on leaves nothing to push
            # HEAD and the files to the replayed commits, out of the push's window; the chained
            # claim, made on them, held before anything is committed on top.
            arrive(partial(_hold_chained, ctx, nxt) if landed else _nothing)
            if landed:
                return result
    except MementoError as exc:
        cron_log(ctx.ws, f"the result of {result.task_id} is committed here but not pushed "
                         f"(the next sync pushes it if the claim is still this host's): {exc}")
        if isinstance(exc, PushRefused):
            ctx.event(f"⚠️ NOT PUSHED — the remote {exc.remote} refused the result of {result.task_id}",
                      [("Reason", exc.said), ("Action", "committed here; the next tick pushes it with its claim "
                                                        "ref once the remote takes it")])
        _forget(f)
        return result
    cron_log(ctx.ws, f"the result of {result.task_id} was not pushed after {MAX_RACES} races; the next tick does")
    _forget(f)
    return result


def _answered(ctx: TickContext) -> None:
    """The push of :func:`publish` landed: every claim it answered forgotten (the pending file too)."""
    f = fleet(ctx)
    if f.queued:
        cron_log(ctx.ws, f"released the claim of {', '.join(f.queued)}: the tick stopped before attempting it")
    _forget(f)
    save_pending(ctx)


def _hold_chained(ctx: TickContext, nxt: Claim | None) -> bool:
    """The next claim (``nxt``), won in the push of :func:`publish`, made HEAD and held: True
    when it is (the work tree's plan then lags HEAD's by the claim's `[~]` until the attempt)."""
    if nxt is None:
        return False
    if gitops.adopt_commit(ctx.root, nxt.made):
        _hold(ctx, [t for t, _ in nxt.tasks], nxt.beat, chained=True)
        return True
    # HEAD could not follow the push (files in the way): the claim is left to go stale
    cron_log(ctx.ws, f"the claim of {', '.join(t for t, _ in nxt.tasks)} landed but HEAD is not at "
                     f"{(nxt.made.parent or '')[:12]} to hold it: its heartbeat ref goes stale and another host takes it over")
    return False


def _forget(f: Fleet) -> None:
    """The claims held are no longer this tick's to push: the pending file keeps them for the next sync."""
    f.task, f.claims, f.queued = "", {}, []


@dataclass(frozen=True)
class Claim:
    """A claim commit made on HEAD but not HEAD yet, nor pushed: its tasks, each with its claim
    ref's value as seen ('' when none), the commit (its sha and the HEAD it was made on) and the
    heartbeat commit their refs get."""

    tasks: tuple[tuple[str, str], ...]
    made: gitops.MadeCommit
    beat: str


def _chain_claim(ctx: TickContext, seen: dict[str, Beat], head: str | None, room: int = 1) -> Claim | None:
    """The claim of the next task, made on the result just integrated onto the remote's branch
    (HEAD, commit ``head``), to go in the result's push; None when there is none to chain: the
    plan is not ``tick_mode: auto``, nothing is pickable, or a claim of another host looks stale
    (the normal pick then takes it over)."""
    if not head:
        return None
    ident = gitops.identity_env(ctx.root, ctx.config.git_author)
    at = None
    if gitobjects.can_build(ident):
        at = gitobjects.read_at(ctx.root, head, [gitops.repo_path(ctx.root, PLAN)])
        found = at.files.get(gitops.repo_path(ctx.root, PLAN))
        data = found[2] if found else None
    else:
        data = gitops.show_file(ctx.root, head, PLAN)
    if data is None:
        return None
    try:
        plan = parse_plan_doc(decode(data, PLAN), PLAN)
    except (MementoError, ValueError):
        return None
    if plan.plan_errors or plan.meta.tick_mode != "auto" or stale_claims(ctx, plan, seen):
        return None
    verdict = pick_verdict(plan, exclude=held_tasks(ctx, plan, head))  # as the result's history says
    if verdict.kind != TASK or verdict.task is None:
        return None
    _, task = _spread(ctx, plan, verdict.task, head)
    batch = [t for t in _batch(ctx, plan, task, room, head) if t.id not in fleet(ctx).claims]
    return _make_claim(ctx, task, seen, committed=(head, data), at=at, batch=batch) if batch and batch[0] is task \
        else None


def release_chained(ctx: TickContext) -> None:
    """Claims the tick stopped before attempting (SIGTERM, an error): their `[~]` put back to
    `[ ]` (no retry counted) and their heartbeat refs deleted, in one push that also carries the
    results of this host's not pushed yet."""
    f = ctx.fleet
    if f is None or not f.queued:
        return
    task_id = f.task = f.queued[0]
    publish(ctx, TaskResult(task_id, False, "released: the tick stopped before its attempt"))


def _never_attempted(ctx: TickContext, pending: dict[str, str], upstream: str | None) -> list[str]:
    """Of an earlier tick's claims, those it never attempted (a claim of two whose host was
    killed before the second): `[ ]` here, and no unpushed commit of this host's names them."""
    if upstream is None:
        return []
    plan = ctx.plan()
    said = [subject for _, subject in _subjects(ctx, upstream, "HEAD")]
    return [t for t in pending
            if (task := plan.task(t)) is not None and task.status == " "
            and not any(re.search(rf"(?<![\w-]){re.escape(t)}(?![\w-])", s) for s in said)]


def _release_commits(ctx: TickContext, task_ids: list[str]) -> None:
    """A commit ``memento: release <ID> …`` for each claimed task never attempted, so that every
    claim in the history has its answer. The work tree's plan has them `[ ]` (a claim commit's
    `[~]` never reaches it): the first commit carries that plan; when a result commit carried
    it already, the commit changes nothing but says so."""
    for task_id in task_ids:
        message = f"memento: release {task_id} (the tick stopped before its attempt)"
        try:
            gitops.commit_paths(ctx.root, [PLAN], message, author=ctx.config.git_author)
        except MementoError:  # nothing left to change: an empty commit of HEAD's tree
            base = gitops.head(ctx.root)
            if base is None:
                continue
            env = gitops.git_env(gitops.identity_env(ctx.root, ctx.config.git_author))
            sha = gitops.run_git(ctx.root, ["commit-tree", f"{base}^{{tree}}", "-p", base, "-F", "-"],
                                 input=(message + "\n").encode(), env=env).stdout.decode().strip()
            gitops.adopt_commit(ctx.root, gitops.MadeCommit(sha, base, message, ()))


def _release_if_still_claimed(ctx: TickContext, task_id: str) -> None:
    """An attempt that never reached the plan (its claim step refused) leaves the task `[~]`
    only in the claim commit: put it back to `[ ]` (no retry) before the ref is dropped."""
    task = ctx.plan().task(task_id)
    if task is None or task.status != "~":
        return
    try:
        edit_plan(ctx.ws.plan_path, lambda e: e.set_status(task_id, " ", expect="~"))
    except EditConflict:
        pass


def finish(ctx: TickContext, outcome: Outcome) -> Outcome:
    """After the tick, a normal end or SIGTERM: Memento's documents committed and pushed, and a
    result an earlier push could not land pushed with its claim ref (a CI runner keeps nothing)."""
    if not enabled(ctx):
        return outcome
    try:
        release_chained(ctx)
    except (OSError, MementoError) as exc:
        cron_log(ctx.ws, f"a chained claim was not released: {exc}")
    try:
        if not _all_pushed(ctx):
            sync(ctx, take_over=False)
    except MementoError as exc:
        cron_log(ctx.ws, f"memento's documents were not pushed to {ctx.config.workers_remote}: {exc}")
    return outcome


def _all_pushed(ctx: TickContext) -> bool:
    """Memento's documents committed, and HEAD is the remote's branch as this host last pushed
    or fetched it, with no result waiting for its claim ref: nothing to push, so no fetch."""
    f = fleet(ctx)
    commit_own_docs(ctx)
    head = gitops.head(ctx.root)
    return head is not None and head == remote_head(ctx) and not f.claims and not read_pending_claims(ctx)


def sync_for_architect(ctx: TickContext) -> None:
    """`memento architect` with a remote: it reads the fleet's plan, not this clone's old one."""
    if not enabled(ctx):
        return
    try:
        sync(ctx)
    except MementoError as exc:
        cron_log(ctx.ws, f"the architect runs on this clone's plan: the remote {ctx.config.workers_remote!r} "
                         f"could not be used: {exc}")


def push_for_architect(ctx: TickContext) -> None:
    """The architect's commit pushed to the remote the way a tick's documents are (:func:`finish`)."""
    finish(ctx, Outcome(EXIT_OK, ""))


def _stopped(ctx: TickContext, message: str, *, afterwards: Callable, code: int = EXIT_ATTENTION) -> Outcome:
    if code != EXIT_OK:
        cron_log(ctx.ws, f"tick stopped: {message}")
    if ctx.results:
        return afterwards(ctx, code, message)
    ctx.state.save(ctx.ws)
    return Outcome(code, message)


def clean_leftovers(ctx: TickContext) -> None:
    """A rebase a killed tick left half done is aborted (its commits are still on the branch);
    a replayed one whose files lag behind HEAD is finished (:func:`_finish_move`)."""
    if not enabled(ctx):
        return
    _finish_move(ctx)
    for name in ("rebase-merge", "rebase-apply"):
        where = gitops.run_git(ctx.root, ["rev-parse", "--git-path", name], check=False).stdout.decode().strip()
        if where and (ctx.root / where).exists():
            _abort(ctx)
            cron_log(ctx.ws, "aborted a rebase a killed tick left half done")
            return


# ---------------------------------------------------------------- sync, claim, take over


def sync(ctx: TickContext, *, take_over: bool = True) -> None:
    """Local branch = the remote's, plus this host's unpushed commits rebased and pushed;
    then (``take_over``) stale claims of other hosts taken over."""
    f = fleet(ctx)
    for _ in range(MAX_RACES):
        commit_own_docs(ctx)
        fetch(ctx)
        upstream = remote_head(ctx)
        pending = _pending_claims(ctx, upstream)
        if pending:
            _release_commits(ctx, _never_attempted(ctx, pending, upstream))
        local = integrate(ctx, upstream)
        specs, leases = [f"HEAD:refs/heads/{f.branch}"], [_lease(f, upstream)]
        for task_id, ref in pending.items():  # results an earlier tick could not push: with their claim refs, or not at all
            specs.append(f":{CLAIMS}{task_id}")
            leases.append(f"{CLAIMS}{task_id}:{ref}")
        if local != upstream and not push(ctx, specs, leases):
            continue
        if pending and local != upstream:
            save_pending(ctx)
        if not take_over or take_over_stale(ctx, local):
            return
    raise MementoError(f"lost the race to the remote {MAX_RACES} times")


def claim(ctx: TickContext, task: Task, batch: list[Task] | None = None) -> bool:
    """A commit marking ``task`` `[~]` (its host named) and its heartbeat ref, pushed atomically
    with a lease on the branch's sha: True when this host won the task. ``batch`` (``task``
    first, :func:`_batch`): the same commit and push claim those too, each with its own ref;
    the tick attempts them after ``task`` (:func:`_take_chained`).

    The commit is made from the plan as committed (the work tree's plan keeps `[ ]`, so the
    attempt's own claim step marks it as without a remote) and HEAD moves to it.
    """
    f = fleet(ctx)
    made = _make_claim(ctx, task, _seen(ctx), batch=batch)
    if made is None:
        return False
    # HEAD moves to the claim commit only once its push has won: a lost race, a refusal or a push
    # without an answer (and the remote unreadable) leaves HEAD and the index as they were.
    specs, leases = [f"{made.made.sha}:refs/heads/{f.branch}"], [_lease(f, made.made.parent)]
    for task_id, old in made.tasks:
        specs.append(f"{made.beat}:{CLAIMS}{task_id}")
        leases.append(f"{CLAIMS}{task_id}:{old}")
    if not push(ctx, specs, leases):
        return False
    if not gitops.adopt_commit(ctx.root, made.made):
        raise MementoError(f"HEAD moved while the claim of {task.id} was pushed")
    _hold(ctx, [t for t, _ in made.tasks], made.beat)
    return True


def _make_claim(ctx: TickContext, task: Task, seen: dict[str, Beat],
                committed: tuple[str, bytes] | None = None, at: gitobjects.At | None = None,
                batch: list[Task] | None = None) -> Claim | None:
    """The claim commit on HEAD (from the plan as committed) and its heartbeat commit, not pushed;
    None when the committed plan does not have ``task`` as `[ ]`. ``committed``: HEAD and its
    plan's bytes, when the caller has just read them; ``at``: HEAD as gitobjects read it.
    ``batch`` (``task`` first): the tasks to claim; one no longer `[ ]` there is left out."""
    f = fleet(ctx)
    ident = gitops.identity_env(ctx.root, ctx.config.git_author)
    if at is not None or (committed is None and gitobjects.can_build(ident)):
        return _build_claim(ctx, batch or [task], seen, ident, at)
    old = seen.get(task.id)
    message = f"memento: claim {task.id} on {f.host}\n\n{_nonce()}\n"
    if committed is not None:
        base, data = committed
    else:
        base = gitops.head(ctx.root)
        data = gitops.show_file(ctx.root, base, PLAN) if base else None
    if base is None or data is None:
        raise MementoError(f"{PLAN} is not committed on {f.branch}")
    editor = PlanEditor(decode(data, PLAN), PLAN)
    try:
        editor.set_status(task.id, "~", expect=" ")
    except EditConflict:
        return None
    oid = gitops.run_git(ctx.root, ["hash-object", "-w", "--stdin"], input=editor.doc.encode()).stdout.decode().strip()
    beat = heartbeat_commit(ctx, task.id, f.host)
    made = gitops.make_commit(ctx.root, [], message, author=ctx.config.git_author, blobs={PLAN: ("100644", oid)})
    if made.parent != base:
        raise MementoError(f"HEAD moved while the claim of {task.id} was made")
    return Claim(((task.id, old.sha if old else ""),), made, beat)


def _build_claim(ctx: TickContext, tasks: list[Task], seen: dict[str, Beat], ident: dict[str, str],
                 at: gitobjects.At | None = None) -> Claim | None:
    """:func:`_make_claim` in two git commands (gitobjects): HEAD, its trees and its plan read in
    one (unless ``at`` holds them), the plan blob, trees, claim commit and heartbeat commit
    written in the other."""
    f = fleet(ctx)
    path = gitops.repo_path(ctx.root, PLAN)
    at = at or gitobjects.read_at(ctx.root, "HEAD", [path])
    found = at.files.get(path)
    if found is None:
        raise MementoError(f"{PLAN} is not committed on {f.branch}")
    editor = PlanEditor(decode(found[2], PLAN), PLAN)
    claimed = []
    for task in tasks:
        try:
            editor.set_status(task.id, "~", expect=" ")
        except EditConflict:
            if not claimed:
                return None  # the task picked is no longer free here
            continue
        claimed.append(task.id)
    message = "\n\n".join(f"memento: claim {t} on {f.host}" for t in claimed) + f"\n\n{_nonce()}\n"
    fmt = gitobjects.object_format(ctx.root)
    tree, objects = gitobjects.with_files(at, {path: (b"100644", editor.doc.encode())}, fmt)
    claim = gitobjects.commit_bytes(tree, [at.commit], message, ident)
    empty = gitobjects.object_id(fmt, "tree", b"")
    beat = gitobjects.commit_bytes(empty, [], _heartbeat_message(", ".join(claimed), f.host), ident)
    ids = gitobjects.write_objects(ctx.root, [*objects, ("tree", b""), ("commit", claim), ("commit", beat)])
    made = gitops.MadeCommit(ids[-2], at.commit, message.splitlines()[0], (PLAN,))
    olds = tuple((t, seen[t].sha if t in seen else "") for t in claimed)
    return Claim(olds, made, ids[-1])


def _hold(ctx: TickContext, tasks: list[str], beat: str, *, chained: bool = False) -> None:
    """This host won the claims of ``tasks`` with heartbeat ``beat``: kept (pending file) and
    beaten. The first is in hand: attempted now, or (``chained``, won with a result's push) by
    the next pick; the others are queued for the picks after it."""
    f = fleet(ctx)
    f.task, f.lost = tasks[0], ""
    f.claims.update({t: Held(beat) for t in tasks})
    f.queued = list(tasks) if chained else list(tasks[1:])
    save_pending(ctx)
    f.start_beating()


def take_over_stale(ctx: TickContext, upstream: str | None) -> bool:
    """Reset the `[~]` tasks of other hosts whose heartbeat ref is older than `stale_lock_timeout`
    (a retry counted); False when the push lost a race (fetch again)."""
    plan = ctx.plan()
    for task, beat, why in stale_claims(ctx, plan, _seen(ctx)):
        if not _take_over(ctx, plan, task, beat, why, upstream):
            return False
    return True


def stale_claims(ctx: TickContext, plan: Plan, seen: dict[str, Beat],
                 now: float | None = None) -> list[tuple[Task, Beat | None, str]]:
    """The `[~]` tasks of other hosts in ``plan`` whose heartbeat (``seen``, as fetched) is older
    than `stale_lock_timeout`, each with its Beat and why; reads only, pushes nothing."""
    now = _now() if now is None else now
    stale = []
    for task in plan.tasks:
        if task.status != "~" or _local(ctx, task.id):
            continue
        beat = seen.get(task.id)
        if beat is None:  # a reader may see the branch before the claim ref: the claim commit's time
            claimed = _claim_commit(ctx, task.id)
            if claimed is not None and now - claimed.at <= plan.meta.stale_lock_timeout:
                continue
        elif now - beat.at <= plan.meta.stale_lock_timeout:
            continue
        why = ("no heartbeat ref" if beat is None
               else f"the heartbeat ref of {beat.host} is {int(now - beat.at)}s old")
        stale.append((task, beat, why))
    return stale


def _claim_commit(ctx: TickContext, task_id: str) -> Beat | None:
    """The newest ``memento: claim <ID> on <host>`` commit on HEAD, as a Beat (its committer time)."""
    out = gitops.run_git(ctx.root, ["log", "-1", "--fixed-strings", f"--grep=memento: claim {task_id} on ",
                                    "--format=%H%x09%ct%x09%B", "HEAD"], check=False).stdout.decode("utf-8", "replace")
    parts = out.strip().split("\t", 2)
    if len(parts) != 3 or not parts[1].isdigit():
        return None
    # A claim of several tasks names the first in its subject and each other on a line of its own.
    line = next((line for line in parts[2].splitlines() if line.startswith(f"memento: claim {task_id} on ")), None)
    return Beat(parts[0], line.rsplit(" on ", 1)[-1].strip(), float(parts[1])) if line else None


def _take_over(ctx: TickContext, plan: Plan, task: Task, beat: Beat | None, why: str, upstream: str | None) -> bool:
    f = fleet(ctx)
    max_retries = plan.meta.max_retries
    retries = task.retries + 1
    new = "!" if retries >= max_retries else " "

    def apply(e):
        e.set_field(task.id, "retries", str(retries))
        e.set_status(task.id, new, expect="~")
        e.update_counters()

    try:
        edit_plan(ctx.ws.plan_path, apply)
    except EditConflict:
        return True
    said = f"{retries}/{max_retries}" + (" — blocked" if new == "!" else "")
    ctx.event(f"⚠️ STALE — Stale [~] detected on {task.id}, reset to [{new}]",
              [("Task", task.label), ("Reason", why), ("Claimed By", beat.host if beat else "(unknown)"),
               ("Retries", said)])
    message = f"memento: {task.id} taken over from {beat.host if beat else 'a lost claim'} (retry {said})"
    sha = ctx.commit([PLAN, STATUS], message)
    specs, leases = [f"HEAD:refs/heads/{f.branch}"], [_lease(f, upstream)]
    if beat is not None:
        specs.append(f":{CLAIMS}{task.id}")
        leases.append(f"{CLAIMS}{task.id}:{beat.sha}")
    if push(ctx, specs, leases):
        cron_log(ctx.ws, f"took over the stale claim of {task.id} ({why})")
        return True
    if sha and upstream:
        _move_back(ctx, sha, upstream, checkout=True)
    return False


# ---------------------------------------------------------------- results that cannot land


def _claim_lost(ctx: TickContext, result: TaskResult, upstream: str | None) -> TaskResult:
    """Another host took the claim over while this one ran: its result is set aside, never pushed."""
    f = ctx.fleet
    saved = _set_aside(ctx, result.task_id, upstream)
    # The claim's other tasks done here before this one (neither queued nor in hand): set aside too.
    others = [t for t in f.claims if t not in f.queued and t not in (f.task, result.task_id)]
    reason = (f"claim lost: {f.lost}; the result was set aside in {saved}"
              + (f", with the results of {', '.join(others)} done here before it" if others else ""))
    ctx.event(f"⚠️ CLAIM LOST — {result.task_id} was taken over while it ran here", [("Reason", reason)])
    _forget(f)
    f.lost = ""
    save_pending(ctx)
    return TaskResult(result.task_id, False, reason, result.duration)


def _conflicted(ctx: TickContext, result: TaskResult, upstream: str | None, paths: list[str]) -> TaskResult:
    """The result conflicts with what landed on the remote meanwhile: a failed attempt naming the
    paths (a retry starts from the new HEAD); the work is saved under logs/rollback/."""
    saved = _set_aside(ctx, result.task_id, upstream)
    reason = (f"conflict with {ctx.config.workers_remote}/{fleet(ctx).branch} in {', '.join(paths)}; "
              f"the work was saved in {saved}")
    plan = ctx.plan()
    task = plan.task(result.task_id)
    if task is None:
        return TaskResult(result.task_id, False, reason, result.duration)
    retries = task.retries + 1
    blocked = retries >= plan.meta.max_retries

    others = [t for t in fleet(ctx).claims if t != task.id]  # their results were set aside too

    def apply(e):
        e.set_field(task.id, "retries", str(retries))
        e.set_status(task.id, "!" if blocked else " ", expect="~")
        for other in others:  # `[ ]` again, no retry: the push deletes their claim refs
            try:
                e.set_status(other, " ", expect="~")
            except EditConflict:
                pass
        e.update_counters()

    try:
        edit_plan(ctx.ws.plan_path, apply)
    except EditConflict:
        pass  # a person changed the task meanwhile; their edit stands
    status = "🚫 BLOCKED" if blocked else "❌ FAILED"
    ctx.entry([("Task", task.label), ("Status", f"{status} (retry {retries}/{plan.meta.max_retries})"),
               ("Reason", reason), ("Files Modified", "(set aside)"), ("Git Commit", "(none — conflict)")])
    ctx.commit([PLAN, STATUS], f"memento: {task.id} failed (retry {retries}/{plan.meta.max_retries}): conflict")
    return TaskResult(result.task_id, False, reason, result.duration, None, blocked)


def _set_aside(ctx: TickContext, task_id: str, upstream: str | None) -> str:
    """This host's unpushed commits as a patch under logs/rollback/, then the branch = the remote's."""
    dest = rollback_folder(ctx.ws, f"fleet-{task_id}")
    local = gitops.head(ctx.root)
    if upstream and local and local != upstream:
        patch = gitops.run_git(ctx.root, ["format-patch", "--stdout", f"{upstream}..{local}"], check=False).stdout
        atomic_write_bytes(dest / "unpushed.patch", patch)
    if upstream:
        gitops.run_git(ctx.root, ["reset", "-q", "--keep", upstream])
    return ctx.ws.rel(dest)


def _pending_path(ctx: TickContext):
    return ctx.ws.memento_dir / "fleet_pending.json"


def save_pending(ctx: TickContext) -> None:
    """The claims this host holds, whose results are not yet on the remote (each task and the
    claim ref this host last pushed for it; the claim in hand first as ``task``/``ref``), kept
    until the atomic push with those refs' leases lands; with none held the file goes."""
    f = fleet(ctx)
    path = _pending_path(ctx)
    if not f.claims:
        path.unlink(missing_ok=True)
        return
    first = f.task if f.task in f.claims else next(iter(f.claims))
    body = {"task": first, "ref": f.claims[first].ref, "claims": {t: held.ref for t, held in f.claims.items()}}
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, json.dumps(body).encode())


def _read_pending_file(ctx: TickContext) -> dict:
    try:
        data = json.loads(_pending_path(ctx).read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def read_pending(ctx: TickContext) -> tuple[str, str] | None:
    """The claim in hand as the pending file has it (task, ref), None when there is none."""
    data = _read_pending_file(ctx)
    task, ref = data.get("task"), data.get("ref")
    return (task, ref) if isinstance(task, str) and isinstance(ref, str) and task and ref else None


def read_pending_claims(ctx: TickContext) -> dict[str, str]:
    """Every claim the pending file holds: task -> the ref this host last pushed for it."""
    data = _read_pending_file(ctx)
    claims = data.get("claims")
    if isinstance(claims, dict) and all(isinstance(k, str) and isinstance(v, str) and k and v
                                        for k, v in claims.items()):
        return dict(claims)
    first = read_pending(ctx)  # a file an older Memento wrote: one claim
    return {first[0]: first[1]} if first else {}


def _pending_claims(ctx: TickContext, upstream: str | None) -> dict[str, str]:
    """The claims an earlier tick's unpushed results depend on, when every one of their refs is
    still this host's; when another host took one over meanwhile, the local results are set
    aside (CLAIM LOST), never pushed."""
    pending = read_pending_claims(ctx)
    if not pending or (ctx.fleet is not None and ctx.fleet.claims):
        return {}
    seen = _seen(ctx)
    # A claim is still this host's when its ref is what this host last pushed and its heartbeat
    # names this host: a file naming another host's claim (an unconfined agent's, that claim's
    # sha copied from refs/memento/seen/) is a lost claim here, never a ref this host deletes.
    host = fleet(ctx).host
    nobody = Beat("", "", 0)
    lost = [t for t, ref in pending.items() if seen.get(t, nobody).sha != ref or seen.get(t, nobody).host != host]
    if not lost:
        return pending
    local = gitops.head(ctx.root)
    if local == upstream or _is_ancestor(ctx, local, upstream):
        save_pending(ctx)
        return {}
    task_id = lost[0]
    saved = _set_aside(ctx, task_id, upstream)
    reason = (f"claim lost: its claim ref {CLAIMS}{task_id} is gone or another host's (taken over as stale?) "
              f"before this host's result was pushed; the result was set aside in {saved}")
    ctx.event(f"⚠️ CLAIM LOST — {task_id} was taken over before its result was pushed from here", [("Reason", reason)])
    cron_log(ctx.ws, reason)
    save_pending(ctx)
    commit_own_docs(ctx)
    return {}


# ---------------------------------------------------------------- git


def fetch(ctx: TickContext) -> None:
    """The remote's branches and claim refs (``refs/memento/claims/*`` as ``refs/memento/seen/*``)."""
    f = fleet(ctx)
    f.fetched_at = _clock()
    proc = gitops.run_git(ctx.root, ["fetch", "-q", "--prune", "--no-tags", "--no-auto-maintenance", f.remote,
                                     f"+refs/heads/*:refs/remotes/{f.remote}/*", f"+{CLAIMS}*:{SEEN}*"], check=False)
    f.fetched = None
    if proc.returncode != 0:
        raise MementoError(f"git fetch {f.remote} failed: {proc.stderr.decode('utf-8', 'replace').strip()[-500:]}")


def remote_head(ctx: TickContext) -> str | None:
    """The remote's branch as this host last fetched or pushed it (None when it has none)."""
    return _fetched(ctx)[0]


def push(ctx: TickContext, specs: list[str], leases: list[str]) -> bool:
    """``git push --atomic`` with a lease per ref: True when it landed, False when a lease or a
    fast-forward check refused it (another host or a person got there first).

    :class:`PushRefused` when the remote itself refused it (``[remote rejected]``: a hook, a
    protected branch), with its own words; never taken for a lost race. A push that failed
    without an answer (the connection cut) is settled by reading the remote's refs: True when
    every ref is as pushed (it landed), else MementoError."""
    f = fleet(ctx)
    wanted = _wanted(ctx, specs)  # before the push: HEAD may move after it
    args = ["push", "--atomic", "--porcelain", "--no-verify", *(f"--force-with-lease={le}" for le in leases),
            f.remote, *specs]
    proc = gitops.run_git(ctx.root, args, check=False)
    f.fetched = None  # a push that landed moved the remote-tracking branch
    f.window = _clock() - f.fetched_at if f.fetched_at is not None else 0.0
    out = proc.stdout.decode("utf-8", "replace") + proc.stderr.decode("utf-8", "replace")
    if proc.returncode == 0:
        return _won(ctx, wanted)
    if re.search(r"^!\t.*\[remote rejected\]", out, re.M) and not _LOCK_RACE.search(out):
        said = _remote_words(out)
        _note_refusal(ctx, said)
        cron_log(ctx.ws, f"the remote {f.remote!r} refused the push of {', '.join(specs)}: {said}")
        raise PushRefused(f.remote, said)
    if re.search(r"^!\t|stale info|\[rejected\]|fetch first|non-fast-forward|atomic push failed", out, re.M):
        f.contended = True
        pause = _back_off(f, answers=any(spec.startswith(f":{CLAIMS}") for spec in specs))
        cron_log(ctx.ws, f"a push to {f.remote} lost a race (a lease or fast-forward check refused it): "
                         f"fetching again after a pause of {pause:.2f}s")
        _pause(pause)
        return False
    if landed(ctx, wanted):
        cron_log(ctx.ws, f"git push {f.remote} answered with an error but its refs landed: "
                         + " ".join(out.split())[-300:])
        return _won(ctx, wanted)
    raise MementoError(f"git push {f.remote} failed: {out.strip()[-500:]}")


def _won(ctx: TickContext, wanted: dict[str, str]) -> bool:
    """A push landed: no refusal to report. One that moved the branch ends the lost races in a
    row, and the contention (:func:`_batch`) unless it lost one first: once pushes land at their
    first try again (a fleet woken in the same minute has spread out; tasks that take minutes
    seldom meet), claims go back to one task. A heartbeat's push (claim refs only) says nothing
    of the branch."""
    f = fleet(ctx)
    _note_refusal(ctx, "")
    if f"refs/heads/{f.branch}" in wanted:
        f.contended, f.races = f.races > 0, 0
    return True


# Another push landed between the remote's check of this one and its ref update: a lost race,
# though git words it as the remote's refusal ("cannot lock ref 'refs/heads/main': is at … but
# expected …").
_LOCK_RACE = re.compile(r"cannot lock ref|is at [0-9a-f]+ but expected|reference already exists")
BACKOFF_SECONDS = float(os.environ.get("MEMENTO_REMOTE_BACKOFF_SECONDS", "0.5"))
BACKOFF_LIMIT = float(os.environ.get("MEMENTO_REMOTE_BACKOFF_LIMIT", "8"))  # the longest pause after lost races in a row
DOUBLINGS = 2  # a push that carries results: its ceiling doubles twice at most (four slots)
CLAIM_DOUBLINGS = 4  # a claim's: sixteen slots


def back_off_ceiling(races: int, window: float = 0.0, doublings: int = DOUBLINGS) -> float:
    """The longest pause after ``races`` lost races in a row: a slot, doubled at each further
    loss ``doublings`` times at most, at most BACKOFF_LIMIT. The slot is twice the ``window``
    the last push was open for (from its fetch to its end), at least BACKOFF_SECONDS: two hosts
    whose pauses end closer than a window apart race again, so the pauses must spread wider
    than windows are long (on a loaded machine or a slow link they are long). A push with
    results stops at four slots: a host that lost many races in a row with its work done is
    the one whose results have waited longest, and a ceiling grown to seconds made it draw a
    pause that outlasted the contention itself (a fleet's last host pausing 7 s alone, the
    others done: the run's tail). A claim spreads wider: a fleet woken in the same second
    has as many hosts claiming at once as it has hosts."""
    slot = max(BACKOFF_SECONDS, 2 * window)
    return min(slot * 2 ** min(max(races - 1, 0), doublings), BACKOFF_LIMIT)


def _back_off(f: Fleet, answers: bool = False) -> float:
    """After a lost race, a random pause whose ceiling doubles with each loss in a row (binary
    exponential back-off, as on a shared Ethernet): hosts that lost to the same push do not all
    fetch and push again at the same moment, and with many hosts pushing at once (a fleet woken
    by cron in the same minute) the pauses spread until about one pushes at a time. A push that
    lands starts the count again. ``answers``: the push carries results (it deletes claim refs):
    done work waits on it, so its ceiling stops at four slots (:func:`back_off_ceiling`); a
    claim's, which only starts work, may spread to sixteen. Returns the pause, in seconds, for
    the caller to take."""
    f.races += 1
    return _CHANCE.uniform(0, back_off_ceiling(f.races, f.window, DOUBLINGS if answers else CLAIM_DOUBLINGS))


# Seams of this module's own, so that a test moves the clock, reads the pauses or fixes the draw
# here alone: patching time.sleep itself would also turn every other thread's sleep (the record's
# beacon: `while True: time.sleep(1)`) into a busy loop.
_CHANCE = random.SystemRandom()


def _now() -> float:
    return time.time()


def _clock() -> float:
    return time.monotonic()


def _pause(seconds: float) -> None:
    time.sleep(seconds)


_FULL_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def _wanted(ctx: TickContext, specs: list[str]) -> dict[str, str]:
    """What each push spec asks the remote's ref to become: ref -> sha ('' for a deletion)."""
    wanted = {}
    for spec in specs:
        src, _, dst = spec.rpartition(":")
        if _FULL_SHA.fullmatch(src):  # a commit of this host's (a heartbeat): its own name
            wanted[dst] = src
            continue
        sha = gitops.run_git(ctx.root, ["rev-parse", "-q", "--verify", src + "^{object}"],
                             check=False).stdout.decode().strip() if src else ""
        wanted[dst] = sha
    return wanted


def landed(ctx: TickContext, wanted: dict[str, str]) -> bool:
    """The remote's refs are exactly ``wanted`` (read with `git ls-remote`); False when it cannot be read."""
    if not wanted or any(v is None for v in wanted.values()):
        return False
    proc = gitops.run_git(ctx.root, ["ls-remote", fleet(ctx).remote, *wanted], check=False)
    if proc.returncode != 0:
        return False
    there = {}
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        sha, _, name = line.partition("\t")
        there[name] = sha
    return all(there.get(ref, "") == sha for ref, sha in wanted.items())


def remote_ref(ctx: TickContext, ref: str) -> str | None:
    """The remote's ``ref`` as it is now (`git ls-remote`), '' when absent, None when unreadable."""
    proc = gitops.run_git(ctx.root, ["ls-remote", fleet(ctx).remote, ref], check=False)
    if proc.returncode != 0:
        return None
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        sha, _, name = line.partition("\t")
        if name == ref:
            return sha
    return ""


def _remote_words(out: str) -> str:
    """What the remote said when it refused: its `remote:` lines and git's reason."""
    said = [line[len("remote:"):].strip() for line in out.splitlines() if line.startswith("remote:")]
    said = [s for s in said if s]
    reasons = sorted(set(re.findall(r"\[remote rejected\] \(([^)]*)\)", out)))
    return "; ".join(said + [f"({r})" for r in reasons])[:500] or "[remote rejected]"


def _refused_path(ctx: TickContext):
    return ctx.ws.memento_dir / "fleet_refused.json"


def _note_refusal(ctx: TickContext, said: str) -> None:
    """The remote's last refusal, for `memento doctor` (read_refusal); '' once a push lands."""
    path = _refused_path(ctx)
    if not said:
        if path.exists():
            path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, json.dumps({"remote": fleet(ctx).remote, "said": said, "at": utc_stamp()}).encode())


def read_refusal(ws) -> dict | None:
    """The remote's last refusal of this host's push ({remote, said, at}), None when the last push landed."""
    try:
        data = json.loads((ws.memento_dir / "fleet_refused.json").read_text(encoding="utf-8"))
        return data if isinstance(data, dict) and data.get("said") else None
    except (OSError, ValueError):
        return None


def integrate(ctx: TickContext, upstream: str | None) -> str | None:
    """Bring HEAD onto ``upstream``: fast-forward, or rebase the local commits (FleetConflict).
    Returns the commit HEAD is then at."""
    local = gitops.head(ctx.root)
    if upstream is None or local == upstream:
        return local
    return _integrate(ctx, upstream, local, _merge_base(ctx, local, upstream))


def _integrate(ctx: TickContext, upstream: str, local: str | None, base: str | None) -> str | None:
    """:func:`integrate` once HEAD (``local``) and its merge base with ``upstream`` are known."""
    if base == upstream:  # nothing new on the remote
        return local
    if local is None or base == local:
        # No `maintenance run --auto` after it (a process more on every fast-forward): as the fetch.
        gitops.run_git(ctx.root, ["-c", "maintenance.auto=false", "merge", "-q", "--ff-only", upstream])
        return upstream
    moved = _replay(ctx, upstream, base, local) if base else None
    if moved is None:
        before = _subjects(ctx, upstream, local)
        rebase(ctx, upstream)
        after = {subject: sha for sha, subject in _subjects(ctx, upstream, "HEAD")}
        moved = {old: after[s] for old, s in before if s in after and after[s] != old}
    _after_replay(ctx, moved)
    return gitops.head(ctx.root)


def integrate_later(ctx: TickContext, upstream: str | None) -> tuple[str | None, Callable[[Callable[[], object]], None]]:
    """:func:`integrate` for a push that follows at once (:func:`publish`): the commit to push,
    and what to call after the push, landed or lost, with what must run once HEAD is there and
    before the documents are committed on top (the chained claim made on that commit held).
    When this host's commits must be replayed
    onto the remote's, they are made as objects only, and HEAD, the index and the files move
    to them after the push (:func:`_arrive`): the move and the documents' commit after it
    (five git commands or so) leave the window from the fetch to the end of the push, in which
    any other host's push that lands loses this one its race. Anything else (nothing to do, a
    fast-forward, a replay git must do) is integrated now, as before."""
    local = gitops.head(ctx.root)
    if upstream is None or local is None or local == upstream:
        return local, _at_once
    base = _merge_base(ctx, local, upstream)
    if base and base not in (local, upstream):
        notes = list(fleet(ctx).plan_notes)
        replayed = _replayed(ctx, upstream, base, local)
        if replayed is not None:
            return replayed[0], partial(_arrive, ctx, local, upstream, *replayed, notes)
    return _integrate(ctx, upstream, local, base), _at_once


def _nothing() -> None:
    pass


def _at_once(then: Callable[[], object]) -> None:
    then()


def _arrive(ctx: TickContext, local: str, upstream: str, tip: str, moved: dict[str, str], notes: list[str],
            then: Callable[[], object]) -> None:
    """HEAD from ``local`` to ``tip`` (this host's commits replayed onto ``upstream``), ``then()``,
    then what :func:`integrate` does after a replay (a status entry for the plan notes, the
    documents' commit: pushed by the next push). Files in the way (a person's edit since the
    tick began) leave HEAD where it was and integrate as :func:`integrate` would, git's rebase
    included; the replay's plan notes are then its own."""
    if not _move_head(ctx, local, tip, f"rebase (memento): onto {upstream}"):
        fleet(ctx).plan_notes[:] = notes
        try:
            integrate(ctx, tip)
        except MementoError as exc:
            cron_log(ctx.ws, f"the work tree could not follow the commits replayed onto {upstream[:12]}: {exc}")
        then()
        return
    held = then()
    _after_replay(ctx, moved, plan=not held)  # a held claim's `[~]` is not the work tree's yet: never undone


def _after_replay(ctx: TickContext, moved: dict[str, str], *, plan: bool = True) -> None:
    """What follows a replay or a rebase once HEAD is there: the status entries' commit ids
    follow their commits, the plan notes become an entry, and the documents are committed
    (``plan`` False: all but the plan, see :func:`commit_own_docs`)."""
    _fix_commit_shas(ctx, moved)
    _say_plan_notes(ctx)
    commit_own_docs(ctx, plan=plan)


def _replayed(ctx: TickContext, upstream: str, base: str, local: str) -> tuple[str, dict[str, str]] | None:
    """gitobjects.replay of this host's commits from ``base`` to ``local`` onto ``upstream``, with
    the resolvers of Memento's documents: (the new tip, old id -> new id), objects only; None
    when git's rebase must do it."""
    ident = gitops.identity_env(ctx.root, ctx.config.git_author)
    resolvers = {gitops.repo_path(ctx.root, path): partial(resolver, ctx)
                 for path, resolver in RESOLVERS.items() if path != NOTES_DOC}  # merge_notes writes the file
    return gitobjects.replay(ctx.root, upstream, base, local, ident, resolvers)


def _replay(ctx: TickContext, upstream: str, base: str, local: str) -> dict[str, str] | None:
    """What :func:`rebase` does, in a few git commands rather than a few dozen (the rebase is
    in the window between a fetch and a push, where each one started widens the race): the
    commits replayed in memory (gitobjects.replay: the plan, the status log and the state
    merged as the rebase's resolvers merge them), HEAD moved to them, then the index and the
    work tree (``read-tree -m -u``, which refuses to overwrite a change of the work tree's).
    Old id -> new id of the commits moved; None, nothing changed, when ``git rebase`` must do
    it (what the replay does not take on, or the work tree in the way)."""
    notes = list(fleet(ctx).plan_notes)
    replayed = _replayed(ctx, upstream, base, local)
    if replayed is not None and _move_head(ctx, local, replayed[0], f"rebase (memento): onto {upstream}"):
        return replayed[1]
    fleet(ctx).plan_notes[:] = notes  # the rebase merges them again
    return None


def _replay_path(ctx: TickContext):
    return ctx.ws.memento_dir / "fleet_replay.json"


def _move_head(ctx: TickContext, local: str, tip: str, why: str) -> bool:
    """HEAD from ``local`` to ``tip`` (compared), then the index and the files (``read-tree -m -u``,
    which refuses to overwrite a change of the work tree's); False, HEAD put back, when it did.
    A journal (.memento/fleet_replay.json) says what was under way until both are done: a tick
    killed between them leaves HEAD ahead of the files, and the next one finishes the move
    (:func:`_finish_move`)."""
    journal = _replay_path(ctx)
    journal.parent.mkdir(parents=True, exist_ok=True)
    # Not synced: it guards against a killed process, as the ref git moves next does (git
    # syncs no ref either), and a sync here would sit in the race's window.
    atomic_write_bytes(journal, json.dumps({"from": local, "to": tip}).encode(), sync=False)
    try:
        crash_point("replay:before-ref")
        if gitops.run_git(ctx.root, ["update-ref", "-m", why, "HEAD", tip, local], check=False).returncode != 0:
            return False
        crash_point("replay:before-files")
        if gitops.run_git(ctx.root, ["read-tree", "-m", "-u", local, tip], check=False).returncode != 0:
            gitops.run_git(ctx.root, ["update-ref", "-m", "rebase (memento): back", "HEAD", local, tip])
            return False
        return True
    finally:
        journal.unlink(missing_ok=True)


def _finish_move(ctx: TickContext) -> None:
    """A move of :func:`_move_head` a killed tick left half done: HEAD at the replayed commits, the
    index and the files still at the old ones (the read-tree never ran) get there; a move that
    never moved HEAD is dropped (its commits are objects no ref names)."""
    journal = _replay_path(ctx)
    try:
        move = json.loads(journal.read_bytes())
        local, tip = str(move["from"]), str(move["to"])
    except FileNotFoundError:
        return
    except (OSError, ValueError, KeyError, TypeError):
        journal.unlink(missing_ok=True)
        return
    if gitops.head(ctx.root) == tip:
        done = gitops.run_git(ctx.root, ["read-tree", "-m", "-u", local, tip], check=False).returncode == 0
        cron_log(ctx.ws, f"finished moving the files to {tip[:12]}, which a killed tick had left behind HEAD"
                 if done else f"HEAD is at {tip[:12]} but the files could not be moved there (`git status` shows "
                              "what differs): a killed tick left them half way")
    journal.unlink(missing_ok=True)


def _say_plan_notes(ctx: TickContext) -> None:
    """The plan edits of this host the rebase could not keep (the remote changed them too)."""
    f = fleet(ctx)
    if f.plan_notes:
        notes, f.plan_notes = f.plan_notes, []
        ctx.event(f"⚠️ PLAN MERGE — the remote's plan kept over {len(notes)} edit(s) made here",
                  [("Reason", "; ".join(notes))])


def rebase(ctx: TickContext, upstream: str) -> None:
    """``git rebase upstream``; conflicts in Memento's documents resolved (RESOLVERS), any other
    aborts the rebase and raises FleetConflict naming the paths."""
    env = gitops.git_env({"GIT_EDITOR": "true", **gitops.identity_env(ctx.root, ctx.config.git_author)})
    proc = gitops.run_git(ctx.root, ["rebase", "-q", upstream], env=env, check=False)
    for _ in range(1000):
        if proc.returncode == 0:
            return
        conflicted = _unmerged(ctx)
        if not conflicted:
            _abort(ctx)
            raise MementoError("git rebase failed: " + proc.stderr.decode("utf-8", "replace").strip()[-500:])
        foreign = [p for p, stages in conflicted.items() if not _resolve(ctx, p, stages)]
        if foreign:
            _abort(ctx)
            raise FleetConflict(foreign)
        gitops.run_git(ctx.root, ["add", "--", *conflicted])
        staged = gitops.run_git(ctx.root, ["diff", "--cached", "--quiet"], check=False).returncode != 0
        proc = gitops.run_git(ctx.root, ["rebase", "--continue" if staged else "--skip"], env=env, check=False)
    _abort(ctx)
    raise MementoError("git rebase did not finish")


def _abort(ctx: TickContext) -> None:
    gitops.run_git(ctx.root, ["rebase", "--abort"], check=False)


def _unmerged(ctx: TickContext) -> dict[str, dict[int, bytes]]:
    """The conflicted paths (from the top level, sorted), each with its stages' bytes (1 the
    base, 2 the upstream in a rebase, 3 this host's; a side that deleted the file has none),
    in two git commands whatever their number: ``ls-files -u``, then one ``cat-file --batch``."""
    out = gitops.run_git(ctx.root, ["ls-files", "-u", "-z", "--full-name"]).stdout
    entries = []
    for item in out.split(b"\0"):
        info, _, path = item.partition(b"\t")
        fields = info.split()
        if len(fields) == 3 and fields[2].isdigit():
            entries.append((path.decode("utf-8", "surrogateescape"), int(fields[2]), fields[0], fields[1]))
    # A submodule's stage is a commit of another repository, not a blob here: no bytes, so
    # no resolver takes it and the rebase stops naming it (FleetConflict).
    blobs = gitops.read_blobs(ctx.root, sorted({sha for _, _, mode, sha in entries if mode != b"160000"}))
    conflicted: dict[str, dict[int, bytes]] = {}
    for path, stage, _, sha in sorted(entries):
        stages = conflicted.setdefault(path, {})
        if sha in blobs:
            stages[stage] = blobs[sha]
    return conflicted


def _merge_base(ctx: TickContext, a: str | None, b: str) -> str | None:
    """The best common ancestor of ``a`` and ``b`` (None when they have none, or ``a`` is None)."""
    if not a:
        return None
    proc = gitops.run_git(ctx.root, ["merge-base", a, b], check=False)
    return proc.stdout.decode().strip() or None if proc.returncode == 0 else None


def _is_ancestor(ctx: TickContext, a: str | None, b: str | None) -> bool:
    if not a or not b:
        return False
    return gitops.run_git(ctx.root, ["merge-base", "--is-ancestor", a, b], check=False).returncode == 0


def _subjects(ctx: TickContext, upstream: str, tip: str | None) -> list[tuple[str, str]]:
    out = gitops.run_git(ctx.root, ["log", "--format=%H%x09%s", f"{upstream}..{tip}"], check=False).stdout.decode()
    return [tuple(line.split("\t", 1)) for line in out.splitlines() if "\t" in line]


def _branch(ctx: TickContext) -> str:
    proc = gitops.run_git(ctx.root, ["symbolic-ref", "-q", "--short", "HEAD"], check=False)
    name = proc.stdout.decode().strip()
    if proc.returncode != 0 or not name:
        raise MementoError("the work tree is not on a branch (detached HEAD): the fleet needs one")
    return name


def _lease(f: Fleet, expected: str | None) -> str:
    return f"refs/heads/{f.branch}:{expected or ''}"


def _move_back(ctx: TickContext, sha: str, base: str, *, checkout: bool = False) -> None:
    """Undo a local commit of Memento's that lost its race (HEAD from ``sha`` back to ``base``);
    ``checkout``: its paths in the work tree too (a claim's plan never reached the work tree)."""
    changed = gitops.run_git(ctx.root, ["diff", "--name-only", "-z", base, sha]).stdout.decode("utf-8", "surrogateescape")
    paths = [p for p in changed.split("\0") if p]
    if gitops.run_git(ctx.root, ["update-ref", "-m", "memento: lost the race", "HEAD", base, sha],
                      check=False).returncode != 0:
        return  # HEAD is no longer sha (update-ref compared): nothing of this commit's to undo
    if paths:
        gitops.run_git(ctx.root, ["reset", "-q", base, "--", *paths])
        if checkout:
            gitops.run_git(ctx.root, ["checkout", "-q", base, "--", *paths])


def heartbeat_commit(ctx: TickContext, task_id: str, host: str) -> str:
    """A commit (empty tree) whose committer time is the heartbeat and whose subject names the host."""
    tree = gitops.empty_tree(ctx.root)
    env = gitops.git_env(gitops.identity_env(ctx.root, ctx.config.git_author))
    body = _heartbeat_message(task_id, host).encode()
    return gitops.run_git(ctx.root, ["commit-tree", tree, "-F", "-"], input=body, env=env).stdout.decode().strip()


def _heartbeat_message(task_id: str, host: str) -> str:
    return f"memento: claim {task_id} on {host}\n\nheartbeat {utc_stamp()} {_nonce()}\n"


def _nonce() -> str:
    """Makes every claim and heartbeat commit unique: two hosts' identical commits would both
    "win" a push (the remote would already be up to date)."""
    return f"pid {os.getpid()} nonce {os.urandom(6).hex()}"


def _seen(ctx: TickContext) -> dict[str, Beat]:
    """The claim refs as last fetched: task id -> Beat."""
    return _fetched(ctx, branch=False)[1]


def _fetched(ctx: TickContext, *, branch: bool = True) -> tuple[str | None, dict[str, Beat]]:
    """What the last fetch brought: the remote's branch (:func:`remote_head`; None when not asked
    for or missing) and its claim refs (:func:`_seen`), read with one git command after each
    fetch or push and kept until the next (Fleet.fetched)."""
    f = fleet(ctx)
    if f.fetched is None:
        tracking = f.tracking
        out = gitops.run_git(ctx.root, ["for-each-ref", "--format=%(refname)%09%(objectname)%09%(committerdate:unix)"
                                        "%09%(contents:subject)", tracking, SEEN],
                             check=False).stdout.decode("utf-8", "replace")
        head, beats = None, {}
        for line in out.splitlines():
            parts = line.split("\t", 3)
            if len(parts) == 4 and parts[0] == tracking:
                head = parts[1]
            elif len(parts) == 4 and parts[0].startswith(SEEN) and parts[2].isdigit():
                host = parts[3].rsplit(" on ", 1)[-1] if " on " in parts[3] else "?"
                beats[parts[0][len(SEEN):]] = Beat(parts[1], host, float(parts[2]))
        f.fetched = (head, beats)
    head, beats = f.fetched
    return (head if branch else None), dict(beats)


def _local(ctx: TickContext, task_id: str) -> bool:
    return read_claim(ctx.ws, task_id) is not None or read_record(ctx.ws, task_id) is not None


def commit_own_docs(ctx: TickContext, *, plan: bool = True) -> None:
    """Memento's own documents as `memento: sync docs` (a rebase needs a clean tree); ``plan``
    False leaves the plan out (HEAD holds a claim the work tree's plan does not have yet).

    CURRENT_STATE.md alone is not worth a commit on every host's every tick (it is
    rewritten by each): put back as committed instead; the next tick writes it again.
    """
    _commit_acks(ctx)
    docs = gitops.changed_from_head(ctx.root, [d for d in OWN_DOCS if plan or d != PLAN])
    if docs == [STATE_DOC]:
        gitops.run_git(ctx.root, ["checkout", "-q", "HEAD", "--", STATE_DOC])
    elif docs:
        ctx.commit(docs, "memento: sync docs")


def _commit_acks(ctx: TickContext) -> None:
    """The verify changes a person acknowledged on this host (`memento architect --ack`), each
    in a commit of its own that says so, so every host releases the task (verify_changes.py).
    Made here, never by the command itself: a commit while a tick runs would move the refs its
    guards watch."""
    acked = verify_changes.unpublished(ctx.ws)
    if not acked:
        return
    ctx.event(f"👤 VERIFY CHECKED — {', '.join(c.task for c in acked)}",
              [("Verify", "; ".join(c.describe() for c in acked)),
               ("Action", "a person acknowledged the architect's change here; every host runs the task again")])
    if ctx.commit([STATUS], verify_changes.ack_message(acked), sha_in_entry=True):
        verify_changes.published(ctx.ws, acked)


# ---------------------------------------------------------------- resolving Memento's documents


def _resolve(ctx: TickContext, path: str, stages: dict[int, bytes]) -> bool:
    """Resolve a conflicted document in the work tree (the caller stages it): the remote's
    version with this host's edits re-applied. Not made durable: a rebase a crash interrupts
    is aborted by the next tick (:func:`clean_leftovers`), and this file with it."""
    resolver = RESOLVERS.get(path)
    if resolver is None:
        return False
    upstream, mine = stages.get(2), stages.get(3)  # in a rebase, :2 is the upstream
    if upstream is None or mine is None:
        return False
    try:
        data = resolver(ctx, stages.get(1, b""), upstream, mine)
    except (MementoError, ValueError):
        return False
    if data is None:
        return False
    atomic_write_bytes(ctx.root / path, data, sync=False)
    return True


def merge_plan(ctx, base: bytes, upstream: bytes, mine: bytes) -> bytes | None:
    """The remote's plan with this side's edits re-applied where the remote left them alone
    (plan_merge.merge_plan: status, retries, Meta, task definitions, added and removed tasks;
    when both changed one, the remote's stands, never a task done twice). What this side
    loses is kept in ``ctx.fleet.plan_notes`` for a status-log entry after the rebase."""
    notes: list[str] = []
    merged = plan_merge.merge_plan(base, upstream, mine, notes)
    if ctx is not None and notes:
        fleet(ctx).plan_notes.extend(notes)
    return merged


_ENTRY_START = re.compile(r"^##[ \t]+\[", re.M)


def _entries(data: bytes) -> list[str]:
    """The status log's entries as normalised text blocks (the header and separators dropped)."""
    text = data.decode("utf-8", "replace").replace("\r\n", "\n")
    starts = [m.start() for m in _ENTRY_START.finditer(text)]
    blocks = []
    for i, start in enumerate(starts):
        lines = text[start:starts[i + 1] if i + 1 < len(starts) else len(text)].split("\n")
        while lines and (not lines[-1].strip() or status_log.SEPARATOR_RE.match(lines[-1])):
            lines.pop()
        blocks.append("\n".join(lines) + "\n")
    return blocks


def merge_status(ctx, base: bytes, upstream: bytes, mine: bytes) -> bytes:
    """The remote's status log plus the entries this side appended (nothing lost, newest last)."""
    known = set(_entries(base)) | set(_entries(upstream))
    data = upstream
    for entry in (e for e in _entries(mine) if e not in known):
        data = status_log.with_entry(data, entry, ctx.ws.status_path)
    return data


def merge_notes(ctx, base: bytes, upstream: bytes, mine: bytes) -> bytes | None:
    """The remote's notes with the ones this side marked read marked read; None when this side
    added a note the remote does not have (a person's: resolve by hand)."""
    was = {n.key: n for n in notes.parse_notes_text(base.decode("utf-8", "replace"))}
    theirs = {n.key for n in notes.parse_notes_text(upstream.decode("utf-8", "replace"))}
    ours = notes.parse_notes_text(mine.decode("utf-8", "replace"))
    if any(n.key not in was and n.key not in theirs for n in ours):
        return None
    path = ctx.ws.notes_path
    atomic_write_bytes(path, upstream)
    notes.mark_read(path, [n.key for n in ours if n.read and n.key in was and not was[n.key].read])
    return path.read_bytes()


def merge_state(ctx, base: bytes, upstream: bytes, mine: bytes) -> bytes:
    """CURRENT_STATE.md is rewritten whole by every tick: the replayed (newer) one."""
    return mine


RESOLVERS = {PLAN: merge_plan, STATUS: merge_status, NOTES_DOC: merge_notes, STATE_DOC: merge_state}


_COMMIT_FIELD = re.compile(r"^(- \*\*Git Commit\*\*: `)([0-9a-f]{7,40})(`)", re.M)


def _fix_commit_shas(ctx: TickContext, moved: dict[str, str]) -> None:
    """A rebase gives commits new ids: the SUCCESS entries' Git Commit fields follow them."""
    path = ctx.ws.status_path
    if not moved or not path.is_file():
        return
    short = {old[:7]: new[:7] for old, new in moved.items()}
    text = path.read_text(encoding="utf-8")
    fixed = _COMMIT_FIELD.sub(lambda m: m.group(1) + short.get(m.group(2)[:7], m.group(2)) + m.group(3), text)
    if fixed != text:
        atomic_write_bytes(path, fixed.encode("utf-8"))
