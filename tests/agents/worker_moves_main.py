#!/usr/bin/env python3
"""Hostile agent for parallel workers: does its task, and task HOSTILE also points the main
branch at a commit of its own (from inside its worktree, where HEAD is its memento/<ID> branch).

usage: worker_moves_main.py DIR HOSTILE_ID [on-go|elsewhere|elsewhere-fail|elsewhere-wait|detach]   (writes DIR/<TASK>.started first)

With `on-go` the move waits for its moment: HOSTILE commits, writes DIR/committed and waits for
DIR/go (the test creates it while another worker's result is being brought into main), then
moves the main branch and writes DIR/moved; the other tasks end only once DIR/committed exists.
With `elsewhere` the main branch is pointed at a commit on no branch (its worktree's tree, no parent);
`elsewhere-fail` then exits 1 (its guards never look); `elsewhere-wait` moves only once another
task's agent has ended (it writes DIR/<TASK>.done last), then waits until someone else's look has
put main back. With `detach` the main work tree's HEAD is
detached one commit back (the main branch itself untouched).
"""

import os
import subprocess
import sys
import time
from pathlib import Path

scratch, hostile = Path(sys.argv[1]), sys.argv[2]
on_go = len(sys.argv) > 3 and sys.argv[3] == "on-go"
elsewhere = len(sys.argv) > 3 and sys.argv[3] in ("elsewhere", "elsewhere-fail", "elsewhere-wait")
task = os.environ["MEMENTO_TASK_ID"]


def wait_for(path: Path) -> None:
    deadline = time.monotonic() + 30
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.02)


(scratch / f"{task}.started").write_text(f"{os.getpid()}\n{os.getcwd()}\n")
Path(f"{task}.txt").write_text(f"done {task}\n")
if task == hostile and len(sys.argv) > 3 and sys.argv[3] == "detach":
    common = subprocess.run(["git", "rev-parse", "--path-format=absolute", "--git-common-dir"], capture_output=True,
                            text=True, check=True).stdout.strip()
    main = Path(common).parent
    back = subprocess.run(["git", "rev-parse", "HEAD~1"], cwd=main, capture_output=True, text=True,
                          check=True).stdout.strip()
    subprocess.run(["git", "update-ref", "--no-deref", "HEAD", back], cwd=main, check=True)
    (scratch / "moved").write_text(back)
elif task == hostile and elsewhere:
    if sys.argv[3] == "elsewhere-wait":  # once the other agents have ended: the move is this one's alone
        deadline = time.monotonic() + 30
        while not list(scratch.glob("*.done")) and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.3)
    sha = subprocess.run(["git", "commit-tree", "HEAD^{tree}", "-m", "agent: on main"], capture_output=True,
                         text=True, check=True).stdout.strip()
    subprocess.run(["git", "update-ref", "refs/heads/main", sha], check=True)
    (scratch / "moved").write_text(sha)
    if sys.argv[3] == "elsewhere-fail":
        sys.exit(1)
    deadline = time.monotonic() + 30
    while sys.argv[3] == "elsewhere-wait" and time.monotonic() < deadline and subprocess.run(
            ["git", "rev-parse", "refs/heads/main"], capture_output=True, text=True).stdout.strip() == sha:
        time.sleep(0.02)
elif task == hostile:
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "agent: on main"], check=True)
    sha = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    if on_go:
        (scratch / "committed").write_text(sha)
        wait_for(scratch / "go")
    subprocess.run(["git", "update-ref", "refs/heads/main", sha], check=True)
    (scratch / "moved").write_text(sha)
    print(f"moved main to {sha}")
elif on_go:
    wait_for(scratch / "committed")
elif len(sys.argv) > 3 and sys.argv[3] == "elsewhere-wait":
    (scratch / f"{task}.done").write_text("")
