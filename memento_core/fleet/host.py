"""This host in the fleet for one tick (SPEC §12 "Across machines"): the remote and branch,
the claims it holds, and what every module of the fleet shares (the refs' and documents'
names, :class:`FleetConflict`). :func:`fleet` makes the :class:`Fleet` of a tick once;
:func:`enabled` says whether there is a fleet at all (``[workers] remote``).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import MementoError
from ..git.run import run_git

if TYPE_CHECKING:
    from ..tick.context import TickContext


MAX_RACES = 8  # lost races (rejected pushes) in a row before the tick gives up until the next one
CLAIMS = "refs/memento/claims/"
SEEN = "refs/memento/seen/"  # the remote's claim refs as this host last fetched them
PLAN, STATUS, NOTES_DOC, STATE_DOC = ("docs/MASTER_PLAN.md", "docs/TICK_STATUS.md", "docs/HUMAN_NOTES.md",
                                      "docs/CURRENT_STATE.md")


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
        # The remote's branch and claim refs as the last fetch left them (:func:`remote._fetched`), read
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

    def stop_beating(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None


def enabled(ctx: TickContext) -> bool:
    return ctx.config is not None and bool(ctx.config.workers_remote)


def fleet(ctx: TickContext) -> Fleet:
    if ctx.fleet is None:
        ctx.fleet = Fleet(ctx)
    return ctx.fleet


def _forget(f: Fleet) -> None:
    """The claims held are no longer this tick's to push: the pending file keeps them for the next sync."""
    f.task, f.claims, f.queued = "", {}, []


def _branch(ctx: TickContext) -> str:
    proc = run_git(ctx.root, ["symbolic-ref", "-q", "--short", "HEAD"], check=False)
    if proc.returncode != 0:  # exit 0 always prints the branch's name (an unborn one's too)
        raise MementoError("the work tree is not on a branch (detached HEAD): the fleet needs one")
    return proc.stdout.decode().strip()
