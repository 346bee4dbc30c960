#!/usr/bin/env python3
"""Fake agent: appends a line to docs/PROJECT_MAP.md (the worker may only read it)."""

from pathlib import Path

path = Path("docs/PROJECT_MAP.md")
path.write_text(path.read_text(encoding="utf-8") + "\n- the agent was here\n", encoding="utf-8")
print("edited the project map")
