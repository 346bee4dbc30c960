"""The git remote itself (SPEC §12 "Across machines"): fetch, the push, and what a push's
answer means.

:func:`fetch` brings the remote's branches and its claim refs (``refs/memento/claims/*``
as ``refs/memento/seen/*``); what it brought is read once (:func:`_fetched`). :func:`push` is
``git push --atomic`` with a ``--force-with-lease`` per ref, a compare-and-swap: False when
a lease or a fast-forward check refused it (a lost race: a random pause whose ceiling
doubles with each loss in a row, :func:`back_off_ceiling`); a push the remote itself
refuses (``! [remote rejected]``: a pre-receive hook, a protected branch) is no lost race:
:class:`PushRefused` carries the remote's own words, kept for `memento doctor`
(:func:`read_refusal`). A push whose answer never arrived (the connection cut after the
refs landed) is settled by reading the remote's refs (:func:`landed`) before anything is
declared lost.
"""

from __future__ import annotations

import json
import os
import random
import re
import time
from typing import TYPE_CHECKING

from ..errors import MementoError
from ..git.remote import remote_said
from ..git.run import run_git
from ..locks import atomic_write_bytes
from ..runlog import cron_log, utc_stamp
from .host import CLAIMS, SEEN, Beat, Fleet, fleet

if TYPE_CHECKING:
    from ..tick.context import TickContext


class PushRefused(MementoError):
    """The remote itself refused the push (a hook, a protected branch): no race was lost."""

    def __init__(self, remote: str, said: str):
        super().__init__(f"the remote {remote!r} refused the push: {said}")
        self.remote, self.said = remote, said


def fetch(ctx: TickContext) -> None:
    """The remote's branches and claim refs (``refs/memento/claims/*`` as ``refs/memento/seen/*``)."""
    f = fleet(ctx)
    f.fetched_at = _clock()
    proc = run_git(ctx.root, ["fetch", "-q", "--prune", "--no-tags", "--no-auto-maintenance", f.remote,
                              f"+refs/heads/*:refs/remotes/{f.remote}/*", f"+{CLAIMS}*:{SEEN}*"], check=False)
    f.fetched = None
    if proc.returncode != 0:
        raise MementoError(f"git fetch {f.remote} failed: {proc.stderr.decode('utf-8', 'replace').strip()[-500:]}")


def _fetched(ctx: TickContext) -> tuple[str | None, dict[str, Beat]]:
    """What the last fetch brought: the remote's branch (:func:`remote_head`; None when it has
    none) and its claim refs (:func:`_seen`), read with one git command after each
    fetch or push and kept until the next (Fleet.fetched)."""
    f = fleet(ctx)
    if f.fetched is None:
        tracking = f.tracking
        out = run_git(ctx.root, ["for-each-ref", "--format=%(refname)%09%(objectname)%09%(committerdate:unix)"
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
    return head, dict(beats)


def _seen(ctx: TickContext) -> dict[str, Beat]:
    """The claim refs as last fetched: task id -> Beat."""
    return _fetched(ctx)[1]


def remote_head(ctx: TickContext) -> str | None:
    """The remote's branch as this host last fetched or pushed it (None when it has none)."""
    return _fetched(ctx)[0]


def _lease(f: Fleet, expected: str | None) -> str:
    return f"refs/heads/{f.branch}:{expected or ''}"


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
    proc = run_git(ctx.root, args, check=False)
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
    row, and the contention (:func:`batch._batch`) unless it lost one first: once pushes land at their
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


def _back_off(f: Fleet, answers: bool) -> float:
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


# Seams of the fleet's own (batch.py draws and stale.py reads the clock through them), so that a
# test moves the clock, reads the pauses or fixes the draw here alone: patching time.sleep itself
# would also turn every other thread's sleep (the record's beacon: `while True: time.sleep(1)`)
# into a busy loop.
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
        sha = run_git(ctx.root, ["rev-parse", "-q", "--verify", src + "^{object}"],
                      check=False).stdout.decode().strip() if src else ""
        wanted[dst] = sha
    return wanted


def landed(ctx: TickContext, wanted: dict[str, str]) -> bool:
    """The remote's refs are exactly ``wanted`` (read with `git ls-remote`); False when it cannot be read."""
    if not wanted:
        return False
    proc = run_git(ctx.root, ["ls-remote", fleet(ctx).remote, *wanted], check=False)
    if proc.returncode != 0:
        return False
    there = {}
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        sha, _, name = line.partition("\t")
        there[name] = sha
    return all(there.get(ref, "") == sha for ref, sha in wanted.items())


def remote_ref(ctx: TickContext, ref: str) -> str | None:
    """The remote's ``ref`` as it is now (`git ls-remote`), '' when absent, None when unreadable."""
    proc = run_git(ctx.root, ["ls-remote", fleet(ctx).remote, ref], check=False)
    if proc.returncode != 0:
        return None
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        sha, _, name = line.partition("\t")
        if name == ref:
            return sha
    return ""


def _remote_words(out: str) -> str:
    """What the remote said when it refused: its `remote:` lines and git's reason."""
    return remote_said(out)[:500] or "[remote rejected]"


def _refused_path(ctx: TickContext):
    return ctx.ws.memento_dir / "fleet_refused.json"


def _note_refusal(ctx: TickContext, said: str) -> None:
    """The remote's last refusal, for `memento doctor` (read_refusal); '' once a push lands."""
    path = _refused_path(ctx)
    if not said:
        path.unlink(missing_ok=True)
        return
    atomic_write_bytes(path, json.dumps({"remote": fleet(ctx).remote, "said": said, "at": utc_stamp()}).encode())


def read_refusal(ws) -> dict | None:
    """The remote's last refusal of this host's push ({remote, said, at}), None when the last push landed."""
    try:
        data = json.loads((ws.memento_dir / "fleet_refused.json").read_text(encoding="utf-8"))
        return data if isinstance(data, dict) and data.get("said") else None
    except (OSError, ValueError):
        return None
