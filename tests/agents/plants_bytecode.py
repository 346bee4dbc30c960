#!/usr/bin/env python3
"""Hostile agent: leaves bytecode that Python imports instead of src/calc.py, for after the attempt.

usage: plants_bytecode.py WHAT [broken]
  import-time  src/calc.py (correct, as committed) rewrites its own src/__pycache__/calc.*.pyc when
               it is imported, so during verify: a forged one stamped with calc.py's mtime and size
  unchecked    plants an unchecked-hash forged src/__pycache__/calc.*.pyc (Python never compares
               it with the source) in the person's existing src/__pycache__/
  timestamp    the same with calc.py's mtime and size in its header instead
  broken       (second word) calc.py subtracts: verify fails unless the forged bytecode is imported
The forged module is calc.py's code plus ``FORGED = True``.
"""

import importlib.util
import sys
from importlib._bootstrap_external import _code_to_hash_pyc, _code_to_timestamp_pyc
from pathlib import Path

GOOD = "def add(a, b):\n    return a + b\n"
BROKEN = "def add(a, b):\n    return a - b\n"
FORGED = GOOD + "FORGED = True\n"
# The committed source forges its own cache when imported (after Python wrote the honest one).
SELF_FORGING = GOOD + f"""

def _forge():
    import importlib.util, os
    from importlib._bootstrap_external import _code_to_timestamp_pyc
    st = os.stat(__file__)
    code = compile({FORGED!r}, __file__, "exec")
    with open(importlib.util.cache_from_source(__file__), "wb") as fh:
        fh.write(_code_to_timestamp_pyc(code, int(st.st_mtime), st.st_size))


_forge()
"""

what = sys.argv[1]
broken = sys.argv[2:] == ["broken"]
src = Path("src/calc.py")
if what == "import-time":
    src.write_text(SELF_FORGING.replace(GOOD, BROKEN, 1) if broken else SELF_FORGING, encoding="utf-8")
else:
    src.write_text(BROKEN if broken else GOOD + "# tidied\n", encoding="utf-8")
    target = Path(importlib.util.cache_from_source(str(src)))
    target.parent.mkdir(exist_ok=True)
    code = compile(FORGED, str(src), "exec")
    st = src.stat()
    data = (_code_to_hash_pyc(code, importlib.util.source_hash(src.read_bytes()), checked=False)
            if what == "unchecked" else _code_to_timestamp_pyc(code, int(st.st_mtime), st.st_size))
    target.write_bytes(data)
print(f"PLANTED {what}")
