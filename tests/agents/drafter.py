#!/usr/bin/env python3
"""Fake plan drafter (SPEC §17): writes a draft of docs/MASTER_PLAN.md the way the brief says.

usage: drafter.py, run in the project root by the `command` preset, the prompt on stdin. The mode
is the word after ``MODE:`` in the brief (the prompt holds the brief), or $FAKE_DRAFTER_MODE:

  good           append a phase with two tasks (T-<n+1>, T-<n+2>) whose verify fails now
                 (`test -f` of the files they would write), and a module to PROJECT_MAP.md
  vacuous        like good, but the second task's verify is `true` (it proves nothing)
  no_verify      like good, the second task has no verify
  no_context     like good, the second task has no context_files
  dup_id         like good, the second task reuses the id of the first task in the plan
  unknown_phase  like good, the new phase depends on "Phase 99"
  cycle          like good, the two new tasks depend on each other
  born_done      like good, the first task is born [x]
  change_task    like good, and the first existing task's title changes
  move_task      like good, and the last existing task moves into the new phase
  change_state   like good, and the first existing task's box changes ([x] → [ ], else → [-] with a reason)
  meta_limit     like good, and Meta max_retries goes from whatever it is to 99
  meta_path      like good, and Meta status_archive_dir points outside the project
  other_file     like good, and src/sneaky.py is written
  mark_notes     like good, and every note in docs/HUMAN_NOTES.md is marked read
  lint           like good, the second task's verify has an unclosed backtick
  slow_verify    like good, the second task's verify sleeps 60 s under `timeout: 1s`
  hostile_verify like good, the second task's verify writes pwned.py, marks every task of the plan
                 [x] and fails (red first runs it: what it did must not stay)
  escape         like good, and try to write src/evil.py, a git hook and memento.toml, each
                 write allowed to fail (the sandbox makes them read-only)
  nothing        read the prompt, write nothing
  hang           sleep 300 s (to be killed by the timeout)
  hang_after:PIDFILE  write a good draft, then its pid to PIDFILE, then sleep 300 s (to be killed)
  wait:FLAG:MODE write FLAG.started, wait (up to 60 s) for FLAG to exist, then do MODE

Every run copies its prompt to $FAKE_DRAFTER_PROMPT when that is set.
"""

import os
import re
import sys
import time
from pathlib import Path

PLAN = Path("docs/MASTER_PLAN.md")
MAP = Path("docs/PROJECT_MAP.md")
NOTES = Path("docs/HUMAN_NOTES.md")


def ids(text):
    return re.findall(r"^- \[.\] `([A-Z]+-(\d+))`", text, flags=re.M)


def next_phase(text):
    numbers = [int(n) for n in re.findall(r"^## Phase (\d+)", text, flags=re.M)]
    return (max(numbers) + 1 if numbers else 1), (f"Phase {max(numbers)}" if numbers else "none")


def task(tid, title, verify, context, extra=""):
    out = f"\n- [ ] `{tid}` [MODULE:greeter] {title}\n"
    if verify is not None:
        out += f"  - verify: `{verify}`\n"
    if context is not None:
        out += f"  - context_files: [{context}]\n"
    return out + extra + "  - estimate: 5min\n  - retries: 0\n"


def draft(mode):
    text = PLAN.read_text(encoding="utf-8")
    found = ids(text)
    top = max((int(n) for _, n in found), default=100)
    one, two = f"T-{top + 1}", f"T-{top + 2}"
    number, depends = next_phase(text)
    if mode == "unknown_phase":
        depends = "Phase 99"
    first_extra = f"  - depends: {two}\n" if mode == "cycle" else ""
    second_extra = f"  - depends: {one}\n" if mode == "cycle" else ""
    verify2 = {"vacuous": "true", "no_verify": None, "lint": "test -f bye.txt", "slow_verify": "sleep 60",
               "hostile_verify": "echo pwned > pwned.py; sed -i -e 's/^- \\[ \\]/- [x]/' docs/MASTER_PLAN.md; "
                                 "exit 1"}.get(mode, "test -f bye.txt")
    if mode == "slow_verify":
        second_extra += "  - timeout: 1s\n"
    block = (f"\n## Phase {number}: From the brief\n<!-- parallel: true -->\n<!-- depends: {depends} -->\n"
             + task(one, "Write the greeting", "test -f greeting.txt", "greeting.txt", first_extra)
             + task(found[0][0] if mode == "dup_id" and found else two, "Write the farewell", verify2,
                    None if mode == "no_context" else "bye.txt", second_extra))
    if mode == "lint":
        block = block.replace("`test -f bye.txt`", "`test -f bye.txt")
    if mode == "born_done":
        block = block.replace(f"- [ ] `{one}`", f"- [x] `{one}`")
    if mode in ("change_task", "change_state") and found:
        first = found[0][0]
        if mode == "change_task":
            text = re.sub(rf"^(- \[.\] `{first}`.*)$", r"\1 (improved)", text, count=1, flags=re.M)
        else:
            m = re.search(rf"^- \[(.)\] `{first}`", text, flags=re.M)
            box = " " if m.group(1) == "x" else "-"
            text = text[:m.start()] + f"- [{box}] `{first}`" + text[m.end():]
    if mode == "move_task" and found:
        m = re.search(rf"^- \[.\] `{found[-1][0]}`.*\n(?:  .*\n)*", text + "\n", flags=re.M)
        text, block = (text + "\n")[:m.start()] + (text + "\n")[m.end():], block + "\n" + m.group(0)
    if mode == "meta_limit":
        text = re.sub(r"^- max_retries: .*$", "- max_retries: 99", text, count=1, flags=re.M)
    if mode == "meta_path":
        text = text.replace("## Meta\n", "## Meta\n- status_archive_dir: /tmp/elsewhere/\n", 1)
    PLAN.write_text(text.rstrip("\n") + "\n" + block, encoding="utf-8")
    if MAP.exists():
        MAP.write_text(MAP.read_text(encoding="utf-8").rstrip("\n")
                       + "\n\n### [MODULE:greeter]\n- Purpose: greets and says goodbye\n", encoding="utf-8")
    if mode == "other_file":
        Path("src").mkdir(exist_ok=True)
        Path("src/sneaky.py").write_text("print('the drafter wrote code')\n", encoding="utf-8")
    if mode == "escape":
        for path, text in (("src/evil.py", "print('owned')\n"), (".git/hooks/pre-commit", "#!/bin/sh\necho owned\n"),
                           ("memento.toml", "[agent]\npreset = \"claude\"\n")):
            try:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
                Path(path).write_text(text, encoding="utf-8")
                print(f"drafter: wrote {path}")
            except OSError as exc:
                print(f"drafter: could not write {path}: {exc}")
    if mode == "mark_notes" and NOTES.exists():
        NOTES.write_text(re.sub(r"^### \[NOTE\] ", "### [NOTE:READ] ", NOTES.read_text(encoding="utf-8"),
                                flags=re.M), encoding="utf-8")


def main():
    prompt = sys.stdin.read()
    copy = os.environ.get("FAKE_DRAFTER_PROMPT")
    if copy:
        Path(copy).write_text(prompt, encoding="utf-8")
    m = re.search(r"MODE:\s*(\S+)", prompt)
    mode = os.environ.get("FAKE_DRAFTER_MODE") or (m.group(1) if m else "good")
    if mode.startswith("wait:"):
        _, flag, mode = mode.split(":", 2)
        Path(flag + ".started").write_text("1", encoding="utf-8")
        end = time.monotonic() + 60
        while not Path(flag).exists() and time.monotonic() < end:
            time.sleep(0.02)
    if mode == "hang":
        time.sleep(300)
    elif mode.startswith("hang_after:"):
        draft("good")
        pidfile = mode.split(":", 1)[1]
        Path(pidfile + ".tmp").write_text(str(os.getpid()), encoding="utf-8")
        os.replace(pidfile + ".tmp", pidfile)
        time.sleep(300)
    elif mode != "nothing":
        draft(mode)
    print(f"drafter: {mode} done")


if __name__ == "__main__":
    main()
