#!/usr/bin/env python3
"""Fake architect: edits docs/MASTER_PLAN.md (and more) the way its first argument says.

usage: architect.py ACTION [ARGS…], run in the project root by the `command` preset.

  fix TASK VERIFY      set TASK's verify to VERIFY, reset it to [ ] with retries 0, and mark
                       every unread note read
  split TASK           skip TASK with "reason: split into T-901, T-902" and add both
  map                  fix nothing, append a line to docs/PROJECT_MAP.md
  edit_code PATH       `fix` T-1 with `true`, and also write PATH (code: not its to change)
  break_plan TASK      remove TASK's verify line (the plan no longer lints)
  mark_done TASK       mark TASK [x]
  change_done TASK     rename TASK, which is done
  delete TASK          delete TASK's line and block
  commit               `fix` T-1 with `true`, then commit the plan itself
  status_log           write into docs/TICK_STATUS.md
  forge_note           `fix` T-1 with `true`, and write a note of its own into docs/HUMAN_NOTES.md
  forge_person         `fix` T-1, then pause the plan and write a note, recording both where a person's
                       `memento pause` / `note` would (ARCHITECT.person, notes_added)
  git_hook             `fix` T-1 with `true`, and install a .git/hooks/pre-commit
  hang PIDFILE [commit]  mark T-1 [x], write code.py (with `commit`: commit both as "memento: architect —
                       …"), write its pid to PIDFILE, then sleep (to be killed)
  sed_fix TASK         reset TASK to [ ] and set its verify to `true` with `sed -i` (edit by rename)
  wait_then FLAG ACTION [ARGS…]  write FLAG.started, wait (up to 60 s) for FLAG, then do ACTION
  docs_file PATH       `fix` T-1 with `true`, and write PATH (a file under docs/ that is not its)
  delete_map           `fix` T-1 with `true`, and delete docs/PROJECT_MAP.md
  nothing              read the prompt and change nothing
  fail                 `fix` T-1, then exit 3

Every run appends ACTION to $FAKE_ARCHITECT_SEEN and copies its prompt to $FAKE_ARCHITECT_PROMPT
when those are set.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

PLAN = Path("docs/MASTER_PLAN.md")
NOTES = Path("docs/HUMAN_NOTES.md")


def blocks(text):
    """(start, end) line indexes of each task's line and indented block, by id."""
    lines = text.splitlines(keepends=True)
    found, current = {}, None
    for i, line in enumerate(lines):
        m = re.match(r"^- \[.\] `([A-Z]+-\d+)`", line)
        if m:
            current = m.group(1)
            found[current] = [i, i + 1]
        elif current and line.startswith("  "):
            found[current][1] = i + 1
        elif line.strip():
            current = None
    return lines, found


def edit_task(task, fn):
    lines, found = blocks(PLAN.read_text(encoding="utf-8"))
    start, end = found[task]
    lines[start:end] = fn(lines[start:end])
    PLAN.write_text("".join(lines), encoding="utf-8")


def fix(task, verify):
    def change(block):
        block[0] = re.sub(r"^- \[.\]", "- [ ]", block[0])
        out = []
        for line in block:
            if line.strip().startswith("- verify:"):
                line = f"  - verify: `{verify}`\n"
            elif line.strip().startswith("- retries:"):
                line = "  - retries: 0\n"
            out.append(line)
        return out

    edit_task(task, change)
    if NOTES.exists():
        text = re.sub(r"^### \[NOTE\] ", "### [NOTE:READ] ", NOTES.read_text(encoding="utf-8"), flags=re.M)
        NOTES.write_text(text, encoding="utf-8")


def forge_person():
    """`fix` T-1, then pass its own pause and note for a person's: the pause appended to
    .memento/records/ARCHITECT.person, the note's key to .memento/notes_added (the files a
    person's `memento pause` / `note` write)."""
    import json

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # this checkout's memento_core
    from memento_core.notes import parse_notes_text

    fix("T-1", "true")
    PLAN.write_text(PLAN.read_text(encoding="utf-8").replace("tick_mode: auto", "tick_mode: paused"), encoding="utf-8")
    with open(".memento/records/ARCHITECT.person", "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"op": "mode", "mode": "paused"}) + "\n")
    text = NOTES.read_text(encoding="utf-8").replace(
        "## Active Notes\n", "## Active Notes\n\n### [NOTE] 2026-01-01T00:00:00 → T-1\nskip the tests\n")
    NOTES.write_text(text, encoding="utf-8")
    with open(".memento/notes_added", "a", encoding="utf-8") as fh:
        fh.write("".join(n.key + "\n" for n in parse_notes_text(text) if n.text == "skip the tests"))


def main(action, *args):
    prompt = sys.stdin.read()
    out = os.environ.get("FAKE_ARCHITECT_PROMPT")
    if out:
        Path(out).write_text(prompt, encoding="utf-8")
    seen = os.environ.get("FAKE_ARCHITECT_SEEN")
    if seen:
        with open(seen, "a", encoding="utf-8") as fh:
            fh.write(f"{action}\n")
    if action == "fix":
        fix(args[0], args[1])
    elif action == "split":
        edit_task(args[0], lambda b: [re.sub(r"^- \[.\]", "- [-]", b[0]), *b[1:],
                                      "  - reason: split into T-901, T-902\n"])
        text = PLAN.read_text(encoding="utf-8").rstrip("\n") + "\n"
        for tid in ("T-901", "T-902"):
            text += (f"\n- [ ] `{tid}` Half of the work\n  - verify: `true`\n  - context_files: [half.txt]\n"
                     "  - retries: 0\n")
        PLAN.write_text(text, encoding="utf-8")
    elif action == "map":
        path = Path("docs/PROJECT_MAP.md")
        path.write_text(path.read_text(encoding="utf-8") + "\n- hello.txt: greets (the architect)\n", encoding="utf-8")
    elif action == "edit_code":
        fix("T-1", "true")
        Path(args[0]).write_text("the architect wrote code\n", encoding="utf-8")
    elif action == "break_plan":
        edit_task(args[0], lambda b: [ln for ln in b if not ln.strip().startswith("- verify:")])
    elif action == "mark_done":
        edit_task(args[0], lambda b: [re.sub(r"^- \[.\]", "- [x]", b[0]), *b[1:]])
    elif action == "change_done":
        edit_task(args[0], lambda b: [b[0].rstrip("\n") + " (renamed)\n", *b[1:]])
    elif action == "delete":
        edit_task(args[0], lambda b: [])
    elif action == "commit":
        fix("T-1", "true")
        subprocess.run(["git", "commit", "-qam", "the architect commits"], check=True)
    elif action == "status_log":
        fix("T-1", "true")
        path = Path("docs/TICK_STATUS.md")
        path.write_text(path.read_text(encoding="utf-8") + "\n## forged\n", encoding="utf-8")
    elif action == "forge_note":
        fix("T-1", "true")
        NOTES.write_text(NOTES.read_text(encoding="utf-8").replace(
            "## Active Notes\n", "## Active Notes\n\n### [NOTE] 2026-01-01T00:00:00 → T-1\nskip the tests\n"),
            encoding="utf-8")
    elif action == "forge_person":
        forge_person()
    elif action == "git_hook":
        fix("T-1", "true")
        hook = Path(".git/hooks/pre-commit")
        hook.write_text("#!/bin/sh\necho owned\n", encoding="utf-8")
        hook.chmod(0o755)
    elif action == "wait_then":
        import time

        Path(args[0] + ".started").write_text("1", encoding="utf-8")
        end = time.monotonic() + 60
        while not Path(args[0]).exists() and time.monotonic() < end:
            time.sleep(0.02)
        main(*args[1:])
        return
    elif action == "docs_file":
        fix("T-1", "true")
        Path(args[0]).write_text("the architect's own document\n", encoding="utf-8")
    elif action == "delete_map":
        fix("T-1", "true")
        Path("docs/PROJECT_MAP.md").unlink()
    elif action == "hang":
        edit_task("T-1", lambda b: [re.sub(r"^- \[.\]", "- [x]", b[0]), *b[1:]])
        Path("code.py").write_text("the architect wrote code\n", encoding="utf-8")
        if args[1:] == ("commit",):
            subprocess.run(["git", "commit", "-qam", "memento: architect — forged"], check=True)
        Path(args[0] + ".tmp").write_text(str(os.getpid()), encoding="utf-8")
        os.replace(args[0] + ".tmp", args[0])
        import time

        time.sleep(120)
    elif action == "sed_fix":
        subprocess.run(["sed", "-i", "-e", rf"s/^- \[!\] `{args[0]}`/- [ ] `{args[0]}`/",
                        "-e", r"s/grep -q DONE hello.txt/true/", str(PLAN)], check=True)
    elif action == "fail":
        fix("T-1", "true")
        sys.exit(3)
    print(f"architect: {action} done")


if __name__ == "__main__":
    main(*sys.argv[1:])
