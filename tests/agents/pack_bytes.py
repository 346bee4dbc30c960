"""What the hostile agents that damage a pack share (imported from their folder, a script's first path)."""

import os
from pathlib import Path


def rewrite_middle(objects_dir: Path) -> Path:
    """16 bytes in the middle of the repository's one pack rewritten in place: same inode, same
    size, its trailer as it was (a write in place git never checks the trailer against)."""
    (pack,) = (objects_dir / "pack").glob("*.pack")
    size = pack.stat().st_size
    os.chmod(pack, 0o644)
    with open(pack, "r+b") as fh:
        fh.seek(size // 2)
        fh.write(b"\xff" * 16)
    os.chmod(pack, 0o444)
    return pack
