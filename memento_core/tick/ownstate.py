"""Memento's own state an unconfined agent could reach, snapshotted at the claim and restored
(SPEC §13): the usage ledger (`.memento/usage.json`), the notification state
(`.memento/notify.json`), the verify commands the architect changed that wait for a person
(`.memento/verify_changes.json`: only a person's receipted ack may shorten it), what the forge's
import wrote and the comments waiting for GitHub (`.memento/forge_import.json`,
`.memento/forge_comments.json`: a forged entry would post text on an issue with the person's
token; `.memento/forge_trouble.json`: removing it would hide a refused token from the person), the claims (`.memento/claims/`) and the workers' open questions (`.memento/questions/`, SPEC §18).

Memento writes some of them while the agent runs (the heartbeat rewrites the claim, a parallel
worker records its usage), so the snapshot is kept per file by owned.py, which every writer of
them goes through: :func:`take` at the claim, :func:`reason` in the guards and at a failure.
An agent that reset today's spend, marked "blocked" as already told, or forged a claim finds
the file put back, and its attempt fails with a reason naming the file; what it wrote is kept
under ``logs/rollback/<stamp>-<task>-state/``. (`.memento/state.json` is the tick's own in
memory and written over at the end of the tick; people change it through `memento pause`.)

In a parallel phase the files are shared: a change is charged to every worker whose attempt was
under way between the last time the file was seen right and the moment it was found changed
(one of them made it; with a sandbox, none can).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from .. import owned, verify_changes
from ..agents.process import running_groups
from ..locks import atomic_write_bytes
from ..notify import notify_path
from ..spending import ledger_path
from ..workspace import Workspace

_SINCE: dict[tuple[str, str], float] = {}  # (project, task) -> when its attempt's snapshot was taken


def _main(ws: Workspace) -> Workspace:
    """The project's workspace (a parallel worker's is its worktree's: the state is the project's)."""
    main = getattr(ws, "main", None)
    return Workspace(main) if main else ws


def _watched(ws: Workspace) -> tuple[list[Path], list[Path]]:
    m = _main(ws)
    return [ledger_path(m), notify_path(m), verify_changes.path_of(m), m.memento_dir / "forge_import.json",
            m.memento_dir / "forge_comments.json", m.memento_dir / "forge_pulls.json",
            m.memento_dir / "forge_trouble.json"], [m.claims_dir, m.questions_dir]


def _acked_only(ws: Workspace) -> Callable[[bytes, bytes], bool]:
    """The list's change is a person's: entries only removed, each by an acknowledgement the
    running tick holds a receipt for (tick/receipts.py); an agent's own ack has none."""
    def same(before: bytes, after: bytes) -> bool:
        from .receipts import held

        was, now = set(verify_changes.decode(before)), set(verify_changes.decode(after))
        acked_was, acked_now = set(verify_changes.decode_acked(before)), set(verify_changes.decode_acked(after))
        acks = held(ws).acks
        return (now <= was and acked_was <= acked_now and acked_now - acked_was <= was - now
                and all(c.task in acks for c in was - now))

    return same


def _same_notify(before: bytes, after: bytes) -> bool:
    """What a notification depends on is the same: the states told and the messages pending
    (`memento notify test`, a person's, rewrites only the last send's time and error)."""
    a, b = (json.loads(x.decode("utf-8")) for x in (before, after))
    if not (isinstance(a, dict) and isinstance(b, dict)):
        return a == b
    return all(a.get(k) == b.get(k) for k in ("states", "pending"))


def take(ws: Workspace, task_id: str) -> None:
    """At the claim: what is there now is expected when no agent of this tick runs (else the
    files are put right first: another worker's agent runs, and its changes are its own)."""
    files, dirs = _watched(ws)
    with owned.LOCK:
        if running_groups():
            settle_all(ws)
        else:
            owned.baseline(files, dirs, same={str(notify_path(_main(ws))): _same_notify,
                                              str(verify_changes.path_of(_main(ws))): _acked_only(_main(ws))})
        _SINCE[(str(_main(ws).root), task_id)] = time.monotonic()


def settle_all(ws: Workspace) -> list[owned.Change]:
    """Every watched file and claim as Memento left it; the changes found."""
    files, dirs = _watched(ws)
    with owned.LOCK:
        found = [c for c in map(owned.settle, files) if c is not None]
        for d in dirs:
            found += owned.settle_dir(d)
        return found


def after_tick(ws: Workspace) -> None:
    """Once the tick's attempts are over, before the notifications are sent: the watched files as
    Memento left them (an attempt that ended without its guards looking, say). Only after a tick
    that ran an attempt: otherwise nothing here knows what is right."""
    root = str(_main(ws).root)
    ran = [key for key in _SINCE if key[0] == root]
    if ran:
        settle_all(ws)
    for key in ran:
        del _SINCE[key]


def reason(ws: Workspace, task_id: str, who: str = "the agent") -> str:
    """'' unless a watched file changed during this attempt: then the files were put back, and
    the reason names them (and where the agent's versions are kept)."""
    key = (str(_main(ws).root), task_id)
    if key not in _SINCE:
        return ""
    settle_all(ws)
    files, dirs = _watched(ws)
    found = owned.changes([*files, *dirs], _SINCE[key])
    if not found:
        return ""
    root = _main(ws).root
    rels = sorted({Path(c.path).relative_to(root).as_posix() for c in found})
    kept = _keep(_main(ws), task_id, found)
    where = f", the agent's versions in {kept}" if kept else ""
    return f"{who} changed Memento's own state: {', '.join(rels)} (restored{where})"


def with_reason(ws: Workspace, task_id: str, why: str) -> str:
    """A failure's reason, with the change of Memento's state said too (once)."""
    if "Memento's own state" in why:
        return why
    extra = reason(ws, task_id)
    return f"{why}; {extra}" if why and extra else why or extra


def _keep(ws: Workspace, task_id: str, found: list[owned.Change]) -> str:
    from .rollback import rollback_folder

    kept = [c for c in found if c.found is not None and c.found != owned.NOT_A_FILE]
    if not kept:
        return ""
    dest = rollback_folder(ws, f"{task_id}-state")
    for c in kept:
        rel = Path(c.path).relative_to(ws.root).as_posix()
        try:
            atomic_write_bytes(dest / rel.replace("/", "__"), c.found)
        except OSError:
            return ""
    return ws.rel(dest)
