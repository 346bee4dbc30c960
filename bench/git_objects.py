"""What guarding git's objects costs a tick (SPEC §13 "Either way": git objects are immutable).

A repository with N loose objects (Memento turns git's auto maintenance off, so they pile
up) and one pack of about P MB. Measured, each the median of REPEAT runs:

- the first snapshot (tick/objects.take: every loose object and the pack copied into the mirror);
- a later snapshot (the mirror already holds them: a directory walk and a stat each);
- the look after the agent when nothing changed (tick/objects.put_back);
- the same after git "freshened" the pack (its ctime moved: the pack is re-hashed whole);
- for scale, one `git status` in the same repository.

usage: python bench/git_objects.py [--loose 5000] [--pack-mb 20] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memento_core.tick import objects  # noqa: E402


def git(root: Path, *args: str, data: bytes | None = None) -> bytes:
    return subprocess.run(["git", "-C", str(root), *args], input=data, capture_output=True, check=True).stdout


def make_repo(root: Path, loose: int, pack_mb: int) -> None:
    git(root, "init", "-q")
    git(root, "config", "gc.auto", "0")
    # The pack: files of random bytes (incompressible), committed and packed.
    for n in range(max(1, pack_mb)):
        (root / f"big{n}.bin").write_bytes(os.urandom(1024 * 1024))
    git(root, "add", "-A")
    git(root, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "big")
    git(root, "repack", "-adq")
    # The loose objects: small blobs, as a long run of ticks leaves them.
    batch = b"".join(f"loose object {n}\n".encode() for n in range(loose))
    folder = root / "blobs"
    folder.mkdir()
    paths = []
    for n in range(loose):
        p = folder / f"{n}.txt"
        p.write_bytes(batch[n * 10:n * 10 + 40] + f"{n}".encode())
        paths.append(str(p))
    git(root, "hash-object", "-w", "--stdin-paths", data="\n".join(paths).encode() + b"\n")
    shutil.rmtree(folder)


def timed(fn, repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - start)
    return statistics.median(runs) * 1000


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--loose", type=int, default=5000)
    parser.add_argument("--pack-mb", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        make_repo(root, args.loose, args.pack_mb)
        mirror = Path(tmp) / "mirror"
        count = sum(1 for _ in (root / ".git" / "objects").glob("[0-9a-f][0-9a-f]/*"))
        (pack,) = (root / ".git" / "objects" / "pack").glob("*.pack")

        def first() -> None:
            shutil.rmtree(mirror, ignore_errors=True)
            objects.take(root, mirror)

        cold = timed(first, args.repeat)
        warm = timed(lambda: objects.take(root, mirror), args.repeat)
        snap = objects.take(root, mirror)
        aside = Path(tmp) / "aside"
        idle = timed(lambda: objects.put_back(snap, root, aside), args.repeat)

        def freshened() -> None:
            os.utime(pack)  # what git does to a pack holding an object it is asked to write again
            objects.put_back(snap, root, aside)

        fresh = timed(freshened, args.repeat)
        status = timed(lambda: git(root, "status", "--porcelain"), args.repeat)
        size = pack.stat().st_size
    rows = [
        ("loose objects / pack size", f"{count} / {size / 1e6:.1f} MB"),
        ("first snapshot (mirror made)", f"{cold:.0f} ms"),
        ("later snapshot (mirror warm)", f"{warm:.0f} ms"),
        ("look after the agent, nothing changed", f"{idle:.0f} ms"),
        ("look after the agent, the pack freshened (re-hashed)", f"{fresh:.0f} ms"),
        ("for scale: git status --porcelain", f"{status:.0f} ms"),
    ]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
