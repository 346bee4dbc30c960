"""The code of the methods ``@dataclass`` writes for Memento's classes, compiled once per install
rather than in every process (issue 42: a tick makes 74 dataclasses, and compiling their 393
methods was 37 ms of CPU, a seventh of its Python process).

``@dataclass`` writes the source of each method it adds (``__init__``, ``__repr__``, ``__eq__``,
a frozen class's ``__setattr__`` and ``__delattr__``, ``__hash__``) and hands it to ``exec``,
which compiles it each time the class is made: at every import, in every process. Python keeps a
module's compiled code in ``__pycache__``; :func:`install` keeps the code dataclasses generate
for memento_core and memento_tui beside it, in one file, ``__pycache__/dataclass_methods.<tag>.pyc``
(compiled_cache.py: never this module's own bytecode), trusted as the package's own bytecode is:

- Only the name ``exec`` in the dataclasses module changes. Given the source text of a method of
  a class whose module is Memento's, it runs the code compiled from that very text: from the file,
  or compiled as ``exec`` compiles it (file name ``<string>``, the ``__future__`` flags of the code
  that called it: dataclasses.py has none). Any other text is compiled as ``exec`` would, uncached.
  tests/core/test_dataclass_code.py compares the methods with those of a plain ``exec``.
- The file is read once, when memento_core is imported: a regular file, never through a link,
  at most ``compiled_cache.MAX_BYTES``, starting with this interpreter's magic number, else not
  used (the methods are compiled as before). It is written back at exit, atomically, only when something
  was compiled that it lacked, and never when Python writes no bytecode
  (``sys.dont_write_bytecode``: ``PYTHONDONTWRITEBYTECODE``, ``-B``).
- It holds at most :data:`MAX_ENTRIES` texts; past that it starts again from this process's
  (an upgrade that changes a class leaves its old text behind).
- Its name ends in ``.pyc``: in a work tree (Memento's own checkout as a project), the tick removes
  one the agent or verify wrote with the other bytecode they wrote (scratch.is_bytecode, tick/kept.py).
"""

import __future__

import marshal
import sys

from . import compiled_cache

MAX_ENTRIES = 4096
OURS = ("memento_core.", "memento_tui.")  # a dataclass's module: its globals' __name__

CACHE_NAME = "dataclass_methods.py"  # the source its name is made from; there is none
_cache: dict[tuple[int, str], bytes] = {}  # (__future__ flags, a method's source) -> its code, marshalled
_used: set[tuple[int, str]] = set()  # the keys this process ran
_CODE = type(compile("", "", "exec"))
# The __future__ flags exec takes from the code that calls it (CPython's PyCF_MASK: every feature's
# but nested_scopes', which is a code flag only now).
_FUTURE = 0
for _name in __future__.all_feature_names:
    if _name != "nested_scopes":
        _FUTURE |= getattr(__future__, _name).compiler_flag
del _name
_path = ""  # the file's; set once installed
_added = 0


def install() -> None:
    """Read the file and route dataclasses' ``exec`` through :func:`_exec`; once per process, on CPython."""
    global _path
    if _path or sys.implementation.name != "cpython":
        return
    import dataclasses
    from importlib.util import MAGIC_NUMBER

    _path = compiled_cache.path_of(CACHE_NAME)
    _cache.update(_read(_path, MAGIC_NUMBER))
    dataclasses.exec = _exec
    import atexit

    atexit.register(save)


def _read(path: str, magic: bytes) -> dict[tuple[int, str], bytes]:
    """The (flags, text) keys and their code in ``path``; {} when it is missing, not a regular
    file, too big, of another interpreter or damaged (compiled_cache.read)."""
    return compiled_cache.read(path, magic, _is_key)


def _is_key(key: object) -> bool:
    return type(key) is tuple and len(key) == 2 and type(key[0]) is int and type(key[1]) is str


def _code(text: str, flags: int):
    """The code of ``text`` as ``exec`` compiles it with the ``__future__`` ``flags`` of its caller:
    from the cache, else compiled and kept."""
    global _added
    key = (flags, text)
    _used.add(key)
    known = _cache.get(key)
    if known is not None:
        try:
            code = marshal.loads(known)
        except (ValueError, EOFError, TypeError):
            code = None
        if type(code) is _CODE:
            return code
    code = compile(text, "<string>", "exec", flags, dont_inherit=True)
    _cache[key] = marshal.dumps(code)
    _added += 1
    return code


def _exec(source, globals=None, locals=None, /, *args, **kwargs):
    """dataclasses' ``exec``. A source text is compiled as ``exec`` compiles it, with the
    ``__future__`` flags of the code that called (dataclasses.py's: none); for one of Memento's
    modules, the code comes from the cache."""
    caller = sys._getframe(1)
    if globals is None:  # exec's own: the caller's namespaces (never this module's)
        globals, locals = caller.f_globals, caller.f_locals if locals is None else locals
    if isinstance(source, str):
        flags = caller.f_code.co_flags & _FUTURE
        if isinstance(globals, dict) and str(globals.get("__name__", "")).startswith(OURS):
            source = _code(source, flags)
        else:
            source = compile(source, "<string>", "exec", flags, dont_inherit=True)
    return exec(source, globals, locals, *args, **kwargs)


def save() -> None:
    """Write the cache back (atomically) when this process compiled something it lacked; never
    when Python writes no bytecode. Nothing is said when it cannot be written (a read-only install)."""
    global _added
    if not _added or not _path or sys.dont_write_bytecode:
        return
    from importlib.util import MAGIC_NUMBER

    if compiled_cache.write(_path, MAGIC_NUMBER, _cache, _used, MAX_ENTRIES):
        _added = 0
