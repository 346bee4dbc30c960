#!/usr/bin/env python3
"""Hostile fake agent: tries to put its own version in place of each PATH, then does its task.

usage: swaps_protected.py HOW PATH [PATH...]

HOW is how it goes about it, for every PATH (relative to the project):

* ``write``: overwrite it with "pwned";
* ``replace``: write a new file beside it and rename that over it (`mv new PATH`);
* ``link``: a symbolic link to /etc/passwd renamed over it (`ln -sf`);
* ``recreate``: remove it, then write a new one;
* ``movedir``: rename its folder aside (`mv docs docs.aside`), make the folder again and write
  PATH into it, so Memento would find the agent's file where its own was;
* ``rmtree``: remove its folder with everything in it (`rm -rf docs`), make it again, write PATH;
* ``fifo``: make a FIFO there (Memento reading it would block forever).

Each outcome is printed (DID or refused); the agent then writes hello.txt "done" and exits 0.
"""

import errno
import os
import subprocess
import sys
from pathlib import Path

PWNED = "pwned\n"


def write(path: Path) -> None:
    path.write_text(PWNED, encoding="utf-8")


def replace(path: Path) -> None:
    new = path.with_name(f".{path.name}.swap")
    new.write_text(PWNED, encoding="utf-8")
    try:
        os.replace(new, path)
    finally:
        if new.exists():
            new.unlink()


def link(path: Path) -> None:
    new = path.with_name(f".{path.name}.link")
    os.symlink("/etc/passwd", new)
    try:
        os.replace(new, path)
    finally:
        if os.path.lexists(new):
            os.unlink(new)


def recreate(path: Path) -> None:
    os.unlink(path)
    write(path)


def movedir(path: Path) -> None:
    folder = path.parent
    os.rename(folder, folder.with_name(folder.name + ".aside"))
    folder.mkdir()
    write(path)


def rmtree(path: Path) -> None:
    if subprocess.run(["rm", "-rf", "--", str(path.parent)]).returncode != 0:
        raise OSError(errno.EBUSY, "rm -rf failed")


def fifo(path: Path) -> None:
    os.mkfifo(path)


HOW = {"write": write, "replace": replace, "link": link, "recreate": recreate, "movedir": movedir,
       "rmtree": rmtree, "fifo": fifo}

how = HOW[sys.argv[1]]
for raw in sys.argv[2:]:
    path = Path(raw)
    try:
        how(path)
        print(f"DID {sys.argv[1]} {raw}", flush=True)
    except OSError as exc:
        print(f"refused {sys.argv[1]} {raw}: {exc.strerror}", flush=True)
    if sys.argv[1] == "rmtree":  # whatever the removal left, write PATH anew in a folder made again
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write(path)
            print(f"DID write {raw}", flush=True)
        except OSError as exc:
            print(f"refused write {raw}: {exc.strerror}", flush=True)
Path("hello.txt").write_text("done\n", encoding="utf-8")
