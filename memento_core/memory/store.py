"""The memory store: memory/ as its own git repository, written one commit at a time (SPEC §9).

Every change goes through ``locked()``: one flock (``.memento/locks/memory.lock``,
never deleted) serialises writers across processes, files are replaced
atomically (temp file, fsync, rename), and each write is one commit made with
git/commit.py's plumbing (exact paths, no hooks, Memento's identity when there is no
other). Commits carry two trailers in their last paragraph:

    sources: T-101                 who the knowledge came from (source=human for a person)
    Memento-Memory: write          write | journal | gc | index | checkpoint | human | unattributed

A commit without ``Memento-Memory:`` was made by a person with plain git and
is shown as ``source=human`` by ``log`` and ``entry_history``.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path, PurePosixPath

from .. import owned
from ..errors import MementoError
from ..git.commit import commit_paths, identity_env
from ..git.commit_fast import commit_here
from ..git.repo import head as git_head
from ..git.run import HARDENING, git_binary, git_env, run_git
from ..git.state import clear_specials
from ..git.status import status
from ..lines import read_regular
from ..locks import atomic_write_text, file_lock, open_append
from ..runlog import parse_utc_stamp, utc_stamp
from ..workspace import Workspace
from .layout import ARCHIVE, GENERATED, LAYERS, PERSONA, SESSION_ARCHIVE
from .tree import render_index

TRAILER = "Memento-Memory"
GITATTRIBUTES = "* text=auto eol=lf\n"
LOCK_TIMEOUT = 120.0
UNATTRIBUTED_LOG = "memory_unattributed.jsonl"  # in .memento/, read by `memento doctor`
UNATTRIBUTED_WARN_DAYS = 7
STALE_INDEX_LOCK_SECONDS = 120


@dataclass(frozen=True)
class Commit:
    """A commit of memory/: who wrote it (the sources trailer) and what kind of write it was."""

    sha: str
    date: str
    subject: str
    source: str  # from the sources trailer; "source=human" for a person's hand commit
    kind: str  # the Memento-Memory trailer, "human" when absent


@dataclass(frozen=True)
class UnattributedWrite:
    """A write into memory/ that bypassed `memento memory write`, as its line in the ledger says."""

    at: str
    task: str
    commit: str
    paths: tuple[str, ...]


def memory_root(ws: Workspace) -> Path:
    return ws.memory_dir


def lock_path(ws: Workspace) -> Path:
    return ws.memory_lock_path


@contextmanager
def locked(ws: Workspace) -> Iterator[Path]:
    """Hold the memory write lock with the store existing; yields memory/."""
    with file_lock(lock_path(ws), timeout=LOCK_TIMEOUT):
        _clear_stale_index_lock(memory_root(ws))
        said = _clear_specials(memory_root(ws))
        if said:
            from ..runlog import cron_log

            cron_log(ws, f"memory/: {said}")
        yield ensure_store(ws)


def _clear_specials(root: Path) -> str:
    """Remove a FIFO, socket or device an agent left where git reads memory/'s refs and HEAD,
    before git opens it (it would wait for ever; a FIFO holds no bytes: nothing is lost); a HEAD
    removed so is written again as the branch main (git.state.clear_specials). What was removed,
    for cron.log ('' if none)."""
    dot_git = root / ".git"
    if dot_git.is_symlink() or not dot_git.is_dir():
        return ""
    return clear_specials(dot_git, dot_git, "ref: refs/heads/main")


def _clear_stale_index_lock(root: Path) -> None:
    """Remove an index.lock left by a killed git process.

    Only Memento (holding the memory lock) and a person's occasional git
    command use this small repository, and both finish in well under a
    second: a lock file minutes old belongs to a process that is gone.
    """
    lock = root / ".git" / "index.lock"
    try:
        age = time.time() - lock.stat().st_mtime
    except OSError:
        return
    if age > STALE_INDEX_LOCK_SECONDS:
        lock.unlink(missing_ok=True)


# --------------------------------------------------------------------------- git


def git(root: Path, *args: str, input: bytes | None = None, check: bool = True) -> str:
    """One git command in memory/, hardened as every other of Memento's (git/run.py: no hook, no
    fsmonitor, whatever memory/.git/config says: an unconfined agent can write there)."""
    try:
        proc = subprocess.run(
            [git_binary(), *HARDENING, "-C", str(root), *args], input=input,
            stdin=None if input is not None else subprocess.DEVNULL,
            capture_output=True, env=git_env(),
        )
    except OSError as exc:
        raise MementoError(f"could not run git: {exc}") from None
    if check and proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip() or f"exit code {proc.returncode}"
        raise MementoError(f"git {args[0]} failed in {root}: {err}")
    return proc.stdout.decode("utf-8", "replace")


def is_store(root: Path) -> bool:
    """memory/ is a repository of its own (not merely inside the project's)."""
    return (root / ".git").exists()


def ensure_store(ws: Workspace) -> Path:
    """Create memory/ as its own repository (branch main, LF forced) unless it is one.

    Call with the lock held (``locked`` does); ``memento init`` and the first
    write both come here, so an old workspace gets its store lazily.
    """
    root = memory_root(ws)
    if root.is_symlink() and not root.resolve().is_dir():
        raise MementoError(f"{root} is a symbolic link to a missing folder")
    fresh = not is_store(root)
    if fresh:
        root.mkdir(parents=True, exist_ok=True)
        git(root, "init", "-q", "-b", "main")
    for layer in LAYERS:
        (root / layer).mkdir(parents=True, exist_ok=True)
    if fresh or git_head(root) is None:
        if not (root / ".gitattributes").exists():
            atomic_write_text(root / ".gitattributes", GITATTRIBUTES)
        write_index(root)
        commit(root, [".gitattributes", GENERATED], "memory: create the store",
               source="memento", kind="index")
    return root


def commit(root: Path, paths: list[str], subject: str, *, source: str, kind: str,
           body: str = "", blobs: dict[str, tuple[str, str]] | None = None) -> str | None:
    """One commit of exactly ``paths`` (those in ``blobs`` as those blobs); None when they did not change."""
    subject = " ".join(subject.split()) or "memory write"
    message = subject + "\n\n" + (body.strip() + "\n\n" if body.strip() else "")
    message += f"sources: {source}\n{TRAILER}: {kind}\n"
    try:
        return commit_paths(root, paths, message, blobs=blobs, build=commit_here)
    except MementoError as exc:
        if "nothing to commit" in str(exc):
            return None
        raise


def write_index(root: Path) -> bool:
    """Regenerate MEMORY.md; True when it changed."""
    text = render_index(root)
    target = root / GENERATED
    try:
        if target.read_text(encoding="utf-8") == text:
            return False
    except OSError:
        pass
    atomic_write_text(target, text)
    return True


# --------------------------------------------------------------------------- path jail


def jail(ws: Workspace, rel: str, *, writing: bool = True) -> tuple[str, Path]:
    """``rel`` checked and normalised: (path relative to memory/, absolute path).

    Refused with a clear sentence: empty, absolute, ``..``, ``.git``, a
    symbolic link anywhere on the way or one resolving outside memory/, and,
    for writes, MEMORY.md (generated), PERSONA.md (people only), the archive
    and non-markdown files.
    """
    raw = (rel or "").strip()
    if not raw:
        raise MementoError("a memory path is required, e.g. knowledge/lessons/retry-flaky-tests.md")
    if "\0" in raw:
        raise MementoError("a memory path cannot contain a NUL character")
    if raw.startswith(("/", "\\", "~")) or Path(raw).is_absolute() or (len(raw) > 1 and raw[1] == ":"):
        raise MementoError(f"{raw}: absolute paths are refused; give a path inside memory/, "
                           "e.g. knowledge/lessons/x.md")
    parts = [p for p in PurePosixPath(raw.replace("\\", "/")).parts if p not in ("", ".")]
    if ".." in parts:
        raise MementoError(f"{raw}: '..' is refused; memory paths stay inside memory/")
    if not parts:
        raise MementoError(f"{raw}: not a file path inside memory/")
    if ".git" in parts:
        raise MementoError(f"{raw}: memory/.git is the store's own repository and is never written")
    norm = "/".join(parts)
    if writing:
        if norm.casefold() == GENERATED.casefold():
            raise MementoError("MEMORY.md is generated (`memento memory index`) and is never written directly")
        if norm.casefold() == PERSONA.casefold():
            raise MementoError("PERSONA.md is written only by people: edit it by hand and commit it in memory/")
        if parts[0] == ARCHIVE:
            raise MementoError(f"{raw}: .archive/ is written only by `memento memory gc`")
        if not norm.endswith(".md"):
            raise MementoError(f"{raw}: memory entries are markdown files; the path must end in .md")
    root = memory_root(ws)
    base = root.resolve()
    current = root
    for part in parts:
        current = current / part
        if current.is_symlink():
            target = current.resolve()
            where = "outside memory/" if base not in (target, *target.parents) else "inside memory/"
            raise MementoError(f"{raw}: {'/'.join(current.relative_to(root).parts)} is a symbolic link "
                               f"(to {where}); memory paths never go through links")
    resolved = (root / norm).resolve()
    if base not in resolved.parents:
        raise MementoError(f"{raw}: resolves outside memory/ and is refused")
    return norm, root / norm


# --------------------------------------------------------------------------- leftovers


def _active_task(ws: Workspace) -> str | None:
    task = os.environ.get("MEMENTO_TASK_ID", "").strip()
    if task:
        return task
    claims = sorted(ws.claims_dir.glob("*.json")) if ws.claims_dir.is_dir() else []
    return claims[0].stem if claims else None


def dirty(root: Path) -> list[str]:
    paths: set[str] = set()
    for e in status(root):
        paths.add(e.path)
        if e.orig:
            paths.add(e.orig)
    return sorted(paths)


def commit_leftovers(ws: Workspace, root: Path, task_id: str | None = None, *,
                     flush: bool = True) -> list[tuple[str, str]]:
    """Commit what reached memory/ without the tool; returns [(kind, sha)].

    The journal the tick wrote and has not committed yet (:func:`record_journal`) is Memento's:
    committed first when ``flush`` (before any other commit in memory/) or when it was changed
    since (the tick's version, then the change as the others below), else left waiting.
    checkpoint.py's session archive is Memento's own; anything else is an
    unattributed write when a task is running (or ``task_id`` is given), a
    person's edit otherwise.
    """
    paths = dirty(root)
    if not paths and not read_pending(ws):
        return []
    done: list[tuple[str, str]] = []
    waiting = _settle_journal(ws, root, paths, flush, done)
    paths = [p for p in paths if p not in waiting]
    if not paths:
        return done
    archive = [p for p in paths if p.startswith(SESSION_ARCHIVE + "/")]
    others = [p for p in paths if p not in archive]
    if archive:
        sha = commit(root, archive, f"checkpoint archive: {len(archive)} file(s)",
                     source="memento", kind="checkpoint")
        if sha:
            done.append(("checkpoint", sha))
    if not others:
        return done
    shown = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
    task = task_id or _active_task(ws)
    if task:
        sha = commit(root, others, f"unattributed write by {task}: {shown}", source=task, kind="unattributed",
                     body="Written into memory/ without `memento memory write` (no summary given).")
        if sha:
            _log_unattributed(ws, task, sha, others)
            done.append(("unattributed", sha))
    else:
        sha = commit(root, others, f"human edit: {shown}", source="source=human", kind="human")
        if sha:
            done.append(("human", sha))
    return done


# --------------------------------------------------------------------------- the journal's commits


JOURNAL_PENDING = "memory_journal.json"  # in .memento/: what the tick wrote into the journal, not committed yet
JOURNAL_BATCH = 12  # ticks whose journal sections wait for one commit (an hour at the default schedule)
JOURNAL_TEXT_MAX = 512 * 1024  # bytes of a page the record keeps (owned.py reads up to 4 MiB of it)


def pending_path(ws: Workspace) -> Path:
    return ws.project_memento_dir / JOURNAL_PENDING


def read_pending(ws: Workspace) -> dict:
    """``{"ticks": [[number, words]…], "files": {path: {"seen": [sha256…], "text": str}}}``: the
    ticks whose journal sections are not committed, and for each file the tick wrote (a journal
    page, MEMORY.md) every version it wrote since its last commit (their digests) and the last
    one itself; {} when there is none (or it cannot be read: then memory/ shows what it holds).
    During a tick it is first put back as Memento left it, if an agent changed it (owned.py)."""
    path = pending_path(ws)
    owned.settle(path)
    try:
        data = json.loads(read_regular(path).decode("utf-8"))
    except (OSError, ValueError):
        return {}
    if not (isinstance(data, dict) and isinstance(data.get("files"), dict) and isinstance(data.get("ticks"), list)):
        return {}
    return data


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _save_pending(ws: Workspace, pending: dict) -> None:
    """Through owned.py: an unconfined agent's change of it is found and put back (tick/own.py)."""
    path = pending_path(ws)
    if pending.get("files") or pending.get("ticks"):
        path.parent.mkdir(parents=True, exist_ok=True)
        owned.write(path, json.dumps(pending, ensure_ascii=False).encode("utf-8"))
    elif path.exists() or path.is_symlink():
        owned.remove(path)


def record_journal(ws: Workspace, root: Path, rel: str, text: str, tick: tuple[int | None, str]) -> None:
    """The tick's journal page ``rel`` written as ``text``, and MEMORY.md regenerated, without a
    commit of their own (SPEC §9: the journal is written by every tick; issue 42: a commit per
    tick cost five git processes). Each write is remembered before it is made (a kill between the
    two leaves a file holding a version already remembered); they are committed later with the
    ticks before them: when :data:`JOURNAL_BATCH` ticks wait, when they span two journal pages,
    or before anything else is committed in memory/ (:func:`commit_leftovers`). Call with the
    memory lock held."""
    pending = read_pending(ws) or {"ticks": [], "files": {}}
    pending["ticks"].append(list(tick))

    def write(path: str, data: str) -> None:
        known = pending["files"].setdefault(path, {"seen": [], "text": ""})
        encoded = data.encode("utf-8")
        known["seen"] = [*known["seen"], _digest(encoded)]
        # The record stays far below what owned.py reads of a watched file; a bigger page is
        # committed right away below, so no one can change it before (nothing to keep then).
        known["text"] = data if len(encoded) <= JOURNAL_TEXT_MAX else None
        _save_pending(ws, pending)
        atomic_write_text(root / path, data)

    write(rel, text)
    index = render_index(root)  # after the page: a new day's page is listed in it
    try:
        same = (root / GENERATED).read_text(encoding="utf-8") == index
    except OSError:
        same = False
    if not same:
        write(GENERATED, index)
    pages = {path for path in pending["files"] if path != GENERATED}
    big = any(known["text"] is None for known in pending["files"].values())
    if len(pending["ticks"]) >= JOURNAL_BATCH or len(pages) > 1 or big:
        commit_leftovers(ws, root)


def _settle_journal(ws: Workspace, root: Path, dirty_paths: list[str], flush: bool,
                    done: list[tuple[str, str]]) -> set[str]:
    """The tick's uncommitted journal (:func:`record_journal`) among ``dirty_paths``: committed as
    the tick's ("journal") when ``flush`` or when a file was changed by someone else since (the
    tick's last version, then theirs is a leftover like any other); the paths still waiting."""
    pending = read_pending(ws)
    if not pending:
        return set()
    mine: list[str] = []
    changed: dict[str, tuple[str, str]] = {}
    for rel, known in pending["files"].items():
        if rel not in dirty_paths:
            continue  # committed already (a memory write took MEMORY.md with it), or never written
        try:
            now = _digest(read_regular(root / rel))
        except OSError:
            now = ""
        if now in known.get("seen", ()):
            mine.append(rel)
        elif known.get("text") is not None:
            oid = run_git(root, ["hash-object", "-w", "--no-filters", "--stdin"],
                          input=str(known.get("text", "")).encode("utf-8")).stdout.decode().strip()
            changed[rel] = ("100644", oid)
    if not flush and not changed:
        return set(mine)
    ticks = [t for t in pending["ticks"] if isinstance(t, list) and len(t) == 2]
    sha = None
    if mine or changed:
        numbers = [t[0] for t in ticks if t[0] is not None]
        first, last = (numbers[0], numbers[-1]) if numbers else (None, None)
        subject = (f"journal: tick #{first} — {ticks[0][1]}" if len(ticks) == 1 else
                   f"journal: ticks #{first}–#{last} ({len(ticks)} ticks)")
        body = "\n".join(f"tick #{n} — {words}" for n, words in ticks) if len(ticks) > 1 else ""
        source = f"tick-{first}" if first == last else f"tick-{first}..tick-{last}"
        sha = commit(root, sorted([*mine, *changed]), subject, source=source, kind="journal", body=body,
                     blobs=changed or None)
    _save_pending(ws, {"ticks": [], "files": {}})
    if sha:
        done.append(("journal", sha))
    return set(mine)


def _log_unattributed(ws: Workspace, task: str, sha: str, paths: list[str], *, forged: bool = False) -> None:
    record = {"at": utc_stamp(), "task": task,
              "commit": sha, "paths": paths}
    if forged:
        record["forged"] = True  # it said it was a person's: history() shows it as the task's
    ws.project_memento_dir.mkdir(parents=True, exist_ok=True)
    # Never through a link an agent put there (SPEC §13): a hard link is made a file of its own first.
    with open_append(ws.project_memento_dir / UNATTRIBUTED_LOG, split=True) as fh:
        fh.write(json.dumps(record, ensure_ascii=False) + "\n")


def unattributed_writes(ws: Workspace, *, days: int | None = UNATTRIBUTED_WARN_DAYS,
                        now: datetime | None = None) -> list[UnattributedWrite]:
    """Raw writes into memory/ the tick had to commit for a task (for `memento doctor`).

    Read from ``.memento/memory_unattributed.jsonl``; only those of the last
    ``days`` days (None: all). Unreadable lines are skipped.
    """
    try:
        lines = (ws.project_memento_dir / UNATTRIBUTED_LOG).read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    since = (now or datetime.now(UTC)) - timedelta(days=days) if days is not None else None
    out = []
    for line in lines:
        try:
            rec = json.loads(line)
            at = parse_utc_stamp(rec["at"])
        except (ValueError, KeyError, TypeError):
            continue
        if at is None:
            continue
        if since is None or at >= since:
            out.append(UnattributedWrite(rec["at"], str(rec.get("task", "")), str(rec.get("commit", "")),
                                         tuple(rec.get("paths") or ())))
    return out


# --------------------------------------------------------------------------- a person's commits


def is_person_source(source: str) -> bool:
    """``source=human`` (or ``human``): what a person's write says it is."""
    return source.strip().casefold() in ("source=human", "human")


def person_commits_since(ws: Workspace, since: str | None) -> list[tuple[str, list[tuple[str, str]]]]:
    """The commits of memory/ after ``since`` (None: all) that say they are a person's (no
    Memento trailer, kind ``human`` or source ``source=human``): [(sha, [(path, blob)…])], the
    files each one wrote (a removed file's blob is all zeros), MEMORY.md (generated) left out."""
    root = memory_root(ws)
    if not is_store(root):
        return []
    now = git_head(root)
    if now is None or now == since:
        return []  # nothing committed since (usually read from .git's files, no process)
    # HEAD's branch: what `memento memory log` shows. (Every ref would take a person's own side
    # branch, older than the snapshot but not below its commit, for a forgery.)
    span = f"{since}..HEAD" if since else "HEAD"
    found = []
    for record in git(root, "log", "-z", "--format=%H%x1f%B", span).split("\0"):
        sha, _, body = record.strip("\n").partition("\x1f")
        if not sha:
            continue
        kind, source = _trailers(body)
        if kind != "human" and not is_person_source(source):
            continue
        files = []
        for line in git(root, "diff-tree", "--no-commit-id", "-r", "--root", "--no-renames", sha).splitlines():
            meta, _, path = line.partition("\t")
            parts = meta.split()
            if len(parts) >= 4 and path != GENERATED:
                files.append((path, parts[3]))
        found.append((sha, files))
    return found


def reject_forged(ws: Workspace, since: str | None, forged: dict[str, list[str]], task: str) -> dict[str, str]:
    """Take the commits ``forged`` (sha -> the paths each wrote), made in memory/ after ``since``
    saying they were a person's, out of its history (SPEC §13): HEAD's branch is made again from
    ``since``, each forged commit replaced by the task's unattributed write of the same tree
    (Memento's identity and trailer: what was written stays, the claim of a person goes), every
    other commit made again as it was (message, author, dates); any other ref that holds a
    forged commit (a branch or tag the agent made) is deleted; the reflog entries no ref reaches
    any more are expired and the unreachable objects pruned, so neither `git log --all`, the
    reflog nor `git cat-file` finds a forged commit. Each replacement is recorded for `memento
    doctor`, and earlier records of commits made again name their new ids. Returns old -> new."""
    root = memory_root(ws)
    made: dict[str, str] = {}
    with file_lock(lock_path(ws), timeout=LOCK_TIMEOUT):
        branch = git(root, "symbolic-ref", "-q", "HEAD", check=False).strip()
        head = git_head(root)
        if branch and head:
            tip = since
            for sha in git(root, "rev-list", "--reverse", "--topo-order", head, *(["--not", since] if since else [])
                           ).split():
                tip = made[sha] = _remake(root, sha, tip, task, forged.get(sha))
            if tip and tip != head:
                git(root, "update-ref", "-m", "memento: commits that said they were a person's taken out",
                    branch, tip, head)
        for sha in forged:
            for ref in git(root, "for-each-ref", "--format=%(refname)", "--contains", sha, check=False).split():
                if ref != branch:
                    git(root, "update-ref", "-d", ref, check=False)
        git(root, "reflog", "expire", "--expire-unreachable=now", "--all", check=False)
        git(root, "prune", "--expire=now", check=False)
    _remap_unattributed(ws, made)
    for sha, paths in forged.items():
        if sha in made:
            _log_unattributed(ws, task, made[sha], paths)
    return made


def _remake(root: Path, sha: str, parent: str | None, task: str, forged_paths: list[str] | None) -> str:
    """``sha``'s tree committed again on ``parent``: as it was, or (``forged_paths``) as the task's
    unattributed write."""
    tree = git(root, "rev-parse", f"{sha}^{{tree}}").strip()
    env = git_env()
    if forged_paths is not None:
        shown = ", ".join(forged_paths[:5]) + (f" and {len(forged_paths) - 5} more" if len(forged_paths) > 5 else "")
        message = (f"unattributed write by {task}: {shown or 'no files'}\n\nCommitted into memory/ during the task's "
                   "run as a person's commit, which no person announced: taken out of the history, its files kept "
                   f"as the task's.\n\nsources: {task}\n{TRAILER}: unattributed\n").encode()
        env.update(identity_env(root))
    else:
        raw = subprocess.run([git_binary(), "-C", str(root), "cat-file", "commit", sha], capture_output=True,
                             env=env, check=True).stdout
        message = raw.partition(b"\n\n")[2]
        who = git(root, "log", "-1", "--date=raw", "--format=%an%x00%ae%x00%ad%x00%cn%x00%ce%x00%cd", sha)
        keys = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_NAME",
                "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE")
        env.update(zip(keys, who.rstrip("\n").split("\0"), strict=False))
    args = ["commit-tree", tree, *(["-p", parent] if parent else [])]
    done = subprocess.run([git_binary(), "-C", str(root), *args], input=message, capture_output=True,
                          env=env)
    if done.returncode != 0:
        raise MementoError(f"git commit-tree failed in {root}: {done.stderr.decode('utf-8', 'replace').strip()}")
    return done.stdout.decode("ascii").strip()


def _remap_unattributed(ws: Workspace, made: dict[str, str]) -> None:
    """Records of commits made again (:func:`reject_forged`) name their new ids."""
    path = ws.project_memento_dir / UNATTRIBUTED_LOG
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return
    out, changed = [], False
    for line in lines:
        try:
            rec = json.loads(line)
        except ValueError:
            out.append(line)
            continue
        if isinstance(rec, dict) and rec.get("commit") in made:
            rec["commit"], changed = made[rec["commit"]], True
            line = json.dumps(rec, ensure_ascii=False)
        out.append(line)
    if changed:
        atomic_write_text(path, "".join(ln + "\n" for ln in out))


def record_forged(ws: Workspace, task: str, sha: str, paths: list[str]) -> None:
    """The commit ``sha`` said it was a person's and no person announced it (SPEC §13): the
    task's unattributed write, for `memento doctor` and :func:`history`; recorded once."""
    if sha not in _forged(ws):
        _log_unattributed(ws, task, sha, paths, forged=True)


def _forged(ws: Workspace) -> dict[str, str]:
    """sha -> task of the commits :func:`record_forged` recorded."""
    try:
        lines = (ws.project_memento_dir / UNATTRIBUTED_LOG).read_text(encoding="utf-8").splitlines()
    except OSError:
        return {}
    out = {}
    for line in lines:
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and rec.get("forged") and isinstance(rec.get("commit"), str):
            out[rec["commit"]] = str(rec.get("task", ""))
    return out


def _trailers(body: str) -> tuple[str, str]:
    """(kind, source) of a memory commit's message: ("human", "source=human") without the trailer."""
    trailers = {}
    for line in body.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() in ("sources", TRAILER):
            trailers[key.strip()] = value.strip()
    if TRAILER not in trailers:
        return "human", "source=human"
    return trailers[TRAILER], trailers.get("sources", "")


# --------------------------------------------------------------------------- history


def history(ws: Workspace, path: str | None = None, n: int = 50) -> list[Commit]:
    """Commits of memory/ (or of one path), newest first; [] without a store."""
    root = memory_root(ws)
    if not is_store(root) or git_head(root) is None:
        return []
    args = ["log", f"-n{max(n, 1)}", "-z", "--format=%H%x1f%cI%x1f%s%x1f%B"]
    if path:
        args += ["--follow", "--", path]
    out: list[Commit] = []
    forged = _forged(ws)  # commits that said they were a person's during a task's run
    for record in git(root, *args).split("\0"):
        fields = record.strip("\n").split("\x1f")
        if len(fields) < 4:
            continue
        sha, date, subject, body = fields[0], fields[1], fields[2], fields[3]
        kind, source = ("unattributed", forged[sha]) if sha in forged else _trailers(body)
        out.append(Commit(sha, date, subject, source, kind))
    return out
