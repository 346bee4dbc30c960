"""Where everything lives in a Memento project (SPEC §2); its own folders mended when an agent replaced one (SPEC §13)."""

from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from .errors import MementoError

PLAN_REL = "docs/MASTER_PLAN.md"
# Documents Memento itself writes; a person's edits to them are synced, never refused.
OWN_DOCS = ("docs/MASTER_PLAN.md", "docs/TICK_STATUS.md", "docs/HUMAN_NOTES.md",
            "docs/CURRENT_STATE.md", "docs/PROJECT_MAP.md", "memento.toml")
# Written during a task by Memento or by people through Memento: kept by a rollback.
KEPT_DOCS = ("docs/MASTER_PLAN.md", "docs/TICK_STATUS.md", "docs/HUMAN_NOTES.md", "docs/CURRENT_STATE.md")
# Memento's own files inside the work tree, named one by one (SPEC §2, §13): read-only to a
# sandboxed agent, never a task's change. A trailing / is a folder. Also Memento's: the
# ``.memento_*`` files at the root and the Meta ``status_archive_dir`` (own_file() takes it).
# Everything else in docs/ and scripts/ (a Sphinx docs/index.rst, scripts/build.sh) is the project's.
MEMENTO_FOLDERS = (".git/", ".memento/", "logs/", "memory/")
OWN_PROMPTS = ("scripts/tick_worker_system_prompt.md", "scripts/architect_system_prompt.md",
               "scripts/review_system_prompt.md", "scripts/plan_system_prompt.md")
MEMENTO_FILES = (*MEMENTO_FOLDERS, *OWN_DOCS, *OWN_PROMPTS)
OWN_PREFIX = ".memento_"


def own_file(rel: str, archive_dir: str | None = None) -> bool:
    """Whether the work-tree path ``rel`` (relative, / separated) is one of Memento's own files:
    a name of MEMENTO_FILES, inside one of its folders, a ``.memento_*`` file at the root, or
    inside the status archive folder ``archive_dir`` (relative to the root)."""
    rel = rel.strip("/")
    if rel.startswith("./"):
        rel = rel[2:]
    if rel.startswith(OWN_PREFIX) and "/" not in rel:
        return True
    folders = [f for f in MEMENTO_FILES if f.endswith("/")]
    if archive_dir and archive_dir.strip("/") not in ("", "."):
        folders.append(archive_dir.strip("/") + "/")
    return rel in MEMENTO_FILES or any(rel == f.rstrip("/") or rel.startswith(f) for f in folders)


ARCHIVE_DEFAULT = "logs/status_archive/"  # the Meta default of status_archive_dir
_NOT_AN_ARCHIVE = tuple(f.rstrip("/") for f in MEMENTO_FOLDERS if f != "logs/")  # .git, .memento, memory


def archive_dir_problem(value: str) -> str:
    """'' or why the Meta ``status_archive_dir`` ``value`` cannot be the status archive (SPEC §13,
    "Either way"): it must be a folder inside the project, relative to it, never .git/, .memento/
    or memory/. Read from the text alone; :func:`archive_dir_escape` follows the links."""
    from pathlib import PurePosixPath

    text = value.strip()
    if not text:
        return "is empty"
    if text.startswith(("/", "~", "\\")) or "\\" in text or (len(text) > 1 and text[1] == ":"):
        return f"`{text}` must be a folder inside the project, relative to it"
    parts = PurePosixPath(text).parts
    if ".." in parts:
        return f"`{text}` leads outside the project (`..`)"
    if parts and parts[0] in _NOT_AN_ARCHIVE:
        return f"`{text}` is inside {parts[0]}/, which is not the status archive's"
    return ""


def archive_dir_escape(root: Path, value: str) -> str:
    """'' or why ``root / value`` is no folder of the project once links are followed (a link in
    the way that leads outside it, or into .git/, .memento/ or memory/)."""
    import os

    problem = archive_dir_problem(value)
    if problem:
        return problem
    real_root = Path(os.path.realpath(root))
    real = Path(os.path.realpath(root / value.strip()))
    if real != real_root and real_root not in real.parents:
        return f"`{value.strip()}` leads outside the project through a symbolic link (to {real})"
    inside = real.relative_to(real_root).parts
    if inside and inside[0] in _NOT_AN_ARCHIVE:
        return f"`{value.strip()}` leads into {inside[0]}/ through a symbolic link"
    return ""


@dataclass(frozen=True)
class Workspace:
    """The paths of one project; constructing it touches no file."""

    root: Path

    @classmethod
    def find(cls, start: Path | str | None = None) -> Workspace:
        """The workspace containing ``start``: search upwards for docs/MASTER_PLAN.md."""
        here = Path(start or Path.cwd()).resolve()
        if not here.exists():
            # The same sentence from every entry point (memento, memento-tui, the tick).
            raise MementoError(f"{start}: no such directory")
        if here.is_file():
            here = here.parent
        for candidate in (here, *here.parents):
            if (candidate / PLAN_REL).exists():
                return cls(candidate)
        raise MementoError(
            f"no Memento workspace at or above {here} (no {PLAN_REL}); run `memento init` first"
        )

    @property
    def docs(self) -> Path:
        return self.root / "docs"

    @property
    def plan_path(self) -> Path:
        return self.root / PLAN_REL

    @property
    def map_path(self) -> Path:
        return self.docs / "PROJECT_MAP.md"

    @property
    def status_path(self) -> Path:
        return self.docs / "TICK_STATUS.md"

    @property
    def notes_path(self) -> Path:
        return self.docs / "HUMAN_NOTES.md"

    @property
    def checkpoint_path(self) -> Path:
        return self.docs / "CURRENT_STATE.md"

    @property
    def config_path(self) -> Path:
        return self.root / "memento.toml"

    @property
    def system_prompt_path(self) -> Path:
        return self.root / "scripts" / "tick_worker_system_prompt.md"

    @property
    def architect_prompt_path(self) -> Path:
        """The architect's system prompt (SPEC §16), made by `memento init`."""
        return self.root / "scripts" / "architect_system_prompt.md"

    @property
    def plan_prompt_path(self) -> Path:
        """The plan drafter's system prompt (SPEC §17), made by `memento init`."""
        return self.root / "scripts" / "plan_system_prompt.md"

    @property
    def memento_dir(self) -> Path:
        return self.root / ".memento"

    @property
    def project_memento_dir(self) -> Path:
        """The project's own `.memento/` for what is kept across tasks (the usage ledger, the
        unattributed memory writes): a parallel worker's worktree has the main project's here."""
        return self.memento_dir

    @property
    def tick_lock_path(self) -> Path:
        return self.memento_dir / "tick.lock"

    @property
    def state_path(self) -> Path:
        return self.memento_dir / "state.json"

    @property
    def claims_dir(self) -> Path:
        return self.memento_dir / "claims"

    @property
    def worker_dir(self) -> Path:
        """The worker's scratch folder: the one place under .memento/ it may write (SPEC §13)."""
        return self.memento_dir / "worker"

    @property
    def reviews_dir(self) -> Path:
        """The acceptance gate's findings, one file a task (tick/review.py; a worktree's are the project's)."""
        return self.memento_dir / "reviews"

    @property
    def notes_added_path(self) -> Path:
        """The keys of the notes people added through Memento (`memento note`), one a line."""
        return self.memento_dir / "notes_added"

    @property
    def tick_result_path(self) -> Path:
        return self.worker_dir / "tick_result.md"

    @property
    def question_path(self) -> Path:
        """Where the worker writes a question for a person instead of doing the task (SPEC §18)."""
        return self.worker_dir / "question.md"

    @property
    def questions_dir(self) -> Path:
        """The open questions as the worker wrote them, one ``T-ID.json`` a task (questions.py)."""
        return self.project_memento_dir / "questions"

    @property
    def logs_dir(self) -> Path:
        return self.root / "logs"

    @property
    def cron_log(self) -> Path:
        return self.logs_dir / "cron.log"

    @property
    def rollback_dir(self) -> Path:
        return self.logs_dir / "rollback"

    @property
    def memory_dir(self) -> Path:
        return self.root / "memory"

    @property
    def memory_lock_path(self) -> Path:
        """The lock every write into memory/ holds (memory/store.py)."""
        return self.memento_dir / "locks" / "memory.lock"

    @property
    def alert_path(self) -> Path:
        return self.root / ".memento_alert"

    @property
    def cleanignore_path(self) -> Path:
        return self.root / ".memento_cleanignore"

    def rel(self, path: Path) -> str:
        """``path`` relative to the root, with forward slashes, for messages."""
        try:
            return Path(path).resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return str(path)

# Memento's own folders are real folders before the tick writes into them (SPEC §13): an agent
# that replaces ``logs/`` or ``.memento/`` (or a folder below them) by a file or by a symbolic
# link would otherwise make every later tick fail on its first write (a crash loop: exit 2,
# the task left `[~]`) or write through the link into a person's files. mend_own_folders moves
# such an impostor aside (renamed, never followed nor deleted) and makes the folder again; it
# costs a few ``lstat`` calls when nothing is wrong, so the paused tick runs it too.
OWN_FOLDERS = (".memento", ".memento/claims", ".memento/records", "logs", "logs/rollback")


def mend_own_folders(root: Path) -> list[str]:
    """Move aside whatever stands where Memento's folders belong; the names it moved."""
    moved = []
    for rel in OWN_FOLDERS:
        path = Path(root) / rel
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            continue
        except OSError:
            continue
        if stat.S_ISDIR(mode):
            continue
        aside = path.with_name(f"{path.name}.not-a-folder-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}")
        try:
            os.rename(path, aside)
            path.mkdir()
        except OSError:
            continue
        moved.append(f"{rel} -> {aside.name}")
    return moved
