"""The code of the regular expressions modules compile as they are imported, compiled once per
install rather than in every process (issue 42: a tick's imports compile about 110 patterns, 18–28
ms of CPU, a tenth of its Python process; a paused tick's, a dashboard's and every command's
imports pay it too).

``re.compile`` parses a pattern and turns it into the list of integers its C engine runs
(``re._compiler.compile``, the same in Python 3.11 to 3.13), then hands that list to
``_sre.compile``. :func:`install` keeps the lists of the patterns compiled in a module's body
(a ``<module>`` frame: a pattern in the source, the same at every import) in one file,
``__pycache__/regex_patterns.<tag>.pyc`` (compiled_cache.py), trusted as the package's own bytecode
is, and hands a kept list straight to ``_sre.compile``:

- Only ``re._compiler.compile`` changes, below ``re``'s own cache, so ``re.compile`` still
  returns the same object for the same pattern within a process. A pattern compiled anywhere
  else than in a module's body (from a person's glob, from data), with ``re.DEBUG``, or whose
  code depends on the locale (``re.LOCALE``, ``(?L)``) is compiled as before, never kept.
- A pattern is kept only after ``_sre.compile`` of what is kept gave an equal pattern (the same
  flags and code, ``Pattern.__eq__``; the same groups) to the one ``re`` compiled, and only when
  compiling it warned of nothing (a warning is said at each compile; a kept pattern is not parsed).
  tests/core/test_regex_code.py compares every pattern Memento's modules compile, and hostile
  ones, with ``re``'s own.
- The file starts with this interpreter's magic number, its exact version and the engine's
  (``_sre.MAGIC``), else it is not used; a kept list the engine refuses (``_sre.compile`` checks
  the code it is given) is compiled as before. It is read once, when memento_core is imported,
  and written back at exit only when something was compiled that it lacked, never when Python
  writes no bytecode (``sys.dont_write_bytecode``).
- It holds at most :data:`MAX_ENTRIES` patterns; past that it starts again from this process's.
"""

import marshal
import re
import sys

from . import compiled_cache

MAX_ENTRIES = 4096
CACHE_NAME = "regex_patterns.py"  # the source its name is made from; there is none (never a module)
# (is it bytes, the pattern, the flags re.compile was given) -> marshalled arguments of _sre.compile
_cache: dict[tuple[bool, str | bytes, int], bytes] = {}
_used: set[tuple[bool, str | bytes, int]] = set()  # the keys this process compiled
_path = ""  # the file's; set once installed
_added = 0
_original = None  # re._compiler.compile as it was
_RE_FILE = ""  # re/__init__.py: re.compile, re.match, ... and re._compile, between a module and us
_NOT_KEPT = int(re.DEBUG | re.LOCALE)  # printed as compiled; code that depends on the locale


def install() -> None:
    """Read the file and route ``re._compiler.compile`` through :func:`_compile`; once per
    process, on CPython."""
    global _path, _original, _RE_FILE
    if _path or sys.implementation.name != "cpython":
        return
    from importlib.util import MAGIC_NUMBER

    _path = compiled_cache.path_of(CACHE_NAME)
    _cache.update(compiled_cache.read(_path, _magic(MAGIC_NUMBER), _is_key))
    _RE_FILE = re._compile.__code__.co_filename
    _original = re._compiler.compile
    re._compiler.compile = _compile
    import atexit

    atexit.register(save)


def _magic(bytecode_magic: bytes) -> bytes:
    import _sre

    return bytecode_magic + b"%d:%d;" % (sys.hexversion, _sre.MAGIC)


def _is_key(key: object) -> bool:
    return (type(key) is tuple and len(key) == 3 and type(key[0]) is bool
            and type(key[1]) is (bytes if key[0] else str) and type(key[2]) is int)


def _in_module_body(frame) -> bool:
    """Whether the code that called ``re`` (past re's own functions) is a module's body."""
    while frame is not None and frame.f_code.co_filename == _RE_FILE:
        frame = frame.f_back
    return frame is not None and frame.f_code.co_name == "<module>"


def _compile(p, flags=0):
    """``re._compiler.compile``: a kept pattern from the file, else compiled as ``re`` does
    (and kept when it was compiled in a module's body)."""
    if type(p) not in (str, bytes) or flags & _NOT_KEPT or not _in_module_body(sys._getframe(1)):
        return _original(p, flags)
    key = (type(p) is bytes, p, flags)
    _used.add(key)
    known = _cache.get(key)
    if known is not None:
        try:
            return _from_args(p, marshal.loads(known))
        except (ValueError, EOFError, TypeError, RuntimeError, OverflowError):
            pass  # damaged, or code the engine refuses: compiled as before
    pattern = _original(p, flags)
    _keep(key, p, flags, pattern)
    return pattern


def _from_args(p, args):
    """``_sre.compile`` of kept arguments: it refuses any other number or kind of them, and code
    its own check finds invalid (TypeError, RuntimeError)."""
    import _sre

    return _sre.compile(p, *args)


def _keep(key, p, flags: int, pattern) -> None:
    """Keep the arguments ``_sre.compile`` makes ``pattern`` of, when they make an equal one."""
    global _added
    import warnings

    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        args = _args(p, flags)
    if said or args[0] & _NOT_KEPT:
        return
    try:
        again = _from_args(p, args)
    except (ValueError, TypeError, RuntimeError, OverflowError):
        return
    if again == pattern and again.groups == pattern.groups and again.groupindex == pattern.groupindex:
        _cache[key] = marshal.dumps(args)
        _added += 1


def _args(p, flags: int) -> tuple:
    """What ``re._compiler.compile`` hands ``_sre.compile`` after the pattern: its flags, code,
    number of groups less one, group names to numbers and numbers to names (its own steps)."""
    from re import _compiler, _parser

    tree = _parser.parse(p, flags)
    code = _compiler._code(tree, flags)
    groupindex = dict(tree.state.groupdict)
    indexgroup = [None] * tree.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    # The opcodes are int subclasses with names (re._constants), which marshal refuses: plain ints.
    return (int(flags | tree.state.flags), [int(op) for op in code], tree.state.groups - 1, groupindex,
            tuple(indexgroup))


def save() -> None:
    """Write the file back (atomically) when this process compiled something it lacked; never
    when Python writes no bytecode. Nothing is said when it cannot be written (a read-only install)."""
    global _added
    if not _added or not _path or sys.dont_write_bytecode:
        return
    from importlib.util import MAGIC_NUMBER

    if compiled_cache.write(_path, _magic(MAGIC_NUMBER), _cache, _used, MAX_ENTRIES):
        _added = 0
