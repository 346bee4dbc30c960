#!/usr/bin/env python3
"""Fake agent: does its task (writes PATH) and reports Outputs and Error Analysis.

usage: reports.py PATH   (the report goes to $MEMENTO_TICK_RESULT)
"""

import os
import sys
from pathlib import Path

Path(sys.argv[1]).write_text("def greet():\n    return 'hi'\n", encoding="utf-8")
Path(os.environ["MEMENTO_TICK_RESULT"]).write_text(
    "## Outputs\n- exported greet() from hello.py\n\n## Error Analysis\n- none needed\n", encoding="utf-8"
)
print("done and reported")
