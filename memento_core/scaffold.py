"""`memento init`: lay out a workspace (SPEC §2). Idempotent; never overwrites a file."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path

from .config.write import DEFAULT_CONFIG_TOML
from .git.commit import commit_paths
from .git.repo import ensure_repo
from .locks import atomic_write_text
from .runlog import utc_stamp
from .workspace import Workspace

# (template file, destination relative to the root)
TEMPLATES = (
    ("MASTER_PLAN.md", "docs/MASTER_PLAN.md"),
    ("PROJECT_MAP.md", "docs/PROJECT_MAP.md"),
    ("TICK_STATUS.md", "docs/TICK_STATUS.md"),
    ("HUMAN_NOTES.md", "docs/HUMAN_NOTES.md"),
    ("CURRENT_STATE.md", "docs/CURRENT_STATE.md"),
    ("tick_worker_system_prompt.md", "scripts/tick_worker_system_prompt.md"),
    ("review_system_prompt.md", "scripts/review_system_prompt.md"),  # the acceptance gate (SPEC §16)
    ("architect_system_prompt.md", "scripts/architect_system_prompt.md"),
    ("plan_system_prompt.md", "scripts/plan_system_prompt.md"),  # `memento plan draft` (SPEC §17)
    ("memento_ignore.txt", ".memento_ignore"),
    ("memento_cleanignore.txt", ".memento_cleanignore"),
)
# Runtime files that must never reach the project's history.
GITIGNORE_LINES = ("logs/", ".memento/", "memory/", ".memento_alert", ".aider*", ".venv/")


@dataclass
class InitReport:
    root: Path
    created: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    made_repo: bool = False
    commit: str | None = None


def template(name: str) -> str:
    """The text of a bundled template."""
    return resources.files("memento_core").joinpath("templates", name).read_text(encoding="utf-8")


def fill(text: str, values: dict[str, str]) -> str:
    """Replace ``{key}`` placeholders; other braces (code, JSON) are left alone."""
    for key, value in values.items():
        text = text.replace("{" + key + "}", value)
    return text


def init_workspace(root: Path | str, *, project: str | None = None, now: datetime | None = None,
                   commit: bool = True) -> InitReport:
    """Create whatever of the layout is missing and commit what was created."""
    root = Path(root).resolve()
    root.mkdir(parents=True, exist_ok=True)
    ws = Workspace(root)
    report = InitReport(root)
    report.made_repo = ensure_repo(root)
    now = now or datetime.now(UTC)
    values = {
        "project": project or root.name,
        "date": now.strftime("%Y-%m-%d"),
        "now": utc_stamp(now),
    }
    files = [(rel, fill(template(name), values)) for name, rel in TEMPLATES]
    files.append(("memento.toml", DEFAULT_CONFIG_TOML))
    for rel, text in files:
        target = root / rel
        if target.exists():
            report.kept.append(rel)
            continue
        atomic_write_text(target, text)
        report.created.append(rel)
    if _ensure_gitignore(root / ".gitignore"):
        report.created.append(".gitignore")
    for directory in (ws.logs_dir, ws.claims_dir, ws.memento_dir / "locks"):
        directory.mkdir(parents=True, exist_ok=True)
    from .memory import init_store

    init_store(ws)  # memory/ is its own repository (SPEC §9), git-ignored by the project
    if commit and report.created:
        report.commit = commit_paths(root, report.created, "memento: init workspace")
    return report


def _ensure_gitignore(path: Path) -> bool:
    """Append the runtime paths missing from .gitignore; True when the file changed."""
    existing = path.read_text(encoding="utf-8") if path.exists() else ""
    have = {line.strip() for line in existing.splitlines()}
    missing = [line for line in GITIGNORE_LINES if line not in have and line.rstrip("/") not in have]
    if not missing:
        return False
    prefix = existing if not existing or existing.endswith("\n") else existing + "\n"
    block = "# Memento runtime state and the virtual environment (never committed)\n" + "\n".join(missing) + "\n"
    atomic_write_text(path, prefix + ("\n" if prefix else "") + block)
    return True
