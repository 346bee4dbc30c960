"""workspace.py (SPEC §2, §13): the paths of a project and which of them are Memento's own — a
workspace found from any folder in it, Memento's files told from the project's, a status archive
folder that stays inside the project and out of .git/, .memento/ and memory/ (links followed), and
Memento's own folders mended when something else stands in their place."""

from __future__ import annotations

from pathlib import Path

import pytest

from memento_core.errors import MementoError
from memento_core.workspace import (
    OWN_FOLDERS,
    Workspace,
    archive_dir_escape,
    archive_dir_problem,
    mend_own_folders,
    own_file,
)


def test_a_workspace_is_found_from_any_folder_or_file_inside_it(tmp_path):
    (tmp_path / "proj" / "docs").mkdir(parents=True)
    (tmp_path / "proj" / "docs" / "MASTER_PLAN.md").write_text("# MASTER_PLAN: p\n")
    (tmp_path / "proj" / "src" / "deep").mkdir(parents=True)
    (tmp_path / "proj" / "src" / "a.py").write_text("")
    root = (tmp_path / "proj").resolve()
    assert Workspace.find(tmp_path / "proj" / "src" / "deep").root == root
    assert Workspace.find(tmp_path / "proj" / "src" / "a.py").root == root
    with pytest.raises(MementoError, match="no Memento workspace at or above .*; run `memento init` first"):
        Workspace.find(tmp_path)
    with pytest.raises(MementoError, match=r"/nowhere: no such directory$"):
        Workspace.find(tmp_path / "nowhere")


def test_paths_are_named_relative_to_the_root_or_left_whole():
    ws = Workspace(Path("/p/proj"))
    assert ws.rel(ws.plan_path) == "docs/MASTER_PLAN.md" and ws.rel(ws.tick_lock_path) == ".memento/tick.lock"
    assert ws.rel(ws.root / "a" / ".." / "b.txt") == "b.txt"
    assert ws.rel("/elsewhere/x") == "/elsewhere/x"
    assert ws.project_memento_dir == ws.memento_dir == ws.root / ".memento"


@pytest.mark.parametrize(("rel", "own"), [
    ("docs/MASTER_PLAN.md", True), ("./docs/TICK_STATUS.md", True), ("docs/CURRENT_STATE.md", True),
    ("scripts/tick_worker_system_prompt.md", True), (".memento_alert", True), (".memento_ignore", True),
    (".memento/state.json", True), (".memento", True), ("logs/", True), ("memory/journal/x.md", True),
    (".git/config", True), ("docs/README.md", False), ("src/.memento_x", False), ("logsbook.txt", False),
    ("memoryless.py", False), (".memento_folder/x", False), ("docs/PROJECT_MAP.md", True), ("memento.toml", True), ("scripts/build.sh", False),
])
def test_mementos_own_files_are_told_from_the_projects(rel, own):
    assert own_file(rel) is own


def test_the_status_archive_folder_is_memento_s_own_when_it_is_elsewhere():
    assert own_file("archive/status/2026.md", "archive/status/") and own_file("archive/status", "/archive/status")
    assert not own_file("archive/status/2026.md") and not own_file("archive/statusx.md", "archive/status")
    assert not own_file("src/a.py", ".") and not own_file(".", ".")  # the root is no archive folder


@pytest.mark.parametrize(("value", "words"), [
    ("", "is empty"), ("/var/archive", "must be a folder inside the project"),
    ("~/archive", "must be a folder inside the project"), ("C:/a", "must be a folder inside the project"),
    ("a\\b", "must be a folder inside the project"), ("logs/../../up", "leads outside the project (`..`)"),
    (".git/archive", "is inside .git/"), ("memory/old", "is inside memory/"), (".memento", "is inside .memento/"),
])
def test_an_archive_folder_outside_the_project_or_in_its_machinery_is_refused(value, words):
    assert words in archive_dir_problem(value)


def test_links_on_the_archive_folders_way_are_followed(tmp_path):
    root = tmp_path / "proj"
    (root / "logs").mkdir(parents=True)
    (root / ".memento").mkdir()
    assert archive_dir_problem("logs/status_archive/") == "" and archive_dir_escape(root, "logs/status_archive/") == ""
    (root / "out").symlink_to(tmp_path)
    assert archive_dir_escape(root, "out/archive").startswith("`out/archive` leads outside the project through a "
                                                              "symbolic link")
    (root / "inside").symlink_to(root / ".memento")
    assert archive_dir_escape(root, "inside/archive") == "`inside/archive` leads into .memento/ through a symbolic link"
    (root / "fine").symlink_to(root / "logs")
    assert archive_dir_escape(root, "fine/archive") == "" and archive_dir_escape(root, ".") == ""
    assert archive_dir_escape(root, "/abs") == archive_dir_problem("/abs") != ""


def test_whatever_stands_where_mementos_folders_belong_is_moved_aside_never_followed(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    assert mend_own_folders(root) == []  # nothing there: nothing to mend
    (root / ".memento").mkdir()
    (root / ".memento" / "claims").write_text("a file the agent put here\n")
    persons = tmp_path / "persons"
    persons.mkdir()
    (root / "logs").symlink_to(persons)
    moved = mend_own_folders(root)
    assert [m.split(" -> ")[0] for m in moved] == [".memento/claims", "logs"]
    assert (root / ".memento" / "claims").is_dir() and (root / "logs").is_dir() and not (root / "logs").is_symlink()
    aside = root / moved[1].split(" -> ")[1]
    assert aside.is_symlink() and aside.name.startswith("logs.not-a-folder-")
    assert list(persons.iterdir()) == []  # the link was moved, what it led to untouched
    claims_aside = root / ".memento" / moved[0].split(" -> ")[1]
    assert claims_aside.read_text() == "a file the agent put here\n"
    assert mend_own_folders(root) == [] and ".memento/records" in OWN_FOLDERS
