"""state.py against real git: HEAD read from its file only where git would read the same, and a
worktree's gitfile rewritten to name a decoy written back before git is asked. (The hostile
agents that plant hooks, move refs and swap the repository during a tick: test_redteam_git.py.)"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from memento_core.git.state import _branch_named, _head, bring_back, capture

from .conftest import git


def _one_commit(root):
    """A repository at ``root`` (made) with a.txt committed on main."""
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "a.txt").write_text("a\n")
    git(root, "add", "a.txt")
    git(root, "commit", "-qm", "a")
    return root


def test_a_worktrees_gitfile_rewritten_to_name_a_decoy_is_written_again(tmp_path):
    # A worker's worktree (.memento/worktrees/<ID>/) has a gitfile for .git: an agent there that
    # rewrites it to name a copy with a hook gets the gitfile written back, before git is asked.
    main = tmp_path / "main"
    _one_commit(main)
    tree = tmp_path / "wt"
    git(main, "worktree", "add", "-q", "-b", "memento/T-1", str(tree))
    snap = capture(tree)
    assert (tree / ".git").read_bytes().startswith(b"gitdir: ")  # the worktree has a gitfile to begin with
    decoy = tmp_path / "decoy"
    shutil.copytree(main / ".git", decoy, symlinks=True)
    (tree / ".git").write_text(f"gitdir: {decoy}\n")
    said = bring_back(snap, tmp_path / "aside")
    assert said.startswith("replaced the repository's .git"), said
    assert (tree / ".git").read_text().strip() == f"gitdir: {snap.git_dir}"
    assert (tmp_path / "aside" / "git").read_text() == f"gitdir: {decoy}\n"  # the forged gitfile, kept
    assert git(tree, "rev-parse", "--absolute-git-dir").strip() == snap.git_dir
    assert bring_back(snap, tmp_path / "aside-again") == ""  # in place again: nothing to do
    assert not (tmp_path / "aside-again").exists()


@pytest.mark.parametrize("head", [
    "ref: refs/heads/main\n",
    "ref: refs/heads/feature/one-2.x\n",
    "ref: refs/heads/unborn\n",
    "ref: refs/heads/main",  # no newline: git's reading, not this one's
    "ref:  refs/heads/main\n",
    "ref: refs/heads/../../config\n",
    "ref: refs/heads/.invalid\n",  # another ref store's placeholder
    "ref: refs/heads/a.lock/b\n",
    "ref: refs/heads/" + "n" * 490 + "\n" + "junk" * 10,
    "ref: refs/tags/v1\n",
    "DETACHED\n",
    "LINK",
], ids=lambda h: h.strip().replace("/", "_") or "empty")
def test_head_read_from_its_file_is_what_git_says(tmp_path, head):
    """The snapshot reads HEAD's file itself only when it names a branch the way git writes
    it; for anything else it asks git, so both always agree."""
    root = tmp_path / "r"
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    (root / "f").write_text("x\n")
    subprocess.run(["git", "-C", str(root), "add", "f"], check=True)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "one"], check=True)
    sha = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    subprocess.run(["git", "-C", str(root), "tag", "v1"], check=True)
    head_file = root / ".git" / "HEAD"
    if head == "LINK":
        (root / ".git" / "HEAD.real").write_text("ref: refs/heads/main\n")
        head_file.unlink()
        head_file.symlink_to("HEAD.real")
    else:
        head_file.write_text(head.replace("DETACHED", sha))
    by_git = _head(root)
    assert _head(root, root / ".git") == by_git
    assert _branch_named(head_file) == (by_git[5:] if head in (
        "ref: refs/heads/main\n", "ref: refs/heads/feature/one-2.x\n", "ref: refs/heads/unborn\n") else "")


def test_refs_left_loose_are_neither_put_back_nor_deleted_while_the_others_are(tmp_path):
    """A snapshot's loose refs (the other parallel workers' branches) stay as their agents left
    them; every other ref is put back, a new one deleted."""
    from dataclasses import replace

    from memento_core.git.state import restore

    root = tmp_path / "r"
    _one_commit(root)
    base = git(root, "rev-parse", "HEAD").strip()
    for name in ("memento/T-2", "memento/T-3", "person"):
        git(root, "branch", name)
    snap = replace(capture(root), loose=frozenset({"refs/heads/memento/T-2", "refs/heads/memento/T-9"}))
    other = git(root, "commit-tree", "-m", "elsewhere", git(root, "rev-parse", "HEAD^{tree}").strip()).strip()
    for name in ("memento/T-2", "memento/T-3", "person"):
        git(root, "update-ref", f"refs/heads/{name}", other)
    git(root, "update-ref", "refs/heads/memento/T-9", other)  # made meanwhile, loose too
    git(root, "update-ref", "refs/heads/stray", other)
    restore(root, snap)
    now = capture(root).refs
    assert now["refs/heads/memento/T-2"] == now["refs/heads/memento/T-9"] == other
    assert now["refs/heads/memento/T-3"] == now["refs/heads/person"] == base
    assert "refs/heads/stray" not in now


# ---------------------------------------------------------------- the refs taken again (issue 42)


def _repo_with_refs(tmp_path):
    root = tmp_path / "r"
    _one_commit(root)
    (root / "a.txt").write_text("b\n")
    git(root, "commit", "-qam", "b")
    for name in ("memento/T-1", "person", "feature/deep/er"):
        git(root, "branch", name, "HEAD~1")
    git(root, "tag", "v1", "HEAD~1")
    git(root, "tag", "-a", "-m", "annotated", "v2")
    git(root, "symbolic-ref", "refs/heads/alias", "refs/heads/person")
    git(root, "pack-refs", "--all")
    git(root, "branch", "loose-one")  # beside the packed ones, a loose one
    return root


def _same_size_sha(root, ref: str) -> str:
    """Another commit's id, written in place of ``ref``'s file by hand, its times set back."""
    path = root / ".git" / ref
    st = path.stat()
    path.write_text(git(root, "rev-parse", "HEAD~1") + "\n")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    return ref


def _packed_edit(root):
    path = root / ".git" / "packed-refs"
    st = path.stat()
    text = path.read_text()
    old, new = git(root, "rev-parse", "refs/tags/v1"), git(root, "rev-parse", "HEAD")
    path.write_text(text.replace(f"{old} refs/tags/v1", f"{new} refs/tags/v1"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


CHANGES = {
    "nothing": lambda root: None,
    "branch moved by git": lambda root: git(root, "update-ref", "refs/heads/loose-one", "HEAD~1"),
    "loose ref rewritten by hand, times set back": lambda root: _same_size_sha(root, "refs/heads/loose-one"),
    "packed ref rewritten by hand, times set back": _packed_edit,
    "packed ref shadowed by a loose one": lambda root: git(root, "update-ref", "refs/tags/v1", "HEAD"),
    "tag deleted": lambda root: git(root, "tag", "-d", "v2"),
    "refs packed": lambda root: git(root, "pack-refs", "--all"),
    "symbolic ref aimed elsewhere": lambda root: git(root, "symbolic-ref", "refs/heads/alias", "refs/heads/main"),
    "ref made deep": lambda root: git(root, "update-ref", "refs/heads/a/b/c/d", "HEAD"),
    "ref file a link to another": lambda root: (
        (root / ".git/refs/heads/loose-one").unlink(),
        (root / ".git/refs/heads/loose-one").symlink_to("../../refs/heads/main")),
    "refs folder a link": lambda root: (
        shutil.move(root / ".git/refs/heads", root / "elsewhere"),
        (root / ".git/refs/heads").symlink_to(root / "elsewhere")),
    "packed-refs removed": lambda root: (root / ".git/packed-refs").unlink(),
    "config rewritten": lambda root: git(root, "config", "core.logAllRefUpdates", "false"),
    "an empty folder in refs": lambda root: (root / ".git/refs/tags/empty").mkdir(),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_refs_taken_again_are_what_git_reads_now_and_git_is_asked_whenever_their_files_moved(
        tmp_path, monkeypatch, change):
    from memento_core.git import state

    root = _repo_with_refs(tmp_path)
    snap = capture(root)
    assert snap.read_refs is not None and snap.refs == dict(snap.read_refs[1])
    CHANGES[change](root)
    asked = []
    real = state._refs
    monkeypatch.setattr(state, "_refs", lambda r: asked.append(r) or real(r))
    again = capture(root, like=snap)
    monkeypatch.undo()
    assert again.refs == capture(root).refs  # a differential: git's own reading, now
    assert asked == ([] if change == "nothing" else [root])
    if change == "nothing":
        assert again.read_refs is snap.read_refs


@pytest.mark.parametrize("link", ["refs/heads", "refs/heads/loose-one"])
def test_refs_behind_a_link_that_was_there_at_the_snapshot_are_read_by_git_again(tmp_path, monkeypatch, link):
    """A link in refs/ (a folder or a ref file, left by an earlier tick's agent): a branch moved in
    what it leads to changes no byte of .git/, and git is asked all the same."""
    from memento_core.git import state

    root = _repo_with_refs(tmp_path)
    real = root / ".git" / link
    elsewhere = tmp_path / "elsewhere"
    shutil.move(real, elsewhere)
    real.symlink_to(elsewhere)
    snap = capture(root)
    target = elsewhere / "loose-one" if link == "refs/heads" else elsewhere
    target.write_text(git(root, "rev-parse", "HEAD~1") + "\n")
    asked = []
    monkeypatch.setattr(state, "_refs", lambda r, real=state._refs: asked.append(r) or real(r))
    assert capture(root, like=snap).refs == capture(root).refs != snap.refs
    assert asked


def test_refs_are_not_taken_again_from_another_repository_nor_from_a_record(tmp_path):
    from memento_core.git import state

    root = _repo_with_refs(tmp_path)
    other = tmp_path / "other"
    shutil.copytree(root, other, symlinks=True)
    snap = capture(root)
    git(other, "update-ref", "refs/heads/loose-one", "HEAD~1")
    assert capture(other, like=snap).refs == capture(other).refs != snap.refs
    recorded = state.from_bytes(state.to_bytes(snap), root)
    assert recorded.read_refs is None  # a killed tick's record: git is asked
    assert capture(root, like=recorded).refs == snap.refs


def test_refs_read_while_their_files_move_are_never_taken_again(tmp_path, monkeypatch):
    """A parallel worker's agent may move a ref between the two reads of its files and git's: that
    reading is not one to take again (the move could be undone by the next look)."""
    from memento_core.git import state

    root = _repo_with_refs(tmp_path)
    real = state._refs
    first = git(root, "rev-parse", "refs/heads/loose-one")

    def moving(r):
        found = real(r)
        git(root, "update-ref", "refs/heads/loose-one", "HEAD~1")
        return found

    monkeypatch.setattr(state, "_refs", moving)
    snap = capture(root)
    monkeypatch.undo()
    assert snap.read_refs is None and snap.refs["refs/heads/loose-one"] == first
    git(root, "update-ref", "refs/heads/loose-one", first)  # its files as they were at the first read
    assert capture(root, like=snap).refs == capture(root).refs


def test_refs_replaced_in_a_snapshot_are_not_what_is_taken_again(tmp_path):
    """The crew replaces a worker's snapshot refs with those it reads (tick/crew.py): what is taken
    again is what git read with the files, never a snapshot's refs changed since."""
    from dataclasses import replace

    root = _repo_with_refs(tmp_path)
    snap = capture(root)
    changed = replace(snap, refs={"refs/heads/invented": "0" * 40})
    assert capture(root, like=changed).refs == capture(root).refs == snap.refs


def test_a_worktrees_own_refs_are_among_the_files_read(tmp_path):
    root = _repo_with_refs(tmp_path)
    tree = tmp_path / "wt"
    git(root, "worktree", "add", "-q", "-b", "memento/T-2", str(tree))
    snap = capture(tree)
    git(tree, "update-ref", "refs/bisect/bad", "HEAD~1")  # in the worktree's own git folder
    assert capture(tree, like=snap).refs == capture(tree).refs
    assert "refs/bisect/bad" in capture(tree).refs


# ---------------------------------------------------------------- what git would wait on for ever


def _for_each_ref_ends(root) -> bool:
    try:
        subprocess.run(["git", "-C", str(root), "for-each-ref"], capture_output=True, timeout=20)
    except subprocess.TimeoutExpired:
        return False
    return True


@pytest.mark.parametrize("shape", ["fifo", "link to a fifo", "link to a folder holding one", "refs a link",
                                   "socket", "loop of links"])
def test_what_git_would_wait_on_where_it_reads_refs_is_removed_and_nothing_outside(tmp_path, shape):
    import socket

    from memento_core.git.state import clear_specials

    root = _one_commit(tmp_path / "r")
    dot = root / ".git"
    outside = tmp_path / "outside"
    outside.mkdir()
    os.mkfifo(outside / "persons-fifo")
    held = []
    if shape == "fifo":
        os.mkfifo(dot / "refs/heads/evil")
    elif shape == "link to a fifo":
        (dot / "refs/tags/v1").symlink_to(outside / "persons-fifo")
    elif shape == "link to a folder holding one":
        (dot / "refs/heads/deep").symlink_to(outside)
    elif shape == "refs a link":
        shutil.copytree(dot / "refs", outside / "refs")
        os.mkfifo(outside / "refs/heads/evil")
        shutil.rmtree(dot / "refs")
        (dot / "refs").symlink_to(outside / "refs")
    elif shape == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(dot / "logs/HEAD.sock"))
        held.append(sock)
    else:
        (dot / "refs/heads/loop").symlink_to(dot / "refs/heads")
        os.mkfifo(dot / "logs/refs/heads/x")
    said = clear_specials(dot, dot, "ref: refs/heads/main")
    assert said.startswith("made .git/") and "a FIFO, a socket or a device" in said, said
    assert (outside / "persons-fifo").exists()  # what a link led to is never removed
    assert _for_each_ref_ends(root) and (dot / "refs").is_dir()
    assert clear_specials(dot, dot, "ref: refs/heads/main") == ""  # nothing left
    for sock in held:
        sock.close()


@pytest.mark.parametrize("where", ["refs/heads/evil", "refs/heads/main", "logs/HEAD", "HEAD", "packed-refs"])
def test_put_back_removes_what_git_would_wait_on_before_asking_git_and_says_so(tmp_path, where):
    from memento_core.git.state import put_back

    root = _one_commit(tmp_path / "r")
    git(root, "tag", "v1")  # loose, as the branch: a FIFO put at packed-refs takes no ref away
    snap = capture(root)
    path = root / ".git" / where
    if path.exists():
        path.unlink()
    os.mkfifo(path)
    found = put_back(root, snap, tmp_path / "aside")  # would wait for ever on the FIFO, if it were there
    assert f"made .git/{where} a FIFO" in found.replaced, found.replaced
    others = {k: v for k, v in snap.refs.items() if k != snap.branch}  # HEAD's branch: the guards fold it
    assert {k: v for k, v in capture(root).refs.items() if k != snap.branch} == others
    assert (root / ".git/HEAD").read_text() == f"{snap.head}\n" and _for_each_ref_ends(root)
    assert (root / ".git/HEAD").stat().st_mode & 0o7777 == 0o644


def test_a_repository_without_anything_git_would_wait_on_is_left_as_it_is(tmp_path):
    from memento_core.git.state import clear_specials

    root = _one_commit(tmp_path / "r")
    git(root, "tag", "v1")
    (root / ".git/refs/heads/alias").symlink_to("main")  # git's old symbolic ref: a link that stays
    before = sorted(str(p) for p in (root / ".git").rglob("*"))
    assert clear_specials(root / ".git", root / ".git", "ref: refs/heads/main") == ""
    assert sorted(str(p) for p in (root / ".git").rglob("*")) == before


def test_a_fifo_in_a_worktrees_own_git_folder_is_removed_and_eleven_are_named_ten_and_one_more(tmp_path):
    from memento_core.git.state import clear_specials

    root = _one_commit(tmp_path / "r")
    tree = tmp_path / "wt"
    git(root, "worktree", "add", "-q", "-b", "memento/T-2", str(tree))
    own = root / ".git" / "worktrees" / "wt"
    tags = [f".git/refs/tags/t{i}" for i in range(10)]
    for rel in tags:
        os.mkfifo(root / rel)
    said = clear_specials(own, root / ".git", "ref: refs/heads/memento/T-2")
    assert said.split(" a FIFO")[0] == "made " + ", ".join(tags)  # ten: all
    for rel in tags:
        os.mkfifo(root / rel)
    (own / "ORIG_HEAD").unlink(missing_ok=True)
    os.mkfifo(own / "ORIG_HEAD")  # sorts after the tags: the one more
    said = clear_specials(own, root / ".git", "ref: refs/heads/memento/T-2")
    assert said.split(" a FIFO")[0] == "made " + ", ".join(tags) + " and 1 more", said
    assert not os.path.lexists(own / "ORIG_HEAD") and _for_each_ref_ends(tree)


def test_links_that_lead_back_into_their_own_folder_are_walked_once(tmp_path):
    """Two links to their own folder at each level would make 2**40 paths before the kernel's
    limit of links stops a walk that follows them; each folder is walked once."""
    from memento_core.git.state import clear_specials

    root = _one_commit(tmp_path / "r")
    heads = root / ".git" / "refs" / "heads"
    (heads / "a").symlink_to(".")
    (heads / "b").symlink_to(".")
    os.mkfifo(heads / "evil")
    done = subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; "
                           "from memento_core.git.state import clear_specials as c; "
                           "print(c(Path(sys.argv[1]), Path(sys.argv[1]), 'ref: refs/heads/main'))", str(root / ".git")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "made .git/refs/heads/evil a FIFO" in done.stdout, done.stdout + done.stderr
    assert clear_specials(root / ".git", root / ".git", "ref: refs/heads/main") == ""


def test_a_head_the_agent_moved_is_still_seen_moved_when_a_fifo_was_removed_too(tmp_path):
    from memento_core.git.state import put_back
    from memento_core.tick.guards import git_damage

    root = _one_commit(tmp_path / "r")
    git(root, "branch", "other")
    snap = capture(root)
    git(root, "symbolic-ref", "HEAD", "refs/heads/other")
    os.mkfifo(root / ".git" / "refs" / "heads" / "evil")
    found = put_back(root, snap, tmp_path / "aside")
    said = git_damage(snap, found)
    assert "moved HEAD from refs/heads/main to refs/heads/other" in said and "refs/heads/evil" in said, said
    assert (root / ".git/HEAD").read_text() == "ref: refs/heads/main\n"
