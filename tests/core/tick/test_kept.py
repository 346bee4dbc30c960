"""tick/kept.py on real files in a real repository: what put_back may remove, and what never."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from memento_core.git.changes import FileChange, changes_since
from memento_core.git.repo import head
from memento_core.git.status import persons_paths
from memento_core.tick import kept


def repo(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    (root / ".gitignore").write_text(".memento/\nlogs/\nmemory/\n.env\nbuild/\n*.log\ndata/*.bin\n")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("x = 1\n")
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "s"],
                   check=True)
    (root / ".env").write_text("SECRET=1\n")
    (root / "data").mkdir()
    (root / "data" / "persons.bin").write_bytes(b"\0a person's\n")
    return root


def test_memento_files_and_cleanignored_paths_are_never_removed_a_persons_are_spared(tmp_path):
    root = repo(tmp_path)
    snap = kept.take(root, persons_paths(root), keep=["build/"])
    for rel in (".memento/claims/T-1.json", "logs/tick_1.log", "memory/x.md", "build/out.txt", "run.log",
                "data/agents.bin"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("new\n")
    done = kept.put_back(root, snap)
    assert sorted(done.removed) == ["data/agents.bin", "run.log"]
    for rel in (".memento/claims/T-1.json", "logs/tick_1.log", "memory/x.md", "build/out.txt"):
        assert (root / rel).exists(), rel
    assert (root / "data" / "persons.bin").read_bytes() == b"\0a person's\n"
    assert (root / ".env").read_text() == "SECRET=1\n"
    assert done.reason() == ""


def test_a_rewrite_with_the_old_mtime_and_size_is_seen_and_restored(tmp_path):
    root = repo(tmp_path)
    env = root / ".env"
    before = env.stat()
    snap = kept.take(root, persons_paths(root))
    env.write_text("SECRET=2\n")
    os.utime(env, ns=(before.st_atime_ns, before.st_mtime_ns))
    done = kept.put_back(root, snap)
    assert done.restored == (".env",)
    assert env.read_text() == "SECRET=1\n"
    assert env.stat().st_mtime_ns == before.st_mtime_ns


def test_confined_snapshots_take_no_prints_and_remove_only_new_paths(tmp_path):
    root = repo(tmp_path)
    snap = kept.take(root, persons_paths(root), confined=True)
    assert not snap.prints and not snap.copies and not snap.walked
    (root / "new.log").write_text("x\n")
    assert kept.put_back(root, snap).removed == ("new.log",)
    assert (root / ".env").exists()


def test_links_out_of_the_tree_even_through_another_link_are_named(tmp_path):
    root = repo(tmp_path)
    (tmp_path / "outside.txt").write_text("a person's\n")
    os.symlink(str(tmp_path), root / "src" / "up")  # itself outside
    os.symlink("up/outside.txt", root / "src" / "via")  # a chain out
    os.symlink("app.py", root / "src" / "fine")
    os.symlink("../.env", root / "src" / "env")
    changes = [FileChange(p, 1, 0, "created") for p in ("src/up", "src/via", "src/fine", "src/env")]
    reason = kept.link_reason(root, changes, [], kept.take(root, persons_paths(root)))
    assert "src/up ->" in reason and "src/via -> up/outside.txt (outside the work tree)" in reason
    assert "src/env -> ../.env (a person's untracked or ignored file)" in reason
    assert "src/fine" not in reason


def with_caches(tmp_path: Path) -> Path:
    """repo() and what a person's earlier test run left: bytecode, pytest's cache, a .venv/."""
    root = repo(tmp_path)
    with (root / ".gitignore").open("a") as fh:
        fh.write("*.pyc\n.pytest_cache/\n.venv/\n")
    for rel in ("src/__pycache__/app.cpython-311.pyc", ".pytest_cache/v/cache/nodeids", ".venv/lib/site.py"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(b"earlier run\n")
    return root


def inodes(root: Path, rels) -> dict[str, int]:
    return {rel: os.lstat(root / rel).st_ino for rel in rels}


def test_confined_scratch_is_printed_and_only_what_changed_of_it_goes(tmp_path):
    """In the sandbox scratch is writable: printed at the snapshot (a stat), so an unchanged cache
    stays (the same inode) and a changed one goes; a person's .env is neither printed nor copied."""
    root = with_caches(tmp_path)
    snap = kept.take(root, persons_paths(root), confined=True)
    assert set(snap.prints) == {"src/__pycache__/app.cpython-311.pyc", ".pytest_cache/v/cache/nodeids"}
    assert not snap.copies and not snap.walked
    before = inodes(root, [".pytest_cache/v/cache/nodeids"])
    (root / "src" / "__pycache__" / "app.cpython-311.pyc").write_bytes(b"forged\n")
    (root / ".pytest_cache" / "v" / "cache" / "lastfailed").write_text("{}")
    done = kept.put_back(root, snap)
    assert sorted(done.removed) == [".pytest_cache/v/cache/lastfailed", "src/__pycache__/app.cpython-311.pyc"]
    assert inodes(root, [".pytest_cache/v/cache/nodeids"]) == before
    assert done.reason() == ""  # scratch is no one's: never a person's file changed


def test_a_folder_swapped_for_a_link_is_the_link_never_what_it_leads_to(tmp_path):
    root = with_caches(tmp_path)
    outside = tmp_path / "outside"
    (outside / "v" / "cache").mkdir(parents=True)
    (outside / "v" / "cache" / "nodeids").write_text("theirs\n")
    (outside / "keep.txt").write_text("theirs\n")
    for confined in (False, True):
        snap = kept.take(root, persons_paths(root), confined=confined)
        subprocess.run(["rm", "-rf", str(root / ".pytest_cache")], check=True)
        os.symlink(outside, root / ".pytest_cache")
        done = kept.put_back(root, snap)
        assert done.removed == (".pytest_cache",), done  # the link alone, nothing named beyond it
        assert not os.path.lexists(root / ".pytest_cache")
        assert sorted(p.name for p in outside.rglob("*")) == ["cache", "keep.txt", "nodeids", "v"]
        (root / ".pytest_cache" / "v" / "cache").mkdir(parents=True)
        (root / ".pytest_cache" / "v" / "cache" / "nodeids").write_bytes(b"earlier run\n")


def test_a_path_beyond_a_swapped_folder_is_gone_never_read_through_the_link(tmp_path):
    """src/__pycache__ made a link to a folder holding a changed app.*.pyc: the snapshot's pyc is gone
    (not judged by the file beyond the link), the link goes, the file beyond it stays."""
    root = with_caches(tmp_path)
    snap = kept.take(root, persons_paths(root))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "app.cpython-311.pyc").write_bytes(b"someone else's\n")
    subprocess.run(["rm", "-rf", str(root / "src" / "__pycache__")], check=True)
    os.symlink(elsewhere, root / "src" / "__pycache__")
    done = kept.put_back(root, snap)
    assert done.removed == ("src/__pycache__",), done
    assert (elsewhere / "app.cpython-311.pyc").read_bytes() == b"someone else's\n"


def test_the_copies_of_one_snapshot_stop_at_64_mib(tmp_path):
    """SPEC §13: loose files are copied while the copies stay within 64 MiB in all; a file past that
    is printed only, so its change is named as not restorable (not one byte more is copied)."""
    root = repo(tmp_path)
    (root / ".env").unlink()
    (root / "data" / "persons.bin").unlink()
    quarter = b"q" * (16 * 1024 * 1024)
    for name in ("a", "b", "c", "d"):  # 64 MiB exactly: the budget, spent
        (root / "data" / f"{name}.bin").write_bytes(quarter)
    (root / "data" / "e.bin").write_bytes(b"1")  # one byte past it
    snap = kept.take(root, persons_paths(root))
    for name in ("d", "e"):
        (root / "data" / f"{name}.bin").write_bytes(b"the agent's\n")
    done = kept.put_back(root, snap)
    assert done.restored == ("data/d.bin",) and done.lost == ("data/e.bin",)
    assert (root / "data" / "d.bin").read_bytes() == quarter
    assert "data/e.bin (not copied at the snapshot: could not be restored)" in done.reason()
    assert done.said() == "restored data/d.bin; could not restore data/e.bin"


def test_ten_changed_files_are_all_named_eleven_say_how_many_more(tmp_path):
    root = repo(tmp_path)
    for i in range(11):
        (root / f"p{i:02}.log").write_text(f"a person's {i}\n")
    snap = kept.take(root, persons_paths(root))
    for i in range(10):
        (root / f"p{i:02}.log").write_text("the agent's\n")
    ten = kept.put_back(root, snap)
    assert ten.restored == tuple(f"p{i:02}.log" for i in range(10))
    assert ten.said() == "restored " + ", ".join(ten.restored)  # all ten, and no "and 0 more"
    for i in range(11):
        (root / f"p{i:02}.log").write_text("the agent's again\n")
    eleven = kept.put_back(root, snap)
    assert eleven.said() == "restored " + ", ".join(f"p{i:02}.log" for i in range(10)) + " and 1 more"
    assert all((root / f"p{i:02}.log").read_text() == f"a person's {i}\n" for i in range(11))


def test_bytecode_verify_wrote_where_git_sees_it_is_removed_after_verify(tmp_path, monkeypatch):
    """A project whose .gitignore says nothing of __pycache__/: the bytecode verify's import wrote
    is a change git sees (scratch), not an ignored path; it goes after verify, as in a tick."""
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    root = repo(tmp_path)
    base = head(root)
    snap = kept.take(root, persons_paths(root))
    untracked = persons_paths(root)
    subprocess.run([sys.executable, "-c", "import app"], cwd=root / "src", check=True,
                   env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"})
    (pyc,) = (root / "src" / "__pycache__").glob("app.*.pyc")
    changes = changes_since(root, base, untracked)
    log = tmp_path / "tick.log"
    kept.remove_bytecode(root, snap, changes, log)
    rel = pyc.relative_to(root).as_posix()
    assert not pyc.exists() and (root / "src" / "app.py").exists()
    assert f"[memento] bytecode verify made or rewrote, removed: {rel}" in log.read_text()


def test_a_file_of_20_mib_is_copied_and_one_byte_more_is_printed_only(tmp_path):
    """SPEC §13: files over 20 MB are hashed, not copied, and reported."""
    root = repo(tmp_path)
    limit = 20 * 1024 * 1024
    assert kept.COPY_LIMIT == limit
    (root / "data" / "at.bin").write_bytes(b"a" * limit)
    (root / "data" / "over.bin").write_bytes(b"o" * (limit + 1))
    snap = kept.take(root, persons_paths(root))
    assert "data/at.bin" in snap.copies and "data/over.bin" not in snap.copies
    assert "data/over.bin" in snap.prints


def test_the_permission_bits_git_does_not_keep_are_restored_and_said(tmp_path):
    """git keeps the executable bit alone: a file made 0600 or a folder made 0700 is put back
    from the snapshot, and the tick log says which."""
    root = repo(tmp_path)
    app, src = root / "src" / "app.py", root / "src"
    was_file, was_dir = app.stat().st_mode & 0o7777, src.stat().st_mode & 0o7777
    snap = kept.take(root, persons_paths(root))
    app.chmod(0o600)
    src.chmod(0o700)
    log = tmp_path / "tick.log"
    put = kept.restore_modes(root, snap, log)
    assert set(put) == {"src/app.py", "src"}
    assert app.stat().st_mode & 0o7777 == was_file and src.stat().st_mode & 0o7777 == was_dir
    assert "[memento] rollback: the modes of " in log.read_text()
    assert kept.restore_modes(root, snap, log) == ()  # as they were: nothing to do


def test_scratch_the_agent_made_is_removed_before_verify_and_said(tmp_path):
    root = repo(tmp_path)
    base = head(root)
    untracked = persons_paths(root)
    (root / "src" / "app.cpython-311.pyc.1").write_bytes(b"forged")
    changes = changes_since(root, base, untracked)
    assert any(c.scratch for c in changes)
    log = tmp_path / "tick.log"
    kept.remove_scratch(root, changes, log)
    assert not (root / "src" / "app.cpython-311.pyc.1").exists() and (root / "src" / "app.py").exists()
    assert "[memento] scratch the agent made, removed before verify: src/app.cpython-311.pyc.1" in log.read_text()


def test_without_a_snapshot_of_kept_files_nothing_is_put_back_or_said(tmp_path):
    root = repo(tmp_path)
    log = tmp_path / "tick.log"
    assert kept.restore_modes(root, None, log) == ()
    (root / "src" / "__pycache__").mkdir()
    (root / "src" / "__pycache__" / "app.cpython-311.pyc").write_bytes(b"made since")
    kept.remove_bytecode(root, None, [], log)
    assert (root / "src" / "__pycache__" / "app.cpython-311.pyc").read_bytes() == b"made since"
    done = kept.put_back(root, None)
    assert (done.restored, done.lost, done.reason()) == ((), (), "")
    assert not log.exists() and (root / ".env").read_text() == "SECRET=1\n"


def test_only_symbolic_links_are_judged_as_links_a_changed_guard_file_is_not_one(tmp_path):
    root = repo(tmp_path)
    (root / "src" / "settings.py").write_text("DEBUG = True\n")
    (root / "src" / "out").symlink_to("/etc/passwd")
    touched = [FileChange("src/settings.py", 1, 0, "created"), FileChange("src/gone.py", 0, 1, "deleted"),
               FileChange("src/out", 1, 0, "created")]
    said = kept.link_reason(root, touched, ["src/settings.py"], None)
    assert said == "the agent added symbolic link(s) that may not be committed: src/out -> /etc/passwd (outside the work tree)"


def test_a_restored_file_gets_its_mode_back_not_one_the_umask_makes(tmp_path):
    root = repo(tmp_path)
    persons = root / "data" / "persons.bin"
    os.utime(persons, ns=(10**18, 10**18))  # its mtime of long ago; its ctime (the change) is now
    persons.chmod(0o440)
    snap = kept.take(root, persons_paths(root))
    persons.chmod(0o644)
    persons.write_bytes(b"the agent's\n")
    done = kept.put_back(root, snap)
    assert done.restored == ("data/persons.bin",)
    assert persons.read_bytes() == b"\0a person's\n" and persons.stat().st_mode & 0o7777 == 0o440
    assert persons.stat().st_mtime_ns == 10**18


def test_tracked_paths_missing_from_the_work_tree_have_no_mode_to_restore(tmp_path):
    root = repo(tmp_path)
    (root / "src" / "app.py").unlink()
    (root / "src").rmdir()  # the first folder git names is gone
    modes = kept.take(root, persons_paths(root)).modes
    assert "src" not in modes and "src/app.py" not in modes and ".gitignore" in modes


def test_a_folder_that_cannot_be_listed_is_left_out_of_the_prints_and_the_rest_is_printed(tmp_path):
    """A `.venv/` holding a folder its owner locked (a container's, 0700 as another account): the walk
    prints what it can read, once each, and ends. Run without CAP_DAC_OVERRIDE, which ignores modes."""
    import shutil

    import pytest

    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        pytest.skip("needs root and setpriv to drop the capability")
    root = tmp_path / "proj"
    for rel in (".venv/a/1.py", ".venv/a/2.py", ".venv/locked/inner/x.py", ".venv/z/3.py"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n")
    (root / ".venv" / "locked").chmod(0o000)
    drop = "-dac_override,-dac_read_search"
    code = ("import json, sys; from pathlib import Path; from memento_core.tick.kept import _walk; "
            f"print(json.dumps(sorted(_walk(Path({str(root)!r}), '.venv'))))")
    try:
        done = subprocess.run([setpriv, f"--inh-caps={drop}", f"--bounding-set={drop}", sys.executable, "-c", code],
                              env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[3])},
                              capture_output=True, text=True, timeout=60)
    finally:
        (root / ".venv" / "locked").chmod(0o755)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == '[".venv/a/1.py", ".venv/a/2.py", ".venv/z/3.py"]'


def test_a_file_gone_between_gits_listing_and_the_snapshot_is_left_out_and_not_brought_back(tmp_path):
    """persons_paths runs before take: a person's file removed in between has no print and no copy,
    and what the agent then writes at its name is new: removed, never taken for a person's change."""
    root = repo(tmp_path)
    entries = persons_paths(root)
    (root / ".env").unlink()
    snap = kept.take(root, entries)
    assert ".env" in snap.entries and ".env" not in snap.prints and ".env" not in snap.copies
    assert "data/persons.bin" in snap.copies
    (root / ".env").write_text("SECRET=the agent's\n")
    done = kept.put_back(root, snap)
    assert (done.restored, done.lost, done.removed) == ((), (), (".env",))
    assert not (root / ".env").exists() and done.reason() == ""


def test_confined_a_nested_cache_of_a_persons_node_modules_is_printed_and_what_changed_in_it_goes(tmp_path):
    """node_modules/ is the person's (read-only in the sandbox) but node_modules/.cache/ is a tool's,
    left writable: printed at the snapshot, so a new or rewritten file there goes; the package stays."""
    root = repo(tmp_path)
    with (root / ".gitignore").open("a") as fh:
        fh.write("node_modules/\n")
    for rel in ("node_modules/pkg/index.js", "node_modules/.cache/ava/a.json"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("earlier run\n")
    snap = kept.take(root, persons_paths(root), confined=True)
    assert snap.tools == ("node_modules/.cache/", "node_modules/.vite/")  # .vite/: none yet, a tool makes it
    assert set(snap.prints) == {"node_modules/.cache/ava/a.json"}
    (root / "node_modules" / ".cache" / "ava" / "a.json").write_text("forged\n")
    (root / "node_modules" / ".cache" / "ava" / "b.json").write_text("forged\n")
    done = kept.put_back(root, snap)
    assert sorted(done.removed) == ["node_modules/.cache/ava/a.json", "node_modules/.cache/ava/b.json"]
    assert not (root / "node_modules" / ".cache" / "ava" / "b.json").exists()
    assert (root / "node_modules" / "pkg" / "index.js").read_text() == "earlier run\n"


def test_the_modes_of_every_folder_above_a_deep_tracked_file_are_restored(tmp_path):
    """git names files only: each folder on the way to a/b/c/d.py (a, a/b, a/b/c) has its mode of
    the snapshot again, and the file its own."""
    root = repo(tmp_path)
    (root / "a" / "b" / "c").mkdir(parents=True)
    (root / "a" / "b" / "c" / "d.py").write_text("d = 1\n")
    subprocess.run(["git", "-C", str(root), "add", "a"], check=True)
    chain = ("a", "a/b", "a/b/c", "a/b/c/d.py")
    was = {rel: (root / rel).stat().st_mode & 0o7777 for rel in chain}
    snap = kept.take(root, persons_paths(root))
    for rel in reversed(chain):
        (root / rel).chmod(0o700 if (root / rel).is_dir() else 0o600)
    put = kept.restore_modes(root, snap, tmp_path / "tick.log")
    assert sorted(put) == sorted(chain)
    assert {rel: (root / rel).stat().st_mode & 0o7777 for rel in chain} == was


def test_a_tracked_file_gone_at_the_rollback_has_no_mode_put_back_and_the_rest_do(tmp_path):
    root = repo(tmp_path)
    snap = kept.take(root, persons_paths(root))
    (root / "src" / "app.py").unlink()  # last of the modes: folders first, then the files
    (root / ".gitignore").chmod(0o600)
    assert kept.restore_modes(root, snap, tmp_path / "tick.log") == (".gitignore",)
    assert (root / ".gitignore").stat().st_mode & 0o7777 == snap.modes[".gitignore"] & 0o7777
    assert not (root / "src" / "app.py").exists()


def test_a_tracked_file_made_a_hard_link_to_a_persons_file_gets_a_file_of_its_own(tmp_path):
    """The agent replaced src/app.py by a hard link to a person's file outside the project: the
    snapshot's mode goes on a file of its own at that name, the person's file keeps its mode."""
    root = repo(tmp_path)
    snap = kept.take(root, persons_paths(root))
    persons = tmp_path / "persons.txt"
    persons.write_text("a person's\n")
    persons.chmod(0o600)
    (root / "src" / "app.py").unlink()
    os.link(persons, root / "src" / "app.py")
    assert kept.restore_modes(root, snap, tmp_path / "tick.log") == ("src/app.py",)
    assert persons.stat().st_mode & 0o7777 == 0o600 and persons.stat().st_nlink == 1
    app = (root / "src" / "app.py").stat()
    assert app.st_mode == snap.modes["src/app.py"] and app.st_ino != persons.stat().st_ino


def test_a_persons_file_that_could_not_be_restored_is_named_once_not_at_every_put_back(tmp_path):
    """The agent made data/ a file: data/persons.bin cannot come back (nothing is written through
    a file in its way) and is named lost; the rollback's put_back, after the agent's, names it no more."""
    import shutil

    root = repo(tmp_path)
    snap = kept.take(root, persons_paths(root))
    shutil.rmtree(root / "data")
    (root / "data").write_text("the agent's\n")
    first = kept.put_back(root, snap)
    assert (first.restored, first.lost) == ((), ("data/persons.bin",))
    assert (root / "data").read_text() == "the agent's\n"
    again = kept.put_back(root, snap)
    assert (again.restored, again.lost, again.reason()) == ((), (), "")


def test_bytecode_verify_rewrote_or_made_in_a_persons_folder_goes_and_the_rest_stays(tmp_path):
    """After verify (on a pass too): a .pyc of the snapshot that verify rewrote and one it made in
    the person's .venv/ go; an untouched .pyc of the snapshot, the person's sources and the caches
    verify wrote that are not bytecode (pytest's) stay."""
    root = with_caches(tmp_path)
    (root / ".venv" / "lib" / "__pycache__").mkdir()
    (root / ".venv" / "lib" / "__pycache__" / "old.cpython-311.pyc").write_bytes(b"earlier run\n")
    snap = kept.take(root, persons_paths(root))
    (root / "src" / "__pycache__" / "app.cpython-311.pyc").write_bytes(b"forged\n")
    (root / ".venv" / "lib" / "__pycache__" / "site.cpython-311.pyc").write_bytes(b"verify's\n")
    for name in ("nodeids", "lastfailed"):
        (root / ".pytest_cache" / "v" / "cache" / name).write_bytes(b"verify's\n")
    log = tmp_path / "tick.log"
    kept.remove_bytecode(root, snap, [], log)
    assert not (root / "src" / "__pycache__" / "app.cpython-311.pyc").exists()
    assert not (root / ".venv" / "lib" / "__pycache__" / "site.cpython-311.pyc").exists()
    assert (root / ".venv" / "lib" / "__pycache__" / "old.cpython-311.pyc").read_bytes() == b"earlier run\n"
    assert (root / ".venv" / "lib" / "site.py").read_bytes() == b"earlier run\n"
    for name in ("nodeids", "lastfailed"):
        assert (root / ".pytest_cache" / "v" / "cache" / name).read_bytes() == b"verify's\n"
    assert log.read_text() == ("[memento] bytecode verify made or rewrote, removed: "
                               ".venv/lib/__pycache__/site.cpython-311.pyc, src/__pycache__/app.cpython-311.pyc\n")


def test_bytecode_in_mementos_own_folders_is_never_removed(tmp_path):
    """.memento/, logs/ and memory/ are Memento's: nothing of theirs is judged as the task's bytecode."""
    root = repo(tmp_path)
    snap = kept.take(root, persons_paths(root))
    for rel in (".memento/x.cpython-311.pyc", "logs/__pycache__/y.cpython-311.pyc", "memory/z.pyc"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(b"Memento's\n")
    (root / "build").mkdir()
    (root / "build" / "w.cpython-311.pyc").write_bytes(b"verify's\n")
    log = tmp_path / "tick.log"
    kept.remove_bytecode(root, snap, [], log)
    for rel in (".memento/x.cpython-311.pyc", "logs/__pycache__/y.cpython-311.pyc", "memory/z.pyc"):
        assert (root / rel).read_bytes() == b"Memento's\n", rel
    assert not (root / "build" / "w.cpython-311.pyc").exists()


def test_after_a_killed_tick_what_was_planted_goes_saved_and_the_persons_paths_stay(tmp_path):
    """The stale recovery knows the person's paths from the dead tick's record, no prints: a new
    ignored file goes (a copy in the rollback folder first), the person's files and Memento's stay."""
    root = repo(tmp_path)
    entries = persons_paths(root) | {".memento/", "logs/tick_1.log"}  # a record may name Memento's too
    (root / "planted.log").write_text("the agent's\n")
    (root / "logs").mkdir()
    (root / "logs" / "tick_2.log").write_text("Memento's\n")
    done = kept.after_a_killed_tick(root, entries, (), save_to=tmp_path / "rollback")
    assert done.removed == ("planted.log",) and not (root / "planted.log").exists()
    assert (tmp_path / "rollback" / "files" / "planted.log").read_text() == "the agent's\n"
    assert (root / ".env").read_text() == "SECRET=1\n"
    assert (root / "data" / "persons.bin").read_bytes() == b"\0a person's\n"
    assert (root / "logs" / "tick_2.log").read_text() == "Memento's\n"


def test_scratch_verify_wrote_where_git_sees_it_stays_unless_it_is_bytecode(tmp_path, monkeypatch):
    """A project whose .gitignore names neither __pycache__/ nor .pytest_cache/: after verify the
    .pyc its import wrote goes, pytest's cache (scratch, not code Python imports) stays."""
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    root = repo(tmp_path)
    base = head(root)
    snap = kept.take(root, persons_paths(root))
    untracked = persons_paths(root)
    subprocess.run([sys.executable, "-c", "import app"], cwd=root / "src", check=True,
                   env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"})
    (root / ".pytest_cache" / "v" / "cache").mkdir(parents=True)
    (root / ".pytest_cache" / "v" / "cache" / "nodeids").write_text("[]\n")
    changes = changes_since(root, base, untracked)
    assert {c.path for c in changes if c.scratch} >= {".pytest_cache/v/cache/nodeids"}
    kept.remove_bytecode(root, snap, changes, tmp_path / "tick.log")
    assert not list((root / "src" / "__pycache__").glob("app.*.pyc"))
    assert (root / ".pytest_cache" / "v" / "cache" / "nodeids").read_text() == "[]\n"


def test_links_to_the_work_tree_to_git_and_to_a_guard_file_are_named_a_link_to_code_is_not(tmp_path):
    root = repo(tmp_path)
    (root / "verify.sh").write_text("exit 0\n")
    targets = {"top": ".", "git": ".git", "config": ".git/config", "check": "verify.sh", "code": "src/app.py"}
    for name, target in targets.items():
        os.symlink(target, root / name)
    changes = [FileChange(name, 1, 0, "created") for name in targets]
    said = kept.link_reason(root, changes, ["verify.sh"], None)
    assert said == ("the agent added symbolic link(s) that may not be committed: "
                    "top -> . (Memento's or git's own), git -> .git (Memento's or git's own), "
                    "config -> .git/config (Memento's or git's own), check -> verify.sh (a guard file)")


def test_a_persons_link_retargeted_comes_back_as_the_link_it_was(tmp_path):
    """An untracked link is copied as its target: the agent pointing it elsewhere gets it back as a
    link to the old target, never a file holding what either leads to."""
    root = repo(tmp_path)
    os.symlink("../.env", root / "data" / "env")
    snap = kept.take(root, persons_paths(root))
    assert snap.copies["data/env"] == b"../.env"
    (root / "data" / "env").unlink()
    os.symlink("/etc/hostname", root / "data" / "env")
    done = kept.put_back(root, snap)
    assert done.restored == ("data/env",)
    assert os.readlink(root / "data" / "env") == "../.env"


def test_a_persons_folder_removed_or_made_a_link_comes_back_with_their_file(tmp_path):
    """data/ removed: made again for data/persons.bin. data/ made a link to a folder outside: the
    link goes (what it leads to untouched) and a real data/ holds the file again."""
    import shutil

    root = repo(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "persons.bin").write_bytes(b"someone else's\n")
    for swap in (None, outside):
        snap = kept.take(root, persons_paths(root))
        shutil.rmtree(root / "data")
        if swap is not None:
            os.symlink(swap, root / "data")
        done = kept.put_back(root, snap)
        assert done.restored == ("data/persons.bin",), swap
        assert not (root / "data").is_symlink() and (root / "data").is_dir()
        assert (root / "data" / "persons.bin").read_bytes() == b"\0a person's\n"
    assert (outside / "persons.bin").read_bytes() == b"someone else's\n"


def test_a_restore_the_file_system_refuses_is_named_lost_not_restored(tmp_path):
    """The agent rewrote data/persons.bin and left data/ 0500: without CAP_DAC_OVERRIDE the name
    cannot be replaced, so the file is named as not restorable (the agent's bytes are still there)."""
    import json
    import shutil

    import pytest

    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        pytest.skip("needs root and setpriv to drop the capability")
    root = repo(tmp_path)
    drop = "-dac_override,-dac_read_search"
    code = ("import json, os; from pathlib import Path; from memento_core.git.status import persons_paths; "
            "from memento_core.tick import kept; "
            f"root = Path({str(root)!r}); snap = kept.take(root, persons_paths(root)); "
            "(root / 'data' / 'persons.bin').write_bytes(b'the agent\\'s'); (root / 'data').chmod(0o500); "
            "done = kept.put_back(root, snap); print(json.dumps([done.restored, done.lost]))")
    try:
        ran = subprocess.run([setpriv, f"--inh-caps={drop}", f"--bounding-set={drop}", sys.executable, "-c", code],
                             env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[3])},
                             capture_output=True, text=True, timeout=60)
    finally:
        (root / "data").chmod(0o755)
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout) == [[], ["data/persons.bin"]]
    assert (root / "data" / "persons.bin").read_bytes() == b"the agent's"


def test_a_persons_folder_the_agent_removed_is_named_file_by_file_as_not_restorable(tmp_path):
    """A folder is printed, never copied (a .venv/ of 10,000 files): the agent's rm -rf .venv is a
    guard failure naming each file it held, with nothing to restore them from."""
    import shutil

    root = with_caches(tmp_path)
    snap = kept.take(root, persons_paths(root))
    shutil.rmtree(root / ".venv")
    done = kept.put_back(root, snap)
    assert (done.restored, done.lost) == ((), (".venv/lib/site.py",))
    assert ".venv/lib/site.py (not copied at the snapshot: could not be restored)" in done.reason()


def test_a_link_inside_a_persons_folder_is_printed_as_the_link_never_walked_through(tmp_path):
    """A .venv/ holds lib64 -> lib, and the person's link to a folder outside: each is printed as
    itself; nothing beyond them is, so what they lead to is never judged or removed."""
    root = with_caches(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "theirs.txt").write_text("someone else's\n")
    os.symlink("lib", root / ".venv" / "lib64")
    os.symlink(outside, root / ".venv" / "shared")
    snap = kept.take(root, persons_paths(root))
    assert {p for p in snap.prints if p.startswith(".venv/")} == {".venv/lib/site.py", ".venv/lib64", ".venv/shared"}
    (outside / "new.txt").write_text("someone else's too\n")
    done = kept.put_back(root, snap)
    assert done.removed == () and (outside / "new.txt").exists()


def test_a_file_whose_path_is_too_long_to_stat_is_left_out_of_the_prints_and_the_rest_is_printed(tmp_path):
    """A folder deep in a .venv/ whose own path fits PATH_MAX (4096) but holds a name that does not:
    the walk lists the folder, cannot stat that file by its path, leaves it out and goes on."""
    root = with_caches(tmp_path)
    deep = root / ".venv"
    while len(os.fsencode(deep)) < 3900:
        deep = deep / ("d" * 100)
    deep.mkdir(parents=True)
    fd = os.open(deep, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.close(os.open("l" * 250, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
    finally:
        os.close(fd)
    assert os.listdir(deep) == ["l" * 250]
    assert kept._walk(root, deep.relative_to(root).as_posix()) == {}  # the one name it holds: left out
    snap = kept.take(root, persons_paths(root))
    assert {p for p in snap.prints if p.startswith(".venv/")} == {".venv/lib/site.py"}


def test_a_new_ignored_folder_over_a_persons_path_keeps_the_folder_and_loses_only_the_agents_files(tmp_path):
    """The agent removed the person's notes/sub/todo.txt, left a .pyc there and made notes/sub/ ignored
    (a notes/.gitignore of its own): git lists notes/sub/ as one new ignored folder. Only the agent's
    file goes; the person's folder stays (its 0700 kept) and their file comes back into it."""
    root = repo(tmp_path)
    sub = root / "notes" / "sub"
    sub.mkdir(parents=True)
    (sub / "todo.txt").write_text("a person's\n")
    sub.chmod(0o700)
    snap = kept.take(root, persons_paths(root))
    assert "notes/sub/todo.txt" in snap.entries
    (sub / "todo.txt").unlink()
    (sub / "evil.cpython-311.pyc").write_bytes(b"the agent's\n")
    (root / "notes" / ".gitignore").write_text("sub/\n")
    done = kept.put_back(root, snap)
    assert done.removed == ("notes/sub/evil.cpython-311.pyc",) and done.restored == ("notes/sub/todo.txt",)
    assert sub.stat().st_mode & 0o7777 == 0o700
    assert os.listdir(sub) == ["todo.txt"] and (sub / "todo.txt").read_text() == "a person's\n"
