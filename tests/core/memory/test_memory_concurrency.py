"""20 concurrent `memento memory write` processes: one commit each, nothing lost, nothing left over."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.core.memory.memhelp import commit_count, mem_git


def test_twenty_concurrent_writers_distinct_and_identical_paths(no_git_identity, ws):
    before = commit_count(ws)
    env = {**os.environ}
    env.pop("MEMENTO_TASK_ID", None)
    procs = []
    for i in range(20):
        # Half on their own entry, half on one shared entry (each with its own paragraph).
        path = f"knowledge/lessons/distinct-{i}.md" if i % 2 else "knowledge/lessons/shared.md"
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "memento_core.cli", "memory", "write", path,
             "--summary", f"lesson number {i}", "--source", f"T-{i}"],
            cwd=ws.root, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, env=env))
    for i, proc in enumerate(procs):
        proc.stdin.write(f"Writer {i} learned fact number {i * 7919} about topic {i}.\n")
        proc.stdin.close()
    results = [(p.wait(timeout=120), p.stdout.read(), p.stderr.read()) for p in procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    assert [code for code, _, _ in results] == [0] * 20, results
    assert commit_count(ws) == before + 20
    subjects = mem_git(ws, "log", "--format=%s").splitlines()
    assert sorted(s for s in subjects if s.startswith("lesson number")) == sorted(
        f"lesson number {i}" for i in range(20))
    shared = (ws.memory_dir / "knowledge/lessons/shared.md").read_text()
    for i in range(0, 20, 2):
        assert f"fact number {i * 7919} about topic {i}." in shared
    for i in range(1, 20, 2):
        text = (ws.memory_dir / f"knowledge/lessons/distinct-{i}.md").read_text()
        assert f"fact number {i * 7919} about topic {i}." in text
    # Nothing half-done: no index.lock, no temp file, a clean tree, a sound repository.
    assert not (ws.memory_dir / ".git" / "index.lock").exists()
    leftovers = [p for p in ws.memory_dir.rglob("*") if p.name.endswith(".tmp") or "memento-index" in p.name]
    assert leftovers == []
    assert mem_git(ws, "status", "--porcelain") == ""
    mem_git(ws, "fsck", "--no-dangling")
    # No identity anywhere: the store commits as Memento.
    assert set(mem_git(ws, "log", "--format=%an <%ae>").splitlines()) == {"Memento <memento@localhost>"}


def test_an_index_lock_left_by_a_killed_git_is_cleared(ws):
    from memento_core.memory.writes import write_entry

    lock = ws.memory_dir / ".git" / "index.lock"
    lock.write_text("")
    os.utime(lock, (1_000_000_000, 1_000_000_000))
    result = write_entry(ws, "knowledge/lessons/a.md", "A fact.\n", "a fact")
    assert result.commit and not lock.exists()
    assert mem_git(ws, "status", "--porcelain") == ""
