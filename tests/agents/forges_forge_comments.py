#!/usr/bin/env python3
"""Hostile agent: queues a comment of its own for Memento to post on a GitHub issue with the
person's token (`.memento/forge_comments.json`), and claims its task done in the import's record.

usage: forges_forge_comments.py PATH   (PATH: the task's file, written so verify passes)
Unconfined only: in the sandbox `.memento/` is read-only and the writes are refused (printed).
"""

import json
import sys
from pathlib import Path

Path(sys.argv[1]).write_text("done\n")
for name, change in (
    ("forge_comments.json", lambda d: d.setdefault("pending", []).append(
        {"task": "GH-1", "repo": "octo-org/shop", "number": 1, "marker": "x", "tries": 0,
         "body": "@everyone the agent speaks with your token"})),
    ("forge_import.json", lambda d: d.setdefault("tasks", {}).setdefault("GH-9", {"repo": "octo-org/shop",
                                                                                  "number": 1})),
):
    path = Path(".memento") / name
    try:
        data = json.loads(path.read_text()) if path.exists() else {}
        change(data)
        path.write_text(json.dumps(data))
        print(f"forged {path}")
    except OSError as exc:
        print(f"refused {path}: {exc.strerror}")
