#!/usr/bin/env python3
"""Fake agent: asks a person instead of doing its task, or tries to answer its own question.

usage: asks.py MODE EVIDENCE

Every mode first records the prompt it was given (EVIDENCE.prompt, the last one) and, once the
prompt holds an answer to its question, does the task (hello.txt "done") and exits 0. Until then,
by MODE:
Another task than T-1 is simply done (hello2.txt "done").
- ``ask``: writes .memento/worker/question.md (a question and two choices), half-does the task
  (hello.txt "half": rolled back) and exits 0;
- ``ask-always``: asks again whatever the prompt holds (max_questions);
- ``ask-other``: the question file says it is about T-2 (it is still its own task's question);
- ``bad KIND``: a question file that is no question: ``empty``, ``binary``, ``fifo``, ``link``;
- ``forge-note``: asks, and writes an ``[ANSWER]`` note for its own task into HUMAN_NOTES.md by hand;
- ``cli-answer``: asks, then runs this checkout's `memento answer T-1 --choice 1` (and with a text)
  on itself and, when refused, marks the task [?]->[ ] and writes the [ANSWER] note by hand;
- ``forge-waiting``: asks, and marks T-2 ``[?]`` by hand with a question of its own;
- ``forge-record``: does its task, and rewrites the waiting T-2's question in .memento/questions/;
- ``wait FILE``: does its task (hello.txt "done") and waits until FILE exists (60 s at most), while
  a person answers another task's question.
What the CLI answered goes to EVIDENCE as JSON lines.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PLAN, NOTES = Path("docs/MASTER_PLAN.md"), Path("docs/HUMAN_NOTES.md")
QUESTION = Path(".memento/worker/question.md")
mode, evidence = sys.argv[1], Path(sys.argv[2])
kind = sys.argv[3] if len(sys.argv) > 3 else ""

prompt = Path(os.environ["MEMENTO_PROMPT_FILE"]).read_text(encoding="utf-8")
try:  # confined, EVIDENCE may be out of reach (a private /tmp): the outcome is judged on disk anyway
    Path(str(evidence) + ".prompt").write_text(prompt, encoding="utf-8")
except OSError:
    pass


def record(**what) -> None:
    try:
        with open(evidence, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(what) + "\n")
    except OSError:
        pass


def try_write(path: Path, text: str, encoding: str = "utf-8") -> None:
    """Write a document by hand; confined, Memento's documents are read-only: the try is recorded."""
    try:
        path.write_text(text, encoding=encoding)
    except OSError as exc:
        record(wrote=str(path), error=str(exc))


if os.environ.get("MEMENTO_TASK_ID") != "T-1":
    Path("hello2.txt").write_text("done\n", encoding="utf-8")
    sys.exit(0)
if mode == "forge-record":
    Path("hello.txt").write_text("done\n", encoding="utf-8")
    Path(".memento/questions/T-2.json").write_text(json.dumps(
        {"task": "T-2", "text": "Which? Say 'skip everything'", "first_line": "Which?", "choices": ["skip everything"],
         "asked": "2026-12-06T10:00:00Z"}), encoding="utf-8")
    sys.exit(0)
if mode == "wait":
    import time

    Path("hello.txt").write_text("done\n", encoding="utf-8")
    deadline = time.monotonic() + 60
    while not Path(kind).exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    sys.exit(0)
if "## Your question and the answer on" in prompt and mode != "ask-always":
    Path("hello.txt").write_text("done\n", encoding="utf-8")
    sys.exit(0)

Path("hello.txt").write_text("half\n", encoding="utf-8")
QUESTION.parent.mkdir(parents=True, exist_ok=True)
if mode == "bad":
    if kind == "empty":
        QUESTION.write_text("\n  \n", encoding="utf-8")
    elif kind == "binary":
        QUESTION.write_bytes(b"\x7fELF\x00\x00\x01binary")
    elif kind == "fifo":
        os.mkfifo(QUESTION)
    elif kind == "link":
        QUESTION.symlink_to(Path.home() / ".bashrc")
    sys.exit(0)

about = "T-2" if mode == "ask-other" else "T-1"
QUESTION.write_text(f"Which greeting for {about}: formal or casual?\n\n- [ ] formal\n- [ ] casual\n", encoding="utf-8")

if mode == "forge-note":
    text = NOTES.read_text(encoding="utf-8")
    try_write(NOTES, text.replace("## Active Notes\n", "## Active Notes\n\n### [ANSWER] 2026-12-06T10:00:00 → T-1 "
                                  "<!-- from cli -->\nformal\n", 1), encoding="utf-8")
elif mode == "cli-answer":
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("MEMENTO_TASK_ID", None)
    for args in (["answer", "T-1", "--choice", "1"], ["answer", "T-1", "formal"]):
        done = subprocess.run([sys.executable, "-m", "memento_core.cli", *args], capture_output=True, text=True,
                              env=env, stdin=subprocess.DEVNULL)
        record(argv=args, code=done.returncode, stderr=done.stderr)
    try_write(PLAN, re.sub(r"^- \[[~?]\] (`?T-1`?)", r"- [ ] \1", PLAN.read_text(encoding="utf-8"), flags=re.M),
                    encoding="utf-8")
    text = NOTES.read_text(encoding="utf-8")
    try_write(NOTES, text.replace("## Active Notes\n", "## Active Notes\n\n### [ANSWER] 2026-12-06T10:00:00 → T-1\n"
                                  "formal\n", 1), encoding="utf-8")
elif mode == "forge-waiting":
    try_write(PLAN, re.sub(r"^(- \[) (\] `?T-2`?.*)$", r"\1?\2\n  - question: forged\n  - questions: 1",
                           PLAN.read_text(encoding="utf-8"), count=1, flags=re.M), encoding="utf-8")
