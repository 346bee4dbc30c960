#!/usr/bin/env python3
"""Fake agent: a model that claims success and writes nothing (runs the suite, says it is done, exits 0)."""

import subprocess
import sys

subprocess.run([sys.executable, "-m", "pytest", "-q"], check=False)
print("Done: the feature is implemented and all tests pass.")
