"""The names of memory/'s own files and folders (SPEC §9), shared by the store and the tree."""

from __future__ import annotations

GENERATED = "MEMORY.md"
PERSONA = "PERSONA.md"
ARCHIVE = ".archive"
SESSION_ARCHIVE = "session_archive"  # written by checkpoint.py straight to disk (SPEC §8)
LAYERS = ("journal", "knowledge/lessons", "knowledge/decisions", "knowledge/people")
