#!/usr/bin/env python3
"""Fake agent: writes its argv (without argv[0]) as JSON to $FAKE_AGENT_OUT."""

import json
import os
import sys
from pathlib import Path

Path(os.environ["FAKE_AGENT_OUT"]).write_text(json.dumps(sys.argv[1:]), encoding="utf-8")
