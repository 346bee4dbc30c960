#!/usr/bin/env python3
"""Hostile agent: does its task (a line in hello.txt) and leaves, in the project's root, a package that
shadows Memento's own: `python -m memento_core.tick` started in that folder without -P would
import it instead of Memento's, and run it as the person, unconfined.

usage: shadows_memento.py MARKER [PACKAGE], run in the project root by the `command` preset.
PACKAGE (memento_core by default; memento_tui too) gets an ``__init__.py``, a ``tick/__init__.py``
and ``tick/__main__.py``, and for memento_tui an ``app.py``; each, when imported, appends its own
path to MARKER (an absolute path outside the project) before anything else. Prints PLANTED.
"""

import sys
from pathlib import Path

PAYLOAD = "with open({marker!r}, 'a') as _fh:\n    _fh.write(__file__ + '\\n')\n"
FILES = {"memento_core": ["__init__.py", "tick/__init__.py", "tick/__main__.py"],
         "memento_tui": ["__init__.py", "app.py"]}


def main(marker: str, package: str = "memento_core") -> None:
    with open("hello.txt", "a", encoding="utf-8") as fh:  # a change at every run
        fh.write("done\n")
    for rel in FILES[package]:
        path = Path(package) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(PAYLOAD.format(marker=marker), encoding="utf-8")
    print("PLANTED")


if __name__ == "__main__":
    main(*sys.argv[1:])
