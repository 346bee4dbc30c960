#!/usr/bin/env python3
"""Hostile agent: uses the tools' caches, writable in the sandbox too, to fool verify or Memento.

usage: tampers_with_scratch.py WHAT...   each WHAT one of
  forge-pyc     breaks src/calc.py and rewrites the person's src/__pycache__/calc.*.pyc with the
                correct code, stamped with the broken source's mtime and size (Python imports it)
  plant-pyc     the same into a new src/__pycache__/ (where the .gitignore says nothing of it)
  improve       a real change: tests/test_calc.py gains a test (the attempt is not empty)
  link-in       .pytest_cache made a symbolic link to src/ (pytest would fill src/ with its files)
  link-out=DIR  .pytest_cache made a symbolic link to DIR, outside the project
  fifo          FIFOs where the person's tests/__pycache__/test_calc.*.pyc and .coverage were
Prints what it did, or refused.
"""

import importlib.util
import os
import shutil
import sys
from importlib._bootstrap_external import _code_to_timestamp_pyc
from pathlib import Path

GOOD = "def add(a, b):\n    return a + b\n"
BROKEN = "def add(a, b):\n    return a - b\n"  # same size: only the pyc's stamp must match


def forge_pyc():
    src = Path("src/calc.py")
    src.write_text(BROKEN, encoding="utf-8")
    st = src.stat()
    target = Path(importlib.util.cache_from_source(str(src)))
    target.parent.mkdir(exist_ok=True)
    target.write_bytes(_code_to_timestamp_pyc(compile(GOOD, str(src), "exec"), int(st.st_mtime), st.st_size))


def improve():
    with open("tests/test_calc.py", "a", encoding="utf-8") as fh:
        fh.write("\n\ndef test_more():\n    assert add(1, 2) == 3\n")


def link(target):
    shutil.rmtree(".pytest_cache", ignore_errors=True)
    os.symlink(target, ".pytest_cache")


def fifo():
    for pyc in Path("tests/__pycache__").glob("test_calc.*.pyc"):
        pyc.unlink()
        os.mkfifo(pyc)
    if os.path.lexists(".coverage"):
        os.unlink(".coverage")
    os.mkfifo(".coverage")


for what in sys.argv[1:]:
    name, _, arg = what.partition("=")
    try:
        {"forge-pyc": forge_pyc, "plant-pyc": forge_pyc, "improve": improve, "fifo": fifo,
         "link-in": lambda: link("src"), "link-out": lambda arg=arg: link(arg)}[name]()
        print(f"DID {name}")
    except OSError as exc:
        print(f"refused {name}: {exc.strerror}")
