"""Markdown: ``blocks`` (fenced code and HTML comment blocks, for the line scanners of the
plan, notes and status log) and ``prose`` (mistune, for the prose documents).

This file stays empty: a paused tick parses the plan through ``blocks`` and must
not load mistune.
"""
