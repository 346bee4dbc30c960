"""dataclass_code.py: the methods ``@dataclass`` writes for Memento's classes, compiled once per
install. Judged against dataclasses' own ``exec`` (every dataclass of memento_core and memento_tui,
method by method, in real processes), on the file on disk, and against files no one should trust."""

from __future__ import annotations

import dataclasses
import json
import marshal
import os
import subprocess
import sys
from importlib.util import MAGIC_NUMBER, cache_from_source
from pathlib import Path

import pytest

from memento_core import dataclass_code, scratch

ROOT = Path(__file__).resolve().parents[2]

# Every dataclass of Memento's modules (all of them imported), each generated method described by
# what makes its code what it is: bytecode, constants (nested code likewise), names, flags, lines,
# defaults, annotations. ``plain`` puts dataclasses' own exec back first, as without this module.
_METHODS = r"""
import dataclasses, importlib, json, pkgutil, re, sys
import memento_core
from memento_core import dataclass_code
if sys.argv[1] == "plain":
    del dataclasses.exec
import memento_tui
for package in (memento_core, memento_tui):
    for found in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if not found.name.endswith(".__main__"):
            importlib.import_module(found.name)

def code(c):
    return (c.co_code.hex(), [code(k) if hasattr(k, "co_code") else repr(k) for k in c.co_consts], c.co_names,
            c.co_varnames, c.co_freevars, c.co_cellvars, c.co_flags, c.co_argcount, c.co_posonlyargcount,
            c.co_kwonlyargcount, c.co_stacksize, c.co_firstlineno, c.co_linetable.hex(),
            c.co_exceptiontable.hex(), c.co_filename, c.co_qualname)

def text(x):
    return re.sub(r" at 0x[0-9a-f]+", "", repr(x))

methods = {}
for name, module in sorted(sys.modules.items()):
    if not name.startswith(("memento_core.", "memento_tui.")):
        continue
    for cls in list(vars(module).values()):
        if not (isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == name):
            continue
        for attr, f in vars(cls).items():
            f = getattr(f, "__wrapped__", f)  # __repr__ comes wrapped by reprlib.recursive_repr
            if getattr(f, "__code__", None) is not None and f.__code__.co_filename == "<string>":
                methods[f"{name}.{cls.__qualname__}.{attr}"] = [
                    code(f.__code__), text(f.__defaults__), text(f.__kwdefaults__), text(f.__annotations__)]
print(json.dumps({"added": dataclass_code._added, "methods": methods}))
"""


def _methods(mode: str, prefix: Path, **env: str) -> dict:
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    # One hash seed: a frozenset default's repr is in the same order in each process.
    environ.update(PYTHONPYCACHEPREFIX=str(prefix), PYTHONPATH=str(ROOT), PYTHONHASHSEED="0", **env)
    done = subprocess.run([sys.executable, "-c", _METHODS, mode], capture_output=True, text=True, env=environ,
                          timeout=300, check=True)
    return json.loads(done.stdout)


def _cache_file(prefix: Path) -> Path:
    """Where the file lands under PYTHONPYCACHEPREFIX ``prefix``: the tree of memento_core mirrored."""
    return prefix / (ROOT / "memento_core" / "__pycache__").relative_to("/").parent / \
        Path(cache_from_source(str(ROOT / "memento_core" / dataclass_code.CACHE_NAME))).name


def test_every_method_is_the_one_dataclasses_own_exec_makes_compiled_here_or_read_back(tmp_path):
    plain = _methods("plain", tmp_path / "plain")
    first = _methods("cached", tmp_path / "cached")
    again = _methods("cached", tmp_path / "cached")
    assert len(plain["methods"]) > 500  # memento_core's and memento_tui's dataclasses, method by method
    assert plain["methods"] == first["methods"] == again["methods"]
    assert plain["added"] == 0 and first["added"] > 300  # compiled here once ...
    assert again["added"] == 0  # ... and the next process compiles none of them
    assert not list((tmp_path / "plain").rglob("dataclass_methods*"))
    path = _cache_file(tmp_path / "cached")
    assert path.is_file() and path.read_bytes().startswith(MAGIC_NUMBER)  # beside the package's bytecode


def test_no_file_is_written_when_python_writes_no_bytecode(tmp_path):
    got = _methods("cached", tmp_path, PYTHONDONTWRITEBYTECODE="1")
    assert got["added"] > 300
    assert not list(tmp_path.rglob("dataclass_methods*"))


# ---------------------------------------------------------------- in this process


@pytest.fixture
def cache(monkeypatch, tmp_path):
    """The module's state, private to the test: an empty cache whose file is tmp_path/cache.pyc."""
    monkeypatch.setattr(dataclass_code, "_cache", {})
    monkeypatch.setattr(dataclass_code, "_used", set())
    monkeypatch.setattr(dataclass_code, "_added", 0)
    monkeypatch.setattr(dataclass_code, "_path", str(tmp_path / "cache.pyc"))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    return tmp_path / "cache.pyc"


# A caller as dataclasses.py is one: code with no __future__ import (this file has one).
_AS_DATACLASSES: dict = {"dataclasses": dataclasses}
exec(compile("def run(source, g, ns):\n dataclasses.exec(source, g, ns)\n", "<as dataclasses.py>", "exec",
             dont_inherit=True), _AS_DATACLASSES)


def _make(module: str, source: str) -> dict:
    """``source`` run as dataclasses runs a method's: through its exec, for a class of ``module``."""
    ns: dict = {}
    _AS_DATACLASSES["run"](source, {"__name__": module}, ns)
    return ns


def test_a_text_for_memento_is_compiled_once_and_others_are_compiled_as_exec_does_uncached(cache):
    text = "def __create_fn__(cls):\n def __eq__(self, other):\n  return self is other\n return __eq__"
    first = _make("memento_core.plan.model", text)["__create_fn__"]
    again = _make("memento_tui.app", text)["__create_fn__"]
    assert first.__code__ is not again.__code__ and first.__code__ == again.__code__
    assert (dataclass_code._added, list(dataclass_code._cache)) == (1, [(0, text)])
    theirs = text.replace("self is other", "self == other")
    other: dict = {}
    exec(compile(theirs, "<string>", "exec", dont_inherit=True), {"__name__": "tests.somewhere"}, other)
    assert _make("tests.somewhere", theirs)["__create_fn__"].__code__ == other["__create_fn__"].__code__
    assert _make("memento_corex", theirs)  # a name that only starts alike
    ns: dict = {}
    _AS_DATACLASSES["run"](theirs, None, ns)  # no globals given: exec's own (this caller's)
    assert ns["__create_fn__"].__code__ == other["__create_fn__"].__code__
    assert ns["__create_fn__"].__globals__ is _AS_DATACLASSES
    assert (dataclass_code._added, list(dataclass_code._cache)) == (1, [(0, text)])


def test_the_future_flags_are_those_of_the_code_that_called_exec_as_exec_takes_them(cache):
    """dataclasses.py has no __future__ import; a caller that has one (annotations as strings) gets
    the code exec would compile for it, under its own key."""
    text = "def f(x: int) -> int:\n return x"
    caller = compile("from __future__ import annotations\ndef call(run, text, g, ns):\n run(text, g, ns)\n",
                     "<caller>", "exec")
    space: dict = {}
    exec(caller, space)
    ours, theirs = {}, {}
    space["call"](dataclass_code._exec, text, {"__name__": "memento_core.x"}, ours)
    space["call"](exec, text, {"__name__": "memento_core.x"}, theirs)
    assert ours["f"].__annotations__ == theirs["f"].__annotations__ == {"x": "int", "return": "int"}
    plain = _make("memento_core.x", text)["f"]
    assert plain.__annotations__ == {"x": int, "return": int}
    assert sorted(flags for flags, _ in dataclass_code._cache) == [0, dataclass_code._FUTURE & caller.co_flags]


def test_save_writes_what_was_compiled_and_a_new_process_reads_it(cache):
    dataclass_code.save()
    assert not cache.exists()  # nothing compiled: nothing written
    text = "def g():\n return 1"
    _make("memento_core.y", text)
    dataclass_code.save()
    assert dataclass_code._read(str(cache), MAGIC_NUMBER).keys() == {(0, text)}
    assert dataclass_code._added == 0
    assert sorted(p.name for p in cache.parent.iterdir()) == ["cache.pyc"]  # no temporary left


def test_save_makes_the_folder_and_a_file_others_may_read_as_python_makes_bytecode(cache, monkeypatch, tmp_path):
    path = tmp_path / "__pycache__" / "cache.pyc"
    monkeypatch.setattr(dataclass_code, "_path", str(path))
    _make("memento_core.y", "def g():\n return 5")
    old = os.umask(0o022)
    try:
        dataclass_code.save()
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o7777 == 0o644
    assert dataclass_code._read(str(path), MAGIC_NUMBER).keys() == {(0, "def g():\n return 5")}


def test_save_writes_nothing_when_python_writes_no_bytecode(cache, monkeypatch):
    _make("memento_core.y", "def g():\n return 2")
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    dataclass_code.save()
    assert not cache.exists()


def test_save_replaces_a_link_put_at_its_place_and_never_writes_through_it(cache, tmp_path):
    victim = tmp_path / "persons.txt"
    victim.write_text("mine\n")
    cache.symlink_to(victim)
    _make("memento_core.y", "def g():\n return 3")
    dataclass_code.save()
    assert victim.read_text() == "mine\n"
    assert not cache.is_symlink() and dataclass_code._read(str(cache), MAGIC_NUMBER)


def test_save_in_a_folder_it_cannot_write_says_nothing_and_leaves_nothing(cache, monkeypatch, tmp_path):
    monkeypatch.setattr(dataclass_code, "_path", str(tmp_path / "file" / "cache.pyc"))
    (tmp_path / "file").write_text("a file where the folder would be\n")
    _make("memento_core.y", "def g():\n return 4")
    dataclass_code.save()  # no exception
    assert (tmp_path / "file").read_text() == "a file where the folder would be\n"
    assert dataclass_code._added == 1  # still to be written


def test_save_that_cannot_replace_what_stands_there_leaves_no_temporary(cache):
    cache.mkdir()
    (cache / "a person's").write_text("kept\n")
    _make("memento_core.y", "def g():\n return 6")
    dataclass_code.save()
    assert sorted(p.name for p in cache.parent.iterdir()) == ["cache.pyc"]
    assert (cache / "a person's").read_text() == "kept\n"


def test_past_max_entries_it_starts_again_from_what_this_process_ran(cache, monkeypatch):
    monkeypatch.setattr(dataclass_code, "MAX_ENTRIES", 3)
    old = {(0, f"def old{i}():\n pass"): marshal.dumps(compile("pass", "<string>", "exec")) for i in range(3)}
    dataclass_code._cache.update(list(old.items())[:2])
    _make("memento_core.y", "def new():\n pass")
    dataclass_code.save()  # three, the most it keeps: all of them
    assert dataclass_code._read(str(cache), MAGIC_NUMBER).keys() == {*list(old)[:2], (0, "def new():\n pass")}
    dataclass_code._cache.update(old)
    _make("memento_core.y", "def newer():\n pass")
    dataclass_code.save()  # five: what this process ran
    assert dataclass_code._read(str(cache), MAGIC_NUMBER).keys() == {(0, "def new():\n pass"),
                                                                       (0, "def newer():\n pass")}


def test_a_file_read_from_the_cache_runs_the_code_it_holds_for_that_text(cache):
    """The cache is trusted as bytecode is (an install's __pycache__): the code stored for a text is
    what runs; a damaged entry is compiled again."""
    text = "def h():\n return 'compiled'"
    dataclass_code._cache[(0, text)] = marshal.dumps(compile("def h():\n return 'cached'", "<string>", "exec"))
    assert _make("memento_core.z", text)["h"]() == "cached"
    dataclass_code._cache[(0, text)] = b"\x00damaged"
    assert _make("memento_core.z", text)["h"]() == "compiled"
    dataclass_code._cache[(0, text)] = marshal.dumps(("not", "code"))
    assert _make("memento_core.z", text)["h"]() == "compiled"


def test_it_is_installed_once_and_only_on_cpython(monkeypatch, tmp_path):
    import dataclasses as dc

    path = tmp_path / "cache.pyc"
    path.write_bytes(MAGIC_NUMBER + marshal.dumps({(0, "def a():\n pass"): b"x"}))
    monkeypatch.setattr(dataclass_code, "_cache", {})
    monkeypatch.setattr(dataclass_code, "_path", str(path))
    dataclass_code.install()  # installed when memento_core was imported: the file is not read again
    assert dataclass_code._cache == {} and dataclass_code._path == str(path)
    monkeypatch.setattr(dataclass_code, "_path", "")  # not installed yet
    monkeypatch.setattr(sys.implementation, "name", "pypy")
    monkeypatch.delattr(dc, "exec")
    dataclass_code.install()  # another Python: dataclasses as they are
    assert not hasattr(dc, "exec") and dataclass_code._cache == {}


def test_its_name_is_bytecode_so_the_tick_removes_one_an_agent_or_verify_wrote_in_a_work_tree():
    rel = Path(cache_from_source("memento_core/" + dataclass_code.CACHE_NAME))
    assert rel.parent.name == "__pycache__" and rel.name.startswith("dataclass_methods.")
    assert scratch.is_bytecode(rel.as_posix())
    own = Path(cache_from_source(dataclass_code.__file__)).name
    assert rel.name != own  # never this module's own bytecode, which Python writes there too
