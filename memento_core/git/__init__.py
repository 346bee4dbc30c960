"""Every git command Memento runs, one module per concern (SPEC §4, §12, §13).

Nothing here knows a document format (the plan, the status log, memento.toml): callers pass
what git needs (an author as (name, email), paths, messages). Each module imports only those
below it in this table (pyproject.toml's import-linter contract says so).

    worktrees.py    the parallel workers' git worktrees: add, remove, rebase, bring into main
    state.py        git's own state (.git/: config, hooks, refs, HEAD, index): capture, restore,
                    and a repository swapped for a decoy put back
    replay.py       a host's unpushed commits replayed onto the remote's (a rebase in memory)
    commit_fast.py  the fast path of commit.py: a commit built in Python, one unpack-objects
    commit.py       Memento's commits with plumbing (exact paths, no hook), the author, and
                    the agent's commits folded back (fold_commits)
    rollback.py     a failed attempt undone: saved under logs/rollback/, then restored
    history.py      the log: subjects, commits since a base, a commit's diff, the tick trailer
    changes.py      what changed since the snapshot (FileChange), and the bytes it adds
    status.py       git status on a scrubbed index, untracked, ignored, tracked, changed from HEAD
    trees.py        a commit's trees read in one command and edited in memory
    merge.py        one file's three-way merge: git merge-file, and its fast path in Python
    objects.py      object ids, objects read and written in bulk, files hashed into blobs, the
                    loose objects packed once there are many
    index.py        the guards' private index copy (scrubbed_index), made from the index's bytes
    repo.py         where the repository is (repo_dirs), HEAD, the empty tree
    run.py          the git binary, the hardening (HARDENING, git_env), run_git
    patterns.py     .gitignore-like path patterns, matched with no git
    remote.py       what a remote said refusing a push

The differential tests against git itself: tests/core/git/test_<module>.py.
"""
