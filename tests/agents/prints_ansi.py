#!/usr/bin/env python3
"""Fake agent: prints ANSI escapes and markup-like text on stdout and stderr."""

import sys

sys.stdout.write("\x1b[31mred\x1b[0m [b]not bold[/b] [x] done\n")
sys.stdout.flush()
sys.stderr.write("\x1b[2J\x1b]0;title\x07stderr line\n")
sys.stderr.flush()
sys.stdout.write("last stdout line\n")
