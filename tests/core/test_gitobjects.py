"""gitobjects against real git: what it reads and writes is what git's own commands read and make."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memento_core import gitobjects, gitops
from memento_core.errors import MementoError


def git(root: Path, *args: str, input: bytes | None = None, env: dict | None = None) -> str:
    proc = subprocess.run(["git", "-C", str(root), *args], input=input, capture_output=True, check=False, env=env)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout.decode("utf-8", "surrogateescape").strip()


def repo(tmp_path: Path, fmt: str = "sha1") -> Path:
    root = tmp_path / f"repo-{fmt}"
    git(tmp_path, "init", "-q", "-b", "main", f"--object-format={fmt}", str(root))
    files = {"README.md": "hello\n", "docs/MASTER_PLAN.md": "# plan\n- [ ] `T-1` one\n",
             "docs/guide/deep.md": "deep\n", "docs-extra": "a file that sorts between docs and docs/\n",
             "docs.txt": "sorts before the docs folder's name plus '/'\n", "bin/run.sh": "#!/bin/sh\n"}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "bin/run.sh").chmod(0o755)
    (root / "link").symlink_to("README.md")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "seed")
    return root


def git_tree_with(root: Path, changes: dict[str, bytes]) -> str:
    """The tree git itself makes from HEAD with ``changes`` (path -> bytes) in a private index."""
    index = root / ".git" / "test-index"
    env = {**gitops.git_env(), "GIT_INDEX_FILE": str(index)}
    git(root, "read-tree", "HEAD", env=env)
    for path, data in changes.items():
        oid = git(root, "hash-object", "-w", "--stdin", input=data)
        git(root, "update-index", "--add", "--cacheinfo", f"100644,{oid},{path}", env=env)
    tree = git(root, "write-tree", env=env)
    index.unlink()
    return tree


@pytest.mark.parametrize("fmt", ["sha1", "sha256"])
def test_a_commit_built_here_is_the_one_git_makes(tmp_path, git_identity, fmt):
    root = repo(tmp_path, fmt)
    paths = ["docs/MASTER_PLAN.md", "docs/guide/deep.md", "README.md"]
    at = gitobjects.read_at(root, "HEAD", paths)
    assert at.commit == git(root, "rev-parse", "HEAD") and at.tree == git(root, "rev-parse", "HEAD^{tree}")
    assert at.files["docs/MASTER_PLAN.md"][2] == b"# plan\n- [ ] `T-1` one\n"
    assert at.files["docs/MASTER_PLAN.md"][1] == git(root, "rev-parse", "HEAD:docs/MASTER_PLAN.md")

    changes = {"docs/MASTER_PLAN.md": b"# plan\n- [~] `T-1` one\n", "docs/guide/deep.md": b"deeper\n"}
    tree, objects = gitobjects.with_files(at, {p: (b"100644", d) for p, d in changes.items()}, fmt)
    assert tree == git_tree_with(root, changes)  # the same bytes git writes, so the same id

    ident = gitops.identity_env(root)
    assert gitobjects.can_build(ident)
    data = gitobjects.commit_bytes(tree, [at.commit], "memento: claim T-1 on h1\n\nnonce\n", ident)
    ids = gitobjects.write_objects(root, [*objects, ("commit", data)])
    sha = ids[-1]
    assert git(root, "cat-file", "-t", sha) == "commit"
    assert git(root, "rev-parse", f"{sha}^{{tree}}") == tree and git(root, "rev-parse", f"{sha}^") == at.commit
    assert git(root, "show", f"{sha}:docs/MASTER_PLAN.md") == "# plan\n- [~] `T-1` one"
    assert git(root, "log", "-1", "--format=%an <%ae>|%cn <%ce>|%s", sha) == \
        "Test Person <test@example.invalid>|Test Person <test@example.invalid>|memento: claim T-1 on h1"
    # Unchanged entries keep their modes: the executable script, the link, the other folders.
    assert git(root, "diff-tree", "-r", "--name-only", at.commit, sha).split() == \
        ["docs/MASTER_PLAN.md", "docs/guide/deep.md"]
    git(root, "update-ref", "refs/heads/claimed", sha)  # reachable, so fsck checks it
    git(root, "fsck", "--strict", "--no-dangling")


def test_reading_a_path_the_commit_lacks_or_a_rev_that_is_not_a_commit(tmp_path, git_identity):
    root = repo(tmp_path)
    at = gitobjects.read_at(root, "HEAD", ["docs/none.md", "nowhere/file.md", "README.md/inside"])
    assert at.files == {"docs/none.md": None, "nowhere/file.md": None, "README.md/inside": None}
    with pytest.raises(MementoError):
        gitobjects.read_at(root, "HEAD^{tree}", ["README.md"])
    with pytest.raises(MementoError):
        gitobjects.with_files(at, {"nowhere/file.md": (b"100644", b"x")}, "sha1")


def test_identities_git_would_clean_and_dates_from_the_environment_go_to_git(monkeypatch):
    ok = {"GIT_AUTHOR_NAME": "A Person", "GIT_AUTHOR_EMAIL": "a@example.invalid",
          "GIT_COMMITTER_NAME": "A Person", "GIT_COMMITTER_EMAIL": "a@example.invalid"}
    monkeypatch.delenv("GIT_AUTHOR_DATE", raising=False)
    monkeypatch.delenv("GIT_COMMITTER_DATE", raising=False)
    assert gitobjects.can_build(ok)
    for name in ("Jr.", " padded", "a <b>", "two\nlines", "'quoted'", ""):
        assert not gitobjects.can_build({**ok, "GIT_AUTHOR_NAME": name}), name
    monkeypatch.setenv("GIT_COMMITTER_DATE", "@1700000000 +0000")
    assert not gitobjects.can_build(ok)


def test_a_pack_whose_bytes_changed_is_refused(tmp_path, git_identity, monkeypatch):
    """The pack's own hash is git's check: a bit changed after it was made fails the write (a
    loose object git unpacked before it reached the end may stay, unreferenced)."""
    root = repo(tmp_path)
    real = gitops.run_git
    for at in (-1, 12):  # the trailer, then the object's header

        def corrupting(root_, args, at=at, **kw):
            if args[:1] == ["unpack-objects"]:
                data = bytearray(kw["input"])
                data[at] ^= 1
                kw["input"] = bytes(data)
            return real(root_, args, **kw)

        monkeypatch.setattr(gitops, "run_git", corrupting)
        with pytest.raises(MementoError, match="unpack-objects"):
            gitobjects.write_objects(root, [("blob", b"checked\n")])
    monkeypatch.setattr(gitops, "run_git", real)
    assert gitobjects.write_objects(root, [("blob", b"checked\n")]) == [git(root, "hash-object", "--stdin",
                                                                            input=b"checked\n")]
