"""tick/kept.py on real files in a real repository: what put_back may remove, and what never."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from memento_core import gitops
from memento_core.gitops import FileChange
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
    snap = kept.take(root, gitops.persons_paths(root), keep=["build/"])
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
    snap = kept.take(root, gitops.persons_paths(root))
    env.write_text("SECRET=2\n")
    os.utime(env, ns=(before.st_atime_ns, before.st_mtime_ns))
    done = kept.put_back(root, snap)
    assert done.restored == (".env",)
    assert env.read_text() == "SECRET=1\n"
    assert env.stat().st_mtime_ns == before.st_mtime_ns


def test_confined_snapshots_take_no_prints_and_remove_only_new_paths(tmp_path):
    root = repo(tmp_path)
    snap = kept.take(root, gitops.persons_paths(root), confined=True)
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
    reason = kept.link_reason(root, changes, [], kept.take(root, gitops.persons_paths(root)))
    assert "src/up ->" in reason and "src/via -> up/outside.txt (outside the work tree)" in reason
    assert "src/env -> ../.env (a person's untracked or ignored file)" in reason
    assert "src/fine" not in reason
