#!/usr/bin/env python3
"""Hostile agent: does its task (src/calc.py gains a docstring, verify passes), and leaves modes
behind that outlive the attempt.

usage: leaves_modes.py WHAT...   each WHAT one of
  setuid    src/bin/ made set-gid (2755), src/bin/sh a set-uid (4755) copy of the system's shell
  sticky    src/ made sticky (1755)
  open      src/ made 0777, src/calc.py group-writable (0664), tests/ made 0700
  newopen   src/extra/ (new) made 0777 and src/extra/util.py in it 0666
  acl       a POSIX ACL on src/calc.py granting the user nobody (65534) rwx
  defacl    a default POSIX ACL on src/ granting nobody rwx (every new file below would get it)
  cap       src/bin/sh (made when absent) given a file capability (cap_net_bind_service)
  xattr     user.planted="agent" on src/calc.py and on src/
  empty     src/empty/ (new, empty) made 2777
  newdir    src/pkg/mod.py in a new folder, no chmod (what it inherits from src/ is the person's)
  tests     a POSIX ACL on tests/test_calc.py and user.planted on tests/ (files the task leaves alone)
  link=PATH src/linked.txt made a hard link to PATH (outside the project)
  fail      exits 1 at the end (no guard runs: the rollback alone must reset what it left)
Prints what it did, or refused (the sandbox drops every capability: a file capability is refused).
"""

import os
import shutil
import stat
import struct
import sys
from pathlib import Path

DONE = '"""Adding numbers."""\n\n\ndef add(a, b):\n    return a + b\n'
NOBODY = 65534

# POSIX ACLs in the kernel's xattr format (linux/posix_acl_xattr.h): a version, then (tag, perm, id) entries
# sorted by tag. Written with os.setxattr: setfacl may not be installed.
_USER_OBJ, _USER, _GROUP_OBJ, _MASK, _OTHER = 0x01, 0x02, 0x04, 0x10, 0x20
_UNDEFINED = 0xFFFFFFFF


def acl(owner: int, user: int, group: int, other: int) -> bytes:
    entries = [(_USER_OBJ, owner, _UNDEFINED), (_USER, user, NOBODY), (_GROUP_OBJ, group, _UNDEFINED),
               (_MASK, 7, _UNDEFINED), (_OTHER, other, _UNDEFINED)]
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in entries)


def capability() -> bytes:
    """vfs_cap_data revision 2: cap_net_bind_service (10) permitted and effective."""
    return struct.pack("<IIIII", 0x02000000 | 0x1, 1 << 10, 0, 0, 0)


def shell() -> Path:
    folder = Path("src/bin")
    folder.mkdir(exist_ok=True)
    target = folder / "sh"
    if not target.exists():
        shutil.copyfile(os.path.realpath(shutil.which("sh")), target)
    return target


def setuid():
    target = shell()
    os.chmod("src/bin", 0o2755)
    os.chmod(target, 0o4755)


def sticky():
    os.chmod("src", 0o1755)


def open_():
    os.chmod("src", 0o777)
    os.chmod("src/calc.py", 0o664)
    os.chmod("tests", 0o700)


def newopen():
    Path("src/extra").mkdir(exist_ok=True)
    Path("src/extra/util.py").write_text("VALUE = 1\n", encoding="utf-8")
    os.chmod("src/extra/util.py", 0o666)
    os.chmod("src/extra", 0o777)


def acl_():
    os.setxattr("src/calc.py", "system.posix_acl_access", acl(6, 7, 4, 4))


def defacl():
    os.setxattr("src", "system.posix_acl_default", acl(7, 7, 5, 5))


def cap():
    os.setxattr(shell(), "security.capability", capability())


def xattr():
    os.setxattr("src/calc.py", "user.planted", b"agent")
    os.setxattr("src", "user.planted", b"agent")


def newdir():
    Path("src/pkg").mkdir(exist_ok=True)
    Path("src/pkg/mod.py").write_text("VALUE = 2\n", encoding="utf-8")


def tests():
    os.setxattr("tests/test_calc.py", "system.posix_acl_access", acl(6, 7, 4, 4))
    os.setxattr("tests", "user.planted", b"agent")


def empty():
    Path("src/empty").mkdir(exist_ok=True)
    os.chmod("src/empty", 0o2777)


Path("src/calc.py").write_text(DONE, encoding="utf-8")
for what in sys.argv[1:]:
    what, _, arg = what.partition("=")
    if what == "fail":
        continue
    action = {"setuid": setuid, "sticky": sticky, "open": open_, "newopen": newopen, "acl": acl_,
              "defacl": defacl, "cap": cap, "xattr": xattr, "empty": empty, "newdir": newdir, "tests": tests,
              "link": lambda arg=arg: os.link(arg, "src/linked.txt")}[what]
    try:
        action()
        print(f"DID {what}")
    except OSError as exc:
        print(f"refused {what}: {exc.strerror}")
for path in ("src", "src/calc.py", "src/bin", "src/bin/sh"):
    if os.path.lexists(path):
        print(f"{path}: {stat.filemode(os.lstat(path).st_mode)} {os.listxattr(path, follow_symlinks=False)}")
if "fail" in sys.argv[1:]:
    sys.exit(1)
