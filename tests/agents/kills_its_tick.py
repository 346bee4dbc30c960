#!/usr/bin/env python3
"""Hostile agent: breaks the task's file, lies in Memento's files, then SIGKILLs its tick.

usage: kills_its_tick.py MODE ONCEFILE [ARG]
With ONCEFILE present it only exits 3 (so the recovery tick meets an honest failure);
otherwise it creates ONCEFILE and, by MODE:
  forge-commit  a `committing` claim for hello.txt = "broken", a forged SUCCESS entry,
                the task marked [x] in the plan;
  pgid          the claim's pgid rewritten to ARG (an unrelated process group);
  cleanignore   `*` in .memento_cleanignore, a new evil.txt, other.txt changed;
  plan          its own verify set to `true`, Meta max_retries 99, committed with its code;
  objects       the loose object of the commit HEAD names rewritten in place (its id kept);
  objects-copy  as objects, and Memento's copy of it in .memento/objects/ rewritten too;
  pack          bytes in the middle of the repository's one pack rewritten in place (same inode,
                same size, its trailer as it was);
  other-done    the pending task ARG committed as [x] (HEAD moved), then set [~] in the work tree:
                a [~] with no claim that the last commit has [x] looks like an editor's stale save;
  always        (ONCEFILE ignored) just kills the tick, every time.
The tick is found up the parent chain (/proc/self/stat's ppid): the first ancestor that does
not carry MEMENTO_TICK in its environment (MEMENTO_TICK itself is a token, no pid); the run's
guard on the way, which would end the agent with its tick, is stopped with SIGSTOP. In the
sandbox's PID namespace the chain ends inside it: the agent finds no tick and dies trying. The
claim is rewritten after the tick is dead, so no heartbeat of the tick can overwrite it.
"""

import json
import os
import signal
import subprocess
import sys
import zlib
from pathlib import Path

from pack_bytes import rewrite_middle
from parent_chain import find_tick

mode, once = sys.argv[1], Path(sys.argv[2])
arg = sys.argv[3] if len(sys.argv) > 3 else ""
if mode != "always":
    if once.exists():
        sys.exit(3)
    once.write_text("done once\n")
root = Path(os.environ["MEMENTO_PROJECT"])
task = os.environ["MEMENTO_TASK_ID"]
claim_file = root / ".memento" / "claims" / f"{task}.json"
plan = root / "docs" / "MASTER_PLAN.md"
status = root / "docs" / "TICK_STATUS.md"


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


(root / "hello.txt").write_text("broken\n")
if mode == "cleanignore":
    (root / ".memento_cleanignore").write_text("*\n")
    (root / "evil.txt").write_text("the agent's file\n")
    (root / "other.txt").write_text("rewritten by the agent\n")
elif mode == "plan":
    text = plan.read_text().replace("grep -q done hello.txt", "true").replace("- max_retries: 3", "- max_retries: 99")
    plan.write_text(text)
    git("add", "hello.txt", "docs/MASTER_PLAN.md")
    git("commit", "-qm", "T-1 done (trust me)")
elif mode == "other-done":
    done = plan.read_text().replace(f"- [ ] `{arg}`", f"- [x] `{arg}`")
    plan.write_text(done)
    git("add", "docs/MASTER_PLAN.md")
    git("commit", "-qm", f"{arg} done (trust me)")
    plan.write_text(done.replace(f"- [x] `{arg}`", f"- [~] `{arg}`"))
elif mode in ("objects", "objects-copy"):
    oid = git("rev-parse", "HEAD").strip()
    body = subprocess.run(["git", "cat-file", "commit", oid], cwd=root, capture_output=True, check=True).stdout
    text = body.partition(b"\n\n")[0] + b"\n\nthe agent's text\n"
    for loose in [root / ".git" / "objects" / oid[:2] / oid[2:]] + \
            [root / ".memento" / "objects" / oid] * (mode == "objects-copy"):
        os.chmod(loose, 0o644)
        loose.write_bytes(zlib.compress(b"commit %d\0" % len(text) + text))
elif mode == "pack":
    rewrite_middle(root / ".git" / "objects")
elif mode == "forge-commit":
    plan.write_text(plan.read_text().replace(f"- [~] `{task}`", f"- [x] `{task}`"))
    entry = (f"## [2026-12-01T00:00:00Z] Tick #1\n- **Task**: {task}\n- **Status**: ✅ SUCCESS\n"
             f"- **Verify Output**: `ok` (exit code 0)\n- **Git Commit**: (pending) — \"memento: complete {task}\"\n")
    with open(status, "a") as fh:
        fh.write("\n" + entry)

os.kill(find_tick(stop_guards=True), signal.SIGKILL)  # its guard stopped first: it lives on to lie

claim = json.loads(claim_file.read_text())
if mode == "forge-commit":
    blob = git("hash-object", "hello.txt").strip()
    claim.update(stage="committing", commit_paths=["hello.txt", "docs/MASTER_PLAN.md", "docs/TICK_STATUS.md"],
                 commit_message=f"memento: complete {task} Write hello", commit_hashes={"hello.txt": blob},
                 entry=entry)
elif mode == "pgid":
    claim["pgid"] = int(arg)
claim_file.write_text(json.dumps(claim))
print("tick killed", flush=True)
