"""tick/objects.py on real repositories, sha1 and sha256: what changed is seen, put back, never written through.

The whole-tick red team is tests/core/test_git_objects.py; here the module's own cases, each
judged with git itself (`git cat-file`, `git fsck`) and on disk.
"""

from __future__ import annotations

import os
import subprocess
import zlib
from pathlib import Path

import pytest

from memento_core.tick import objects


def git(root: Path, *args: str, env: dict | None = None) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True,
                          env={**os.environ, **(env or {})}).stdout


@pytest.fixture(params=["sha1", "sha256"])
def repo(request, tmp_path, git_identity) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", f"--object-format={request.param}")
    (root / "a.txt").write_text("a person's words\n")
    git(root, "add", "a.txt")
    git(root, "commit", "-qm", "a person's commit")
    return root


def loose(root: Path, oid: str) -> Path:
    return root / ".git" / "objects" / oid[:2] / oid[2:]


def forge(path: Path, kind: bytes, text: bytes) -> None:
    os.chmod(path, 0o644)
    with open(path, "r+b") as fh:  # in place: the same inode
        fh.truncate(0)
        fh.write(zlib.compress(kind + b" %d\0" % len(text) + text))


def test_an_object_rewritten_in_place_is_put_back_and_the_writing_is_saved(repo, tmp_path):
    snap = objects.take(repo, tmp_path / "mirror")
    oid = git(repo, "rev-parse", "HEAD").strip()
    forge(loose(repo, oid), b"commit", b"tree 0\n\nforged\n")
    damage = objects.put_back(snap, repo, tmp_path / "aside")
    rel = f".git/objects/{oid[:2]}/{oid[2:]}"
    assert damage.restored == [rel] and not damage.lost
    assert rel in damage.reason() and "put back from Memento's copy" in damage.reason()
    assert git(repo, "log", "-1", "--format=%s") == "a person's commit\n"
    assert subprocess.run(["git", "-C", str(repo), "fsck", "--full", "--strict"], capture_output=True).returncode == 0
    assert b"forged" in zlib.decompress((tmp_path / "aside" / oid[:2] / oid[2:]).read_bytes())
    assert not objects.put_back(snap, repo, tmp_path / "aside2")  # the snapshot knows what it put back


def test_a_freshened_object_is_not_damage(repo, tmp_path):
    """git rewrites no object, but "freshens" one it is asked to write again (utime: a new ctime)."""
    snap = objects.take(repo, tmp_path / "mirror")
    git(repo, "hash-object", "-w", "a.txt")
    oid = git(repo, "rev-parse", "HEAD:a.txt").strip()
    os.utime(loose(repo, oid))
    assert not objects.put_back(snap, repo, tmp_path / "aside")


def test_an_object_replaced_by_a_hard_link_is_put_back_by_rename_never_written_through(repo, tmp_path):
    snap = objects.take(repo, tmp_path / "mirror")
    oid = git(repo, "rev-parse", "HEAD").strip()
    outside = tmp_path / "outside.bin"
    outside.write_bytes(zlib.compress(b"commit 7\0forged\n"))
    os.chmod(outside, 0o600)
    path = loose(repo, oid)
    path.unlink()
    os.link(outside, path)
    before = outside.read_bytes(), outside.stat().st_mode
    damage = objects.put_back(snap, repo, tmp_path / "aside")
    assert damage.restored == [f".git/objects/{oid[:2]}/{oid[2:]}"]
    assert (outside.read_bytes(), outside.stat().st_mode) == before
    assert path.stat().st_ino != outside.stat().st_ino
    assert git(repo, "log", "-1", "--format=%s") == "a person's commit\n"


def test_a_copy_the_agent_rewrote_too_is_not_trusted(repo, tmp_path):
    mirror = tmp_path / "mirror"
    snap = objects.take(repo, mirror)
    oid = git(repo, "rev-parse", "HEAD").strip()
    copy = mirror / oid
    assert copy.stat().st_ino != loose(repo, oid).stat().st_ino  # a copy, not a hard link
    for path in (loose(repo, oid), copy):
        forge(path, b"commit", b"tree 0\n\nforged\n")
    damage = objects.put_back(snap, repo, tmp_path / "aside")
    assert damage.lost == [f".git/objects/{oid[:2]}/{oid[2:]}"] and not damage.restored
    assert "no copy to put back" in damage.reason()


def test_the_mirror_is_flat_and_an_older_fan_out_mirror_is_replaced(repo, tmp_path):
    """A copy per object under its whole id and the packs' in pack/: no folder per two hex digits,
    which every walk of .memento/ listed, six a tick. An older mirror's fan-out folders go at the
    next snapshot; until then (a tick killed before the upgrade) its copies still put objects back."""
    git(repo, "repack", "-q")  # one pack
    (repo / "b.txt").write_text("b\n")
    git(repo, "add", "b.txt")
    git(repo, "commit", "-qm", "b")
    oid = git(repo, "rev-parse", "HEAD").strip()
    mirror = tmp_path / "mirror"
    old = mirror / oid[:2] / oid[2:]
    old.parent.mkdir(parents=True)
    old.write_bytes(loose(repo, oid).read_bytes())
    (mirror / "pack" / ".pack-x.pack.tmp").parent.mkdir()
    (mirror / "pack" / ".pack-x.pack.tmp").write_bytes(b"a copy cut short")  # never a copy of anything
    objects.take(repo, mirror)
    ids = {rel.replace("/", "") for rel in objects._scan(repo / ".git" / "objects")[0]}
    assert {p.name for p in mirror.iterdir() if p.is_file()} == ids and oid in ids
    assert [p.name for p in mirror.iterdir() if p.is_dir()] == ["pack"]
    assert {p.suffix for p in (mirror / "pack").iterdir() if not p.name.startswith(".")} == {".pack", ".idx"}
    copies = {p: p.stat().st_ino for p in [*mirror.iterdir(), *(mirror / "pack").iterdir()] if p.is_file()}
    objects.take(repo, mirror)  # each copied once: the next snapshot finds them all
    assert {p: p.stat().st_ino for p in [*mirror.iterdir(), *(mirror / "pack").iterdir()] if p.is_file()} == copies
    # A mirror of the older layout, met by the recovery of a tick killed before the upgrade.
    older = tmp_path / "older"
    (older / oid[:2]).mkdir(parents=True)
    (older / oid[:2] / oid[2:]).write_bytes(loose(repo, oid).read_bytes())
    forge(loose(repo, oid), b"commit", b"tree 0\n\nforged\n")
    damage = objects.check_loose(repo, older, tmp_path / "aside")
    assert damage.restored == [f".git/objects/{oid[:2]}/{oid[2:]}"] and not damage.lost
    assert git(repo, "log", "-1", "--format=%s") == "b\n"
    git(repo, "repack", "-a", "-d", "-q")  # no loose object left: their copies are forgotten
    objects.take(repo, mirror)
    assert [p.name for p in mirror.iterdir()] == ["pack"]
    assert len([p for p in (mirror / "pack").iterdir() if not p.name.startswith(".")]) == 2


def test_the_print_read_back_is_the_one_written_and_no_name_leaves_the_object_store(repo, tmp_path):
    """to_bytes / from_bytes: what the recovery after a killed tick judges by. A name that is not a
    path below .git/objects/ (a tampered copy) or a print that is not three integers is refused."""
    import json

    git(repo, "repack", "-q")
    (repo / ".git" / "objects" / "info" / "commit-graph").write_bytes(b"a graph")
    snap = objects.take(repo, tmp_path / "mirror")
    assert snap.loose and snap.packs and snap.derived
    back = objects.from_bytes(objects.to_bytes(snap), repo, tmp_path / "mirror")
    assert (back.loose, back.packs, back.derived) == (snap.loose, snap.packs, snap.derived)
    assert (back.objects_dir, back.mirror) == (snap.objects_dir, snap.mirror)
    body = json.loads(objects.to_bytes(snap))
    rel, printed = next(iter(body["loose"].items()))
    pack, (pack_print, trailer) = next(iter(body["packs"].items()))
    for key, hostile in [("loose", {"../../../x": printed}), ("loose", {rel.upper(): printed}),
                         ("loose", {rel: [1, 2]}), ("loose", {rel: [True, 1, 2]}), ("loose", {rel: "123"}),
                         ("packs", {"pack/../../config": [pack_print, trailer]}),
                         ("packs", {pack: [pack_print, "not hex"]}), ("packs", {pack: [pack_print]}),
                         ("derived", {"pack/..": printed}), ("derived", {"hooks/pre-commit": printed}),
                         ("derived", {"info/commit-graphs/../../x": printed})]:
        assert objects.from_bytes(json.dumps({**body, key: hostile}).encode(), repo, tmp_path / "m") is None, hostile
    assert objects.from_bytes(b"\xff", repo, tmp_path / "m") is None
    assert objects.from_bytes(b"[" * 100_000 + b"]" * 100_000, repo, tmp_path / "m") is None  # nested too deep
    assert objects.from_bytes(json.dumps({"loose": {}}).encode(), repo, tmp_path / "m") is None


def test_a_pack_a_persons_gc_repacked_is_not_lost_even_without_a_copy(repo, tmp_path, monkeypatch):
    """A pack too big to copy without a reflink (here: over a lowered limit; its index is copied)
    that went away while git still reads each of its objects from another pack is forgotten, not
    put back nor called lost (the recovery after a killed tick met a person's `git gc`); one
    whose objects went with it is lost. The index's ids are read as `git show-index` reads them."""
    (repo / "big.bin").write_bytes(os.urandom(200_000))
    git(repo, "add", "big.bin")
    git(repo, "commit", "-qm", "big")
    git(repo, "repack", "-adq")
    (old_pack,) = (repo / ".git" / "objects" / "pack").glob("*.pack")
    idx = old_pack.with_suffix(".idx")
    listed = subprocess.run(["git", "-C", str(repo), "verify-pack", "-v", str(idx)], capture_output=True, text=True,
                            check=True).stdout
    width = len(git(repo, "rev-parse", "HEAD").strip()) // 2
    ids = objects._index_ids(idx.read_bytes(), width)
    assert sorted(ids) == sorted(line.split()[0] for line in listed.splitlines() if line[:1].isalnum()
                                 and len(line.split()[0]) == width * 2)
    monkeypatch.setattr(objects, "PACK_COPY_LIMIT", 100_000)
    snap = objects.take(repo, tmp_path / "mirror")
    (repo / "c.txt").write_text("c\n")
    git(repo, "add", "c.txt")
    git(repo, "commit", "-qm", "c")
    git(repo, "repack", "-adq")  # the person's gc: one new pack holding everything
    assert not old_pack.exists()
    damage = objects.put_back(snap, repo, tmp_path / "aside")
    assert not damage and not old_pack.exists() and f"pack/{old_pack.name}" not in snap.packs
    assert subprocess.run(["git", "-C", str(repo), "fsck", "--full"], capture_output=True).returncode == 0
    snap = objects.take(repo, tmp_path / "mirror")
    (new_pack,) = (repo / ".git" / "objects" / "pack").glob("*.pack")
    for gone in (new_pack, new_pack.with_suffix(".idx")):
        os.chmod(gone, 0o644)
        gone.unlink()  # its objects nowhere else
    damage = objects.put_back(snap, repo, tmp_path / "aside2")
    assert f".git/objects/pack/{new_pack.name}" in damage.lost + damage.restored  # restored where a reflink copied it


def test_a_planted_object_and_a_forged_derived_index_are_moved_aside(repo, tmp_path):
    snap = objects.take(repo, tmp_path / "mirror")
    lie = b"not what the name says\n"
    text = b"done\n"
    oid = subprocess.run(["git", "-C", str(repo), "hash-object", "--stdin"], input=text, capture_output=True,
                         check=True).stdout.decode().strip()
    path = loose(repo, oid)
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(zlib.compress(b"blob %d\0" % len(lie) + lie))
    graph = repo / ".git" / "objects" / "info" / "commit-graph"
    graph.parent.mkdir(exist_ok=True)
    graph.write_bytes(b"CGPH forged")
    damage = objects.put_back(snap, repo, tmp_path / "aside")
    assert damage.planted == [f".git/objects/{oid[:2]}/{oid[2:]}"]
    assert damage.derived == [".git/objects/info/commit-graph"]
    assert not path.exists() and not graph.exists()
    # Stored now, the real blob is written (no object "already there" to stand in for it).
    got = subprocess.run(["git", "-C", str(repo), "hash-object", "-w", "--stdin"], input=text, capture_output=True,
                         check=True).stdout.decode().strip()
    assert got == oid and git(repo, "cat-file", "blob", oid) == "done\n"


def test_a_rewritten_pack_is_put_back_and_a_forged_new_pack_moved_aside(repo, tmp_path):
    git(repo, "repack", "-adq")
    snap = objects.take(repo, tmp_path / "mirror")
    (pack,) = (repo / ".git" / "objects" / "pack").glob("*.pack")
    original = pack.read_bytes()
    os.chmod(pack, 0o644)
    with open(pack, "r+b") as fh:
        fh.seek(len(original) // 2)
        fh.write(b"\0" * 8)
    # A second pack: a copy of the real one whose index lies about an object's offset.
    idx = pack.with_suffix(".idx")
    other = pack.with_name("pack-" + "0" * (len(pack.stem) - 5))
    Path(str(other) + ".pack").write_bytes(original)
    Path(str(other) + ".idx").write_bytes(idx.read_bytes()[:-40] + b"\1" * 40)
    damage = objects.put_back(snap, repo, tmp_path / "aside")
    assert f".git/objects/pack/{pack.name}" in damage.restored
    assert sorted(damage.planted) == sorted(f".git/objects/pack/{other.name}{ext}" for ext in (".idx", ".pack"))
    assert pack.read_bytes() == original
    assert subprocess.run(["git", "-C", str(repo), "fsck", "--full", "--strict"], capture_output=True).returncode == 0
