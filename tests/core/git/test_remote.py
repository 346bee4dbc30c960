"""remote.py against real git: what a remote said refusing a push, read from ``git push
--porcelain``'s own output as the fleet and a phase's push read it (a pre-receive hook's lines,
git's reason for the ref), and a lease git itself refused."""

from __future__ import annotations

import subprocess
from pathlib import Path

from memento_core.git.remote import remote_said

from .conftest import git


def _push(clone: Path, *args: str) -> str:
    """git push --porcelain's stdout and stderr, as the fleet reads them (a plain git: run_git's
    hardening would reach the local remote's receive-pack and turn its hook off)."""
    proc = subprocess.run(["git", "-C", str(clone), "push", "--porcelain", "origin", *args], capture_output=True,
                          text=True)
    assert proc.returncode != 0, proc.stderr
    return proc.stdout + proc.stderr


def _remote_and_clone(tmp_path: Path) -> tuple[Path, Path]:
    bare, clone = tmp_path / "remote.git", tmp_path / "clone"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(tmp_path, "init", "-q", "-b", "main", str(clone))
    (clone / "a.txt").write_text("a\n")
    git(clone, "add", "a.txt")
    git(clone, "commit", "-qm", "a")
    git(clone, "remote", "add", "origin", str(bare))
    git(clone, "push", "-q", "origin", "main")
    return bare, clone


def test_a_hook_s_refusal_is_its_remote_lines_then_git_s_reason(tmp_path, git_identity):
    bare, clone = _remote_and_clone(tmp_path)
    hook = bare / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'main is protected:' >&2\necho >&2\necho '  open a pull request' >&2\nexit 1\n")
    hook.chmod(0o755)
    (clone / "a.txt").write_text("b\n")
    git(clone, "commit", "-qam", "b")
    out = _push(clone, "main")
    said = remote_said(out)
    assert said == "main is protected:; open a pull request; (pre-receive hook declined)", out
    assert remote_said(out, any_rejection=True) == said  # no rejection of git's own besides


def test_a_lease_git_refuses_is_said_only_when_any_rejection_is_asked_for(tmp_path, git_identity):
    bare, clone = _remote_and_clone(tmp_path)
    old = git(clone, "rev-parse", "HEAD")
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(bare), str(other))
    (other / "a.txt").write_text("theirs\n")
    git(other, "commit", "-qam", "theirs")
    git(other, "push", "-q", "origin", "main")
    git(clone, "fetch", "-q", "origin")
    (clone / "a.txt").write_text("mine\n")
    git(clone, "commit", "-qam", "mine")
    out = _push(clone, f"--force-with-lease=main:{old}", "main")
    assert "[rejected]" in out, out
    assert remote_said(out) == ""  # the remote said nothing: git's own check refused it
    assert remote_said(out, any_rejection=True) == "(stale info)"


def test_blank_remote_lines_and_a_push_that_went_through_say_nothing():
    assert remote_said("remote: \nremote:\nTo /somewhere\n=\trefs/heads/main:refs/heads/main\t[up to date]\nDone\n") == ""
