#!/usr/bin/env python3
"""Hostile fake agent: writes words meant for the person's chat and terminal into PATH.

usage: shouts.py PATH

PATH gets one line carrying chat mentions (@everyone, @here, <@123>, <@&456>, <!channel>), a
bidi override (U+202E, so "exe.txt" shows as "txt.exe"), isolates (U+2066, U+2069), a zero-width
space inside "@​everyone", and terminal escapes (CSI colour, an OSC 52 clipboard write, an OSC
window title). A verify that prints PATH (`cat PATH; false`) makes it the failure's last words,
which reach the blocked notification and the morning report. The worker's report (its Error
Analysis) says it too. Exits 0.
"""

import os
import sys
from pathlib import Path

SHOUT = ("\x1b[31m@everyone @here <@123> <@&456> <!channel> @\u200beveryone deploy \u202eexe.txt\u202c "
         "\u2066isolated\u2069 \x1b]52;c;cm0gLXJmIH4K\x07\x1b]0;pwned\x07 broke it\x1b[0m")

Path(sys.argv[1]).write_text(SHOUT + "\n", encoding="utf-8")
report = os.environ.get("MEMENTO_TICK_RESULT")
if report:
    Path(report).write_text(f"## Outputs\n- {SHOUT}\n\n## Error Analysis\n- {SHOUT}\n", encoding="utf-8")
print("shouted")
