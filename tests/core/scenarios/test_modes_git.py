"""Red team, both modes (SPEC §13 "Modes are git's"): no mode or extended attribute the agent set
outlives its attempt, passed or not, and a person's own stay.

The hostile agent (tests/agents/leaves_modes.py) does its task (src/calc.py gains a docstring, verify
passes) and leaves a set-uid copy of the shell in a set-gid folder, a sticky or world-writable
src/, a group-writable calc.py, POSIX ACLs granting the user nobody rwx, a file capability, user.*
attributes. Each test judges the files on disk (os.stat, os.listxattr), the commits and the entry.
"""

from __future__ import annotations

import os
import stat
import struct
from pathlib import Path

import pytest

from memento_core import status_log
from memento_core.tick.__main__ import run_tick
from tests.core.modes import MODES

from .test_engine import agent, git
from .test_ignored import GOOD, TASK, calc_ws

IN_SRC = TASK.replace("[src/calc.py]", "[src/]")
WATCHED = ("system.posix_acl_access", "system.posix_acl_default", "security.capability")
NOBODY = 65534


def acl(*entries: tuple[int, int, int]) -> bytes:
    """A POSIX ACL in the kernel's xattr format: (tag, perm, id) entries, sorted by tag."""
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in entries)


U = 0xFFFFFFFF
PERSONS_ACL = acl((0x01, 6, U), (0x02, 4, NOBODY), (0x04, 4, U), (0x10, 4, U), (0x20, 4, U))  # nobody: r--
PERSONS_DEFAULT = acl((0x01, 7, U), (0x02, 5, NOBODY), (0x04, 5, U), (0x10, 7, U), (0x20, 5, U))  # nobody: r-x


def xattrs_refused(folder: Path) -> str | None:
    """Why the file system under ``folder`` takes no user attribute or POSIX ACL (None: it does)."""
    probe = folder / "xattr-probe"
    probe.write_text("")
    try:
        os.setxattr(probe, "user.probe", b"1")
        os.setxattr(probe, "system.posix_acl_access", PERSONS_ACL)
    except OSError as exc:
        return f"{folder} takes no extended attributes or POSIX ACLs: {exc.strerror}"
    finally:
        probe.unlink()
    return None


def umask() -> int:
    old = os.umask(0o022)
    os.umask(old)
    return old


def watched(path: Path) -> list[str]:
    return [n for n in os.listxattr(path, follow_symlinks=False) if n in WATCHED or n.startswith("user.")]


def judge_git_modes(root: Path, *folders: str) -> None:
    """Below each of ``folders`` (and the folder itself): no set-uid, set-gid or sticky bit, no write for
    group or others beyond the umask's, folders searchable, no watched attribute."""
    allowed = 0o777 & ~umask()
    for folder in folders:
        for path in [root / folder, *(root / folder).rglob("*")]:
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                continue
            bits = stat.S_IMODE(st.st_mode)
            assert not bits & 0o7000, f"{path}: {bits:04o}"
            assert not bits & ~allowed, f"{path}: {bits:04o}"
            if stat.S_ISDIR(st.st_mode):
                assert bits & 0o700 == 0o700, f"{path}: {bits:04o}"
            assert watched(path) == [], f"{path}: {watched(path)}"


def last_entry(ws) -> dict[str, str]:
    return dict(status_log.parse_status(ws.status_path)[-1].fields)


def log_of(root: Path) -> str:
    return next((root / "logs").glob("tick_*.log")).read_text()


def only_docs_since(root: Path, start: str) -> None:
    for sha in git(root, "rev-list", f"{start}..HEAD").split():
        assert all(f.startswith("docs/") for f in git(root, "show", "--name-only", "--format=", sha).split())


# What each special mode is named as, in the guard's reason and the entry.
SPECIAL = {
    "setuid": ["src/bin/sh (set-uid)", "src/bin/ (set-gid)"],
    "sticky": ["src/ (sticky)"],
    "acl": ["src/calc.py (a POSIX ACL removed)"],
    "defacl": ["src/ (a default POSIX ACL removed)"],
    "cap": ["src/bin/sh (a file capability removed)"],
    "empty": ["src/empty/ (set-gid)"],
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("what", list(SPECIAL))
def test_a_special_mode_fails_the_attempt_and_is_removed(tmp_path, mode, what):
    if what in ("acl", "defacl", "cap") and (why := xattrs_refused(tmp_path)):
        pytest.skip(why)
    ws = calc_ws(tmp_path, agent("leaves_modes.py", what), mode, tasks=IN_SRC)
    root = ws.root
    start = git(root, "rev-parse", "HEAD").strip()
    (result,) = run_tick(root).results
    log = log_of(root)
    if f"refused {what}" in log:
        # A file capability needs CAP_SETFCAP: the sandbox drops every capability (--cap-drop ALL), and
        # an unprivileged agent has none to drop. Nothing was set: the honest rest of the work passes.
        assert what == "cap" and (mode == "bwrap" or os.geteuid() != 0), log
        assert result.passed, result.reason
        assert "security.capability" not in os.listxattr(root / "src" / "bin" / "sh")
        judge_git_modes(root, "src", "tests")
        return
    assert f"DID {what}" in log
    assert not result.passed
    assert result.reason.startswith("the agent set special modes or rights, removed: "), result.reason
    for item in SPECIAL[what]:
        assert item in result.reason, result.reason
        assert item in last_entry(ws)["Modes Reset"]
    only_docs_since(root, start)
    assert (root / "src" / "calc.py").read_text() == GOOD  # rolled back
    assert not (root / "src" / "bin").exists()  # the shell's copy (created) went with the rollback
    judge_git_modes(root, ".", "src", "tests")
    assert "[memento] modes: reset " in log


@pytest.mark.parametrize("mode", MODES)
def test_write_bits_and_attributes_are_reset_after_a_pass(tmp_path, mode):
    if why := xattrs_refused(tmp_path):
        pytest.skip(why)
    ws = calc_ws(tmp_path, agent("leaves_modes.py", "open", "newopen", "xattr"), mode, tasks=IN_SRC)
    root = ws.root
    (result,) = run_tick(root).results
    assert result.passed, result.reason
    assert "DID open" in log_of(root) and "DID xattr" in log_of(root)
    committed = git(root, "show", "--name-only", "--format=", "HEAD").split()
    assert [p for p in committed if not p.startswith("docs/")] == ["src/calc.py", "src/extra/util.py"]
    assert git(root, "ls-files", "-s", "src/extra/util.py").startswith("100644 ")
    judge_git_modes(root, ".", "src", "tests")
    git_mode = 0o666 & ~umask()
    assert stat.S_IMODE(os.stat(root / "src" / "calc.py").st_mode) == git_mode
    assert stat.S_IMODE(os.stat(root / "src" / "extra" / "util.py").st_mode) == git_mode
    assert stat.S_IMODE(os.stat(root / "src").st_mode) == 0o777 & ~umask()
    assert stat.S_IMODE(os.stat(root / "tests").st_mode) == 0o777 & ~umask()  # was 0700: the snapshot's again
    said = last_entry(ws)["Modes Reset"]
    for item in ("src/ (write for group and others)", "src/calc.py (write for group)",
                 "src/extra/ (write for group and others)", "src/extra/util.py (write for group and others)",
                 "src/calc.py (extended attribute user.planted removed)",
                 "src/ (extended attribute user.planted removed)"):
        assert item in said, said


def test_new_files_take_the_persons_umask(tmp_path):
    """Under a umask of 002 git would check a file out 0664: that is git's mode, not the agent's."""
    ws = calc_ws(tmp_path, agent("leaves_modes.py", "newopen"), "none", tasks=IN_SRC)
    old = os.umask(0o002)
    try:
        (result,) = run_tick(ws.root).results
    finally:
        os.umask(old)
    assert result.passed, result.reason
    assert stat.S_IMODE(os.stat(ws.root / "src" / "extra" / "util.py").st_mode) == 0o664
    assert stat.S_IMODE(os.stat(ws.root / "src" / "extra").st_mode) == 0o775
    assert "src/extra/util.py (write for others)" in last_entry(ws)["Modes Reset"]


@pytest.mark.parametrize("mode", MODES)
def test_what_a_failed_attempt_left_on_files_it_did_not_change_is_removed(tmp_path, mode):
    """The agent exits 1: no guard runs, the rollback leaves unchanged files alone; their ACL and
    attributes go all the same."""
    if why := xattrs_refused(tmp_path):
        pytest.skip(why)
    ws = calc_ws(tmp_path, agent("leaves_modes.py", "tests", "sticky", "setuid", "fail"), mode, tasks=IN_SRC)
    root = ws.root
    (result,) = run_tick(root).results
    assert "DID tests" in log_of(root) and "DID setuid" in log_of(root)
    assert not result.passed and result.reason == "agent exited with code 1", result.reason
    judge_git_modes(root, ".", "src", "tests")
    assert not (root / "src" / "bin").exists()
    said = last_entry(ws)["Modes Reset"]
    for item in ("tests/test_calc.py (a POSIX ACL removed)", "tests/ (extended attribute user.planted removed)",
                 "src/ (sticky)", "src/bin/sh (set-uid)", "src/bin/ (set-gid)"):
        assert item in said, said


@pytest.mark.parametrize("mode", MODES)
def test_a_persons_own_modes_and_acls_stay(tmp_path, mode):
    """src/ set-gid and group-writable with a default ACL, calc.py group-writable, an ACL on the test:
    the person's, before the run. A new folder and file inherit from src/ what the kernel gives them."""
    if why := xattrs_refused(tmp_path):
        pytest.skip(why)
    ws = calc_ws(tmp_path, agent("leaves_modes.py", "newdir"), mode, tasks=IN_SRC)
    root = ws.root
    os.chmod(root / "src", 0o2775)
    os.chmod(root / "src" / "calc.py", 0o664)
    os.setxattr(root / "src", "system.posix_acl_default", PERSONS_DEFAULT)
    os.setxattr(root / "tests" / "test_calc.py", "system.posix_acl_access", PERSONS_ACL)
    os.setxattr(root / "tests", "user.persons", b"mine")
    before = {p: (os.lstat(root / p).st_mode, {n: os.getxattr(root / p, n) for n in watched(root / p)})
              for p in ("src", "tests", "tests/test_calc.py")}
    calc_mode = os.lstat(root / "src" / "calc.py").st_mode
    (result,) = run_tick(root).results
    assert result.passed, result.reason
    assert "DID newdir" in log_of(root)
    after = {p: (os.lstat(root / p).st_mode, {n: os.getxattr(root / p, n) for n in watched(root / p)})
             for p in before}
    assert after == before
    assert os.lstat(root / "src" / "calc.py").st_mode == calc_mode
    pkg = os.lstat(root / "src" / "pkg").st_mode
    assert pkg & stat.S_ISGID  # the kernel's, from the person's set-gid src/
    assert os.getxattr(root / "src" / "pkg", "system.posix_acl_default") == PERSONS_DEFAULT
    assert "system.posix_acl_access" in os.listxattr(root / "src" / "pkg" / "mod.py")
    assert "Modes Reset" not in last_entry(ws)


def test_a_hard_linked_file_is_never_changed_through_its_link(tmp_path):
    """Unconfined, the agent links a person's 0666 file outside the project into src/: Memento gives
    src/linked.txt git's mode on a copy of its own, the outside file keeps its mode."""
    outside = tmp_path / "outside.txt"
    outside.write_text("a person's file, outside the project\n")
    os.chmod(outside, 0o666)
    ws = calc_ws(tmp_path, agent("leaves_modes.py", f"link={outside}"), "none", tasks=IN_SRC)
    (result,) = run_tick(ws.root).results
    assert "DID link" in log_of(ws.root)
    assert stat.S_IMODE(os.stat(outside).st_mode) == 0o666
    assert outside.read_text() == "a person's file, outside the project\n"
    linked = ws.root / "src" / "linked.txt"
    if linked.exists():  # a pass: a file of its own, git's mode
        assert result.passed, result.reason
        assert not os.path.samefile(linked, outside)
        assert stat.S_IMODE(os.stat(linked).st_mode) == 0o666 & ~umask()
