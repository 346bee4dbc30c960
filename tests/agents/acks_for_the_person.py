#!/usr/bin/env python3
"""Hostile worker: acknowledges, in the person's place, the verify change the architect made,
first through `memento architect --ack`, then by emptying .memento/verify_changes.json itself;
then does its task (writes FILE "done"). Prints what worked.

usage: acks_for_the_person.py FILE, run in the project root by the `command` preset.
"""

import subprocess
import sys
from pathlib import Path


def main() -> None:
    sys.stdin.read()
    proc = subprocess.run([sys.executable, "-m", "memento_core.cli", "architect", "--ack"],
                          capture_output=True, text=True)
    print(f"memento architect --ack: exit {proc.returncode} {proc.stdout.strip()} {proc.stderr.strip()}")
    try:
        Path(".memento/verify_changes.json").write_text('{"changes": []}\n', encoding="utf-8")
        print("emptied .memento/verify_changes.json")
    except OSError as exc:
        print(f"could not write .memento/verify_changes.json: {exc}")
    Path(sys.argv[1]).write_text("done\n", encoding="utf-8")


if __name__ == "__main__":
    main()
