"""Memento's files protected by name, never a project folder (SPEC §2, §13), judged on disk and in git.

In the sandbox the project's own docs/index.rst and scripts/build.sh are the
project's: a task naming them in context_files changes them. Memento's own
files (the five documents, the prompts in scripts/, memento.toml, the
``.memento_*`` files, the status archive) and a person's untracked or ignored
files (``.env``, a ``.venv/``) stay what they were, whichever way a hostile
agent goes about replacing them: a write, a rename over, a link, removing and
recreating, renaming their folder aside, removing their folder. One it may
create where none was (a missing docs/PROJECT_MAP.md, a FIFO there) is a guard
failure and is removed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memento_core.plan.scan import parse_plan
from memento_core.tick.__main__ import run_tick
from tests.core.sandbox.test_sandbox import committed_blobs, needs_bwrap, sandboxed_ws

from .test_engine import agent, entries, git, plan_text

# Memento rewrites these during a tick: judged by content (no "pwned"), not by bytes.
DOCUMENTS = ("docs/MASTER_PLAN.md", "docs/TICK_STATUS.md", "docs/HUMAN_NOTES.md", "docs/CURRENT_STATE.md")
# Memento's files it does not write during a tick, and a person's: judged byte for byte.
KEPT = ("docs/PROJECT_MAP.md", "scripts/tick_worker_system_prompt.md", "scripts/architect_system_prompt.md",
        "scripts/review_system_prompt.md", "scripts/plan_system_prompt.md", "memento.toml", ".memento_cleanignore",
        ".memento_ignore",
        "docs/archive/2026-11.md", "guarded.txt", ".env", ".venv/pyvenv.cfg", "sub/.env", "notes-to-self.txt")
ARCHIVE_META = "- status_archive_dir: docs/archive/\n"


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


def project_ws(tmp_path: Path, command: str, *, context: str = "[hello.txt]", verify: str = "grep -q done hello.txt",
               extra_meta: str = ARCHIVE_META):
    """A confined workspace with a project's own docs/ and scripts/ files, a status archive in docs/,
    and a person's ignored .env, .venv/ and sub/.env and untracked notes-to-self.txt."""
    task = (f"- [ ] `T-1` Write hello\n  - verify: `{verify}`\n  - context_files: {context}\n"
            "  - guard_files: [guarded.txt]\n  - retries: 0\n")
    ws = sandboxed_ws(tmp_path, command, tasks=task, extra_meta=extra_meta)
    root = ws.root
    (root / "docs" / "index.rst").write_text("Project\n=======\n\nThe project's own Sphinx page.\n")
    (root / "scripts" / "build.sh").write_text("#!/bin/sh\necho build\n")
    (root / "scripts" / "build.sh").chmod(0o755)
    (root / "docs" / "archive").mkdir()
    (root / "docs" / "archive" / "2026-11.md").write_text("## [2026-11-01T00:00:00Z] Tick #1\n- **Task**: T-0\n")
    (root / "sub").mkdir()
    (root / "sub" / "code.py").write_text("VALUE = 1\n")
    with open(root / ".gitignore", "a", encoding="utf-8") as fh:
        fh.write(".env\n.venv/\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "the project's docs and scripts")
    (root / ".env").write_text("API_TOKEN=a-persons-secret\n")
    (root / "sub" / ".env").write_text("SUB_TOKEN=another-secret\n")
    (root / ".venv" / "bin").mkdir(parents=True)
    (root / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (root / ".venv" / "bin" / "python").write_text("#!/bin/sh\n")
    (root / "notes-to-self.txt").write_text("a person's untracked file\n")
    return ws


def contents(root: Path, rels) -> dict[str, tuple[bool, bytes | None]]:
    """Each path as (is a symbolic link, its bytes when a regular file)."""
    out = {}
    for rel in rels:
        path = root / rel
        out[rel] = (path.is_symlink(), path.read_bytes() if path.is_file() and not path.is_symlink() else None)
    return out


def no_pwned_anywhere(ws) -> None:
    for rel in DOCUMENTS:
        path = ws.root / rel
        assert not path.is_symlink() and b"pwned" not in path.read_bytes(), rel
    assert not any(b"pwned" in blob for blob in committed_blobs(ws.root))
    assert not list(ws.root.glob("**/*.aside")), "a folder was renamed aside"


# --------------------------------------------------------------------------- hostile agents


NESTED = [p for p in KEPT if "/" in p] + ["docs/MASTER_PLAN.md", "docs/TICK_STATUS.md", "docs/HUMAN_NOTES.md"]


@needs_bwrap
@pytest.mark.parametrize("how", ["write", "replace", "link", "recreate", "movedir"])
def test_a_hostile_agent_cannot_replace_mementos_files_nor_a_persons(tmp_path, how):
    targets = [*KEPT, *DOCUMENTS] if how != "movedir" else NESTED
    ws = project_ws(tmp_path, agent("swaps_protected.py", how, *targets))
    before = contents(ws.root, KEPT)
    project = contents(ws.root, ["docs/index.rst", "scripts/build.sh", "sub/code.py"])
    outcome = run_tick(ws.root)
    assert outcome.exit_code == 0, outcome.message
    (entry,) = entries(ws)
    log = (ws.root / entry.log_path).read_text()
    assert "DID" not in log, log
    assert entry.status == "SUCCESS", entry.field("Reason")
    assert contents(ws.root, KEPT) == before
    assert contents(ws.root, ["docs/index.rst", "scripts/build.sh", "sub/code.py"]) == project
    no_pwned_anywhere(ws)
    files = set(git(ws.root, "show", "--name-only", "--format=", "HEAD").split())
    assert "hello.txt" in files and files <= {"hello.txt", *DOCUMENTS}


@needs_bwrap
def test_removing_the_folders_of_mementos_files_leaves_them_and_the_rest_is_rolled_back(tmp_path):
    """`rm -rf docs` removes the project's docs/index.rst but not one of Memento's files (a mount
    point: EBUSY), nor sub/.env; the task fails (index.rst is outside its context_files) and the
    rollback brings the project's files back."""
    ws = project_ws(tmp_path, agent("swaps_protected.py", "rmtree", *NESTED))
    before = contents(ws.root, KEPT)
    project = contents(ws.root, ["docs/index.rst", "scripts/build.sh", "sub/code.py"])
    head = git(ws.root, "rev-parse", "HEAD").strip()
    assert run_tick(ws.root).exit_code == 0
    (entry,) = entries(ws)
    assert entry.status == "FAILED" and "outside context_files" in entry.field("Reason"), entry.field("Reason")
    assert contents(ws.root, KEPT) == before
    assert contents(ws.root, ["docs/index.rst", "scripts/build.sh", "sub/code.py"]) == project
    no_pwned_anywhere(ws)
    for sha in git(ws.root, "rev-list", f"{head}..HEAD").split():
        assert set(git(ws.root, "show", "--name-only", "--format=", sha).split()) <= set(DOCUMENTS)


MISSING = ["docs/PROJECT_MAP.md", "scripts/plan_system_prompt.md", ".memento_ignore", "docs/archive"]


@needs_bwrap
@pytest.mark.parametrize("how", ["write", "link", "fifo"])
def test_a_missing_memento_file_the_agent_makes_is_a_guard_failure_and_removed(tmp_path, how):
    """Where one of Memento's files is missing its folder is writable, so the agent can make it:
    a new file, a link or a FIFO (which would block Memento's next read forever). Even with
    context_files naming docs/* and scripts/*, that is refused, and the thing is removed."""
    targets = [*MISSING[:3], "docs/archive" if how == "fifo" else "docs/archive/forged.md"]
    ws = project_ws(tmp_path, agent("swaps_protected.py", how, *targets),
                    context="[hello.txt, docs/*, scripts/*, .memento_ignore, docs/archive/*]")
    for rel in ("docs/PROJECT_MAP.md", ".memento_ignore", "scripts/plan_system_prompt.md"):  # made by init
        (ws.root / rel).unlink()
    (ws.root / "docs" / "archive" / "2026-11.md").unlink()
    (ws.root / "docs" / "archive").rmdir()
    if how != "fifo":
        (ws.root / "docs" / "archive").mkdir()  # the folder is there, its files are Memento's
    git(ws.root, "add", "-A")
    git(ws.root, "commit", "-qm", "no map, no ignore file, an empty archive")
    head = git(ws.root, "rev-parse", "HEAD").strip()
    outcome = run_tick(ws.root)
    assert outcome.exit_code == 0, outcome.message
    (entry,) = entries(ws)
    assert entry.status == "FAILED", entry.field("Reason")
    assert "made Memento's own files" in entry.field("Reason"), entry.field("Reason")
    for rel in targets:
        assert not os.path.lexists(ws.root / rel), rel
    assert parse_plan(ws.plan_path).task("T-1").status == " "
    no_pwned_anywhere(ws)
    for sha in git(ws.root, "rev-list", f"{head}..HEAD").split():
        assert set(git(ws.root, "show", "--name-only", "--format=", sha).split()) <= set(DOCUMENTS)


# --------------------------------------------------------------------------- the honest agent


@needs_bwrap
def test_a_task_changes_the_projects_docs_and_scripts_in_the_sandbox(tmp_path):
    """The defect of issue 21: docs/ was read-only as a whole, so a task updating docs/index.rst
    failed in the sandbox. Now it edits it (by rename, as `sed -i` does) and scripts/build.sh."""
    ws = project_ws(tmp_path, agent("edits_project_docs.py"), context="[hello.txt, docs/index.rst, scripts/build.sh]",
                    verify="grep -q 'Usage' docs/index.rst && sh scripts/build.sh | grep -q build2")
    guarded = contents(ws.root, KEPT)
    outcome = run_tick(ws.root)
    assert outcome.exit_code == 0, outcome.message
    (entry,) = entries(ws)
    assert entry.status == "SUCCESS", entry.field("Reason")
    assert "Usage" in git(ws.root, "show", "HEAD:docs/index.rst")
    assert git(ws.root, "show", "HEAD:scripts/build.sh") == "#!/bin/sh\necho build2\n"
    assert git(ws.root, "ls-files", "-s", "scripts/build.sh").startswith("100755 ")
    files = set(git(ws.root, "show", "--name-only", "--format=", "HEAD").split())
    assert {"docs/index.rst", "scripts/build.sh", "hello.txt"} <= files <= {
        "docs/index.rst", "scripts/build.sh", "hello.txt", *DOCUMENTS}
    assert contents(ws.root, KEPT) == guarded
    assert git(ws.root, "status", "--porcelain", "--", "docs/index.rst", "scripts/build.sh", "hello.txt") == ""


# --------------------------------------------------------------------------- memento lint


def test_lint_warns_when_context_files_name_mementos_own_files(tmp_path):
    root = tmp_path / "proj"
    subprocess.run([sys.executable, "-m", "memento_core.cli.main", "init", str(root)], check=True,
                   capture_output=True)
    tasks = ("- [ ] `T-1` Document it\n  - verify: `true`\n"
             "  - context_files: [docs/index.rst, scripts/build.sh, docs/PROJECT_MAP.md]\n"
             "- [ ] `T-2` Tune it\n  - verify: `true`\n"
             "  - context_files: [memento.toml, scripts/tick_worker_system_prompt.md, docs/archive/old.md, "
             ".memento_ignore]\n"
             "- [ ] `T-3` Only the project's\n  - verify: `true`\n  - context_files: [docs/, scripts/*.sh]\n")
    (root / "docs" / "MASTER_PLAN.md").write_text(plan_text(tasks, extra_meta=ARCHIVE_META))
    proc = subprocess.run([sys.executable, "-m", "memento_core.cli.main", "lint", str(root)],
                          capture_output=True, text=True)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    plan = (root / "docs" / "MASTER_PLAN.md").read_text().splitlines()
    line = {name: next(i for i, text in enumerate(plan, 1) if name in text and "context_files" in text)
            for name in ("PROJECT_MAP", "memento.toml")}
    own = [text for text in out.splitlines() if "Memento's own" in text]
    assert len(own) == 2, out
    assert f"docs/MASTER_PLAN.md:{line['PROJECT_MAP']}" in own[0] and "T-1" in own[0]
    assert "docs/PROJECT_MAP.md" in own[0] and "index.rst" not in own[0] and "build.sh" not in own[0]
    assert f"docs/MASTER_PLAN.md:{line['memento.toml']}" in own[1] and "T-2" in own[1]
    for name in ("memento.toml", "scripts/tick_worker_system_prompt.md", "docs/archive/old.md", ".memento_ignore"):
        assert name in own[1]
    assert "T-3" not in "\n".join(own)


# --------------------------------------------------------------------------- a person's ignored folder


@pytest.mark.parametrize("mode", ["none", "bwrap"])
def test_a_task_that_unignores_a_persons_venv_and_fails_leaves_the_venv(tmp_path, mode):
    """A task drops `.venv/` from .gitignore (as jinja's move to uv did) and fails: the .venv it
    un-ignored is the person's, not something the agent made, so the rollback keeps it."""
    if mode == "bwrap":
        needs_bwrap(lambda: None)
    command = "sh -c 'sed -i /venv/d .gitignore && echo done > hello.txt'"
    ws = project_ws(tmp_path, command, context="[hello.txt, .gitignore]", verify="false")
    if mode == "none":
        ws.config_path.write_text(ws.config_path.read_text().replace('mode = "bwrap"', 'mode = "none"'))
        git(ws.root, "commit", "-qam", "unconfined")
    venv = contents(ws.root, [".venv/pyvenv.cfg", ".venv/bin/python"])
    assert run_tick(ws.root).exit_code == 0
    (entry,) = entries(ws)
    assert entry.status == "FAILED" and "verify failed" in entry.field("Reason"), entry.field("Reason")
    assert ".venv" not in entry.field("Reason")
    assert contents(ws.root, [".venv/pyvenv.cfg", ".venv/bin/python"]) == venv
    assert ".venv/" in (ws.root / ".gitignore").read_text()  # the task's own change was rolled back


def test_unconfined_a_memento_document_swapped_for_a_fifo_never_blocks_the_tick(tmp_path):
    """Without a sandbox the agent can rename a FIFO over HUMAN_NOTES.md and PROJECT_MAP.md: the
    tick never opens them to read (it would block forever), removes them and puts the documents
    back as they were; the attempt is a guard failure."""
    ws = project_ws(tmp_path, "sh -c 'mkfifo docs/m docs/n && mv docs/m docs/PROJECT_MAP.md && "
                              "mv docs/n docs/HUMAN_NOTES.md && echo done > hello.txt'")
    ws.config_path.write_text(ws.config_path.read_text().replace('mode = "bwrap"', 'mode = "none"'))
    git(ws.root, "commit", "-qam", "unconfined")
    before = contents(ws.root, ["docs/PROJECT_MAP.md", "docs/HUMAN_NOTES.md"])
    proc = subprocess.run([sys.executable, "-m", "memento_core.tick", "--project", str(ws.root)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (entry,) = entries(ws)
    assert entry.status == "FAILED", entry.field("Reason")
    assert "made Memento's own files" in entry.field("Reason"), entry.field("Reason")
    assert contents(ws.root, ["docs/PROJECT_MAP.md", "docs/HUMAN_NOTES.md"]) == before
    assert not (ws.root / "hello.txt").exists()
