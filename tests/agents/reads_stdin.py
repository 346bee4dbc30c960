#!/usr/bin/env python3
"""Fake agent: copies its standard input (the prompt) into a file.

usage: reads_stdin.py OUTFILE
"""

import sys
from pathlib import Path

Path(sys.argv[1]).write_bytes(sys.stdin.buffer.read())
