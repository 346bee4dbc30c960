"""regex_code.py: the patterns modules compile as they are imported, compiled once per install.
Judged against ``re``'s own compiler (every pattern Memento's modules compile, in real processes,
and hostile ones: groups, flags, bytes, the locale, warnings), on the file on disk, and against
entries no one should trust."""

from __future__ import annotations

import json
import marshal
import os
import re
import subprocess
import sys
import warnings
from importlib.util import MAGIC_NUMBER, cache_from_source
from pathlib import Path

import pytest

from memento_core import compiled_cache, dataclass_code, regex_code, scratch

ROOT = Path(__file__).resolve().parents[2]

# Every module of memento_core and memento_tui imported, then each kept pattern judged here,
# against re's compiler, in this process: the same flags and code (Pattern.__eq__), groups and
# names. ``plain`` puts re's own compiler back first, as without this module.
_PATTERNS = r"""
import importlib, json, marshal, pkgutil, re, sys
import memento_core
from memento_core import regex_code
if sys.argv[1] == "plain":
    re._compiler.compile = regex_code._original
import memento_tui
for package in (memento_core, memento_tui):
    for found in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if not found.name.endswith(".__main__"):
            importlib.import_module(found.name)

def described(p):
    return [p.pattern if isinstance(p.pattern, str) else p.pattern.hex(), p.flags, p.groups, dict(p.groupindex)]

unlike = []
for (is_bytes, text, flags), kept in regex_code._cache.items():
    mine, theirs = regex_code._from_args(text, marshal.loads(kept)), regex_code._original(text, flags)
    if not (mine == theirs and described(mine) == described(theirs)):
        unlike.append(repr(text))
found = {}
for name, module in sorted(sys.modules.items()):
    if name.startswith(("memento_core.", "memento_tui.")):
        for attr, value in vars(module).items():
            if isinstance(value, re.Pattern):
                found[f"{name}.{attr}"] = described(value)
print(json.dumps({"added": regex_code._added, "used": len(regex_code._used), "kept": len(regex_code._cache),
                  "unlike": unlike, "found": found}))
"""


def _patterns(mode: str, prefix: Path, **env: str) -> dict:
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    environ.update(PYTHONPYCACHEPREFIX=str(prefix), PYTHONPATH=str(ROOT), **env)
    done = subprocess.run([sys.executable, "-c", _PATTERNS, mode], capture_output=True, text=True, env=environ,
                          timeout=300, check=True)
    return json.loads(done.stdout)


def test_every_pattern_memento_compiles_is_the_one_re_compiles_here_or_read_back(tmp_path):
    plain = _patterns("plain", tmp_path / "plain")
    first = _patterns("cached", tmp_path / "cached")
    again = _patterns("cached", tmp_path / "cached")
    assert len(plain["found"]) > 100  # memento_core's and memento_tui's module-level patterns
    assert plain["found"] == first["found"] == again["found"]
    assert plain["added"] == 0 and first["added"] > 100  # compiled here once ...
    assert again["added"] == 0 and again["used"] >= first["added"]  # ... read back by the next process
    assert first["unlike"] == again["unlike"] == []
    assert not list((tmp_path / "plain").rglob("regex_patterns*"))
    path = tmp_path / "cached" / (ROOT / "memento_core").relative_to("/") / \
        Path(cache_from_source(str(ROOT / "memento_core" / regex_code.CACHE_NAME))).name  # under the prefix
    assert path.is_file() and path.read_bytes().startswith(regex_code._magic(MAGIC_NUMBER))


def test_no_file_is_written_when_python_writes_no_bytecode(tmp_path):
    got = _patterns("cached", tmp_path, PYTHONDONTWRITEBYTECODE="1")
    assert got["added"] > 100
    assert not list(tmp_path.rglob("regex_patterns*"))


# ---------------------------------------------------------------- in this process


@pytest.fixture
def cache(monkeypatch, tmp_path):
    """The module's state, private to the test: an empty cache whose file is tmp_path/cache.pyc;
    re's own cache emptied so that each compile reaches the compiler."""
    monkeypatch.setattr(regex_code, "_cache", {})
    monkeypatch.setattr(regex_code, "_used", set())
    monkeypatch.setattr(regex_code, "_added", 0)
    monkeypatch.setattr(regex_code, "_path", str(tmp_path / "cache.pyc"))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    re.purge()
    yield tmp_path / "cache.pyc"
    re.purge()


def _in_a_module(text: str | bytes, flags: int = 0) -> re.Pattern:
    """``re.compile(text, flags)`` in a module's body (code named ``<module>``, as an import runs)."""
    space = {"re": re, "text": text, "flags": flags}
    exec(compile("found = re.compile(text, flags)", "<a module>", "exec"), space)
    return space["found"]


def _in_a_function(text: str) -> re.Pattern:
    return re.compile(text)


def _twice(text: str | bytes, flags: int = 0) -> tuple[re.Pattern, re.Pattern]:
    """The pattern as a first process compiles it, and as the next one does from what was kept."""
    first = _in_a_module(text, flags)
    re.purge()
    return first, _in_a_module(text, flags)


HOSTILE = [
    r"(?P<word>\w+)\s+(?P=word)",  # named groups and a reference to one
    r"(a)(b)?(?(2)c|d)",  # a condition on a group
    r"(?<=\$)\d+(?!\.)",  # look-behind and a negative look-ahead
    r"(?>a+)b|x++y",  # an atomic group, a possessive repeat (3.11)
    r"(?i)straße|ǅ",  # an inline flag; case folding beyond ASCII
    r"(?x) a  b  # a comment",  # verbose
    r"(?s:.)(?m:^$)(?-i:x)",  # scoped flags
    r"[^\W\d_]{2,}?",  # a lazy repeat of a negated class
    "\x00\n\ud800",  # a NUL, a line break, a lone surrogate
    r"a{0,4294967294}",  # the largest repeat the engine takes
    "(" * 50 + "x" + ")" * 50,  # fifty groups
    b"(?P<b>\\xff+)[\\x00-\\x7f]",  # bytes
]


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
@pytest.mark.parametrize("flags", [0, re.IGNORECASE | re.MULTILINE, re.ASCII, re.VERBOSE | re.DOTALL])
def test_a_kept_pattern_is_the_one_re_compiles_and_matches_as_it_does(cache, text, flags):
    mine, theirs = _twice(text, flags), regex_code._original(text, flags)
    assert regex_code._added == 1 and len(regex_code._cache) == 1
    for pattern in mine:
        assert pattern == theirs and pattern.flags == theirs.flags
        assert (pattern.groups, dict(pattern.groupindex)) == (theirs.groups, dict(theirs.groupindex))
    sample = (b"\xff\xff\x01 x" if isinstance(text, bytes)
              else "hello hello $12 abxd STRASSE straße ǆ \x00\n aaab xxy")
    assert [m.span() for m in mine[1].finditer(sample)] == [m.span() for m in theirs.finditer(sample)]


def test_a_pattern_compiled_anywhere_but_in_a_modules_body_is_not_kept(cache):
    assert _in_a_function(r"glob\d") == regex_code._original(r"glob\d", 0)
    assert regex_code._cache == {} and regex_code._used == set()


@pytest.mark.parametrize("text, flags", [(b"\\w+", re.LOCALE), (b"(?L)\\w+", 0), ("x", re.DEBUG)])
def test_a_pattern_whose_code_depends_on_the_locale_or_that_prints_is_not_kept(cache, text, flags, capsys):
    mine, again = _twice(text, flags)
    assert mine == again == regex_code._original(text, flags)
    assert regex_code._cache == {} and regex_code._added == 0


def test_a_pattern_that_warns_is_not_kept_and_warns_at_each_first_compile(cache):
    text = "[[a]x"  # re: "Possible nested set"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = regex_code._original(text, 0)
    for _ in range(2):
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            assert _in_a_module(text) == theirs
        assert [w.category for w in said] == [FutureWarning]
        re.purge()
    assert regex_code._cache == {}


@pytest.mark.parametrize("action", ["ignore", "once", "default"])
def test_a_pattern_that_warns_is_not_kept_whatever_this_processs_warnings_filter_says(cache, action):
    """A process that ignores the warning (or said it once already) keeps nothing another process
    would have been warned of."""
    with warnings.catch_warnings(record=True):
        warnings.simplefilter(action)
        _in_a_module("[[b]x")
        _in_a_module("[[c]x")
    assert regex_code._cache == {}


def test_a_reading_that_does_not_make_the_same_pattern_is_never_kept(cache, monkeypatch):
    """What is kept is what re made, checked: another code with the same groups (a compiler that
    differs from re's own) is not kept."""
    real = regex_code._args
    monkeypatch.setattr(regex_code, "_args", lambda p, flags: real("(y)", flags))
    assert _in_a_module("(x)") == regex_code._original("(x)", 0)
    assert regex_code._cache == {}


def test_a_scanner_compiles_its_parsed_lexicon_as_re_does(cache, monkeypatch):
    """re.Scanner hands the compiler a parsed pattern and no flags: never kept, re's default kept."""
    lexicon = [(r"\d+", lambda s, t: int(t)), (r"\s+", None), (r"[a-z]+", lambda s, t: t)]
    scanner = re.Scanner(lexicon)
    assert scanner.scan("12 ab 3") == ([12, "ab", 3], "")
    assert regex_code._cache == {}
    monkeypatch.setattr(re._compiler, "compile", regex_code._original)
    assert scanner.scanner.scanner("").pattern.flags == re.Scanner(lexicon).scanner.scanner("").pattern.flags


def test_a_pattern_re_refuses_is_refused_and_not_kept(cache):
    with pytest.raises(re.error, match="missing \\)"):
        _in_a_module("(unclosed")
    assert regex_code._cache == {}


def test_re_still_returns_one_object_for_one_pattern_within_a_process(cache):
    first = _in_a_module(r"same\d")
    assert _in_a_module(r"same\d") is first and re.compile(r"same\d") is first


@pytest.mark.parametrize("damage", [
    b"\x00damaged",
    marshal.dumps(("not", "the", "arguments")),
    marshal.dumps((32, [999], 0, {}, (None,))),  # code the engine refuses
    marshal.dumps((32, "code", 0, {}, (None,))),
    marshal.dumps([32, [], 0, {}, (None,)]),
])
def test_a_damaged_entry_is_compiled_as_before(cache, damage):
    regex_code._cache[(False, r"ok\d", 0)] = damage
    assert _in_a_module(r"ok\d") == regex_code._original(r"ok\d", 0)
    assert regex_code._cache[(False, r"ok\d", 0)] != damage  # kept again, as compiled now


def test_a_str_and_the_same_bytes_are_kept_apart(cache):
    with warnings.catch_warnings():
        warnings.simplefilter("error", BytesWarning)
        _twice("a+")
        _twice(b"a+")
    assert {(b, t) for b, t, _ in regex_code._cache} == {(False, "a+"), (True, b"a+")}
    assert isinstance(_in_a_module(b"a+").pattern, bytes)


def test_save_writes_what_was_compiled_and_nothing_else(cache, monkeypatch):
    regex_code.save()
    assert not cache.exists()  # nothing compiled: nothing written
    _in_a_module(r"saved\d")
    regex_code.save()
    magic = regex_code._magic(MAGIC_NUMBER)
    assert compiled_cache.read(str(cache), magic, regex_code._is_key).keys() == {(False, r"saved\d", 0)}
    assert regex_code._added == 0
    assert sorted(p.name for p in cache.parent.iterdir()) == ["cache.pyc"]  # no temporary left
    _in_a_module(r"unsaved\d")
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    regex_code.save()
    assert len(compiled_cache.read(str(cache), magic, regex_code._is_key)) == 1


def test_past_max_entries_it_starts_again_from_what_this_process_compiled(cache, monkeypatch):
    monkeypatch.setattr(regex_code, "MAX_ENTRIES", 2)
    magic = regex_code._magic(MAGIC_NUMBER)
    regex_code._cache[(False, "kept from before", 0)] = marshal.dumps(regex_code._args("kept from before", 0))
    _in_a_module("one")
    regex_code.save()  # two, the most it keeps: both, the one this process did not compile too
    assert len(compiled_cache.read(str(cache), magic, regex_code._is_key)) == 2
    del regex_code._cache[(False, "kept from before", 0)]
    _in_a_module("two")
    regex_code.save()
    re.purge()
    regex_code._used.clear()
    _in_a_module("three")
    regex_code.save()  # three kept, more than two: only what this process compiled
    assert compiled_cache.read(str(cache), magic, regex_code._is_key).keys() == {(False, "three", 0)}


def test_a_file_of_another_python_or_engine_is_not_used(cache, monkeypatch):
    _in_a_module(r"v\d")
    regex_code.save()
    assert compiled_cache.read(str(cache), regex_code._magic(MAGIC_NUMBER), regex_code._is_key)
    monkeypatch.setattr(sys, "hexversion", sys.hexversion + 1)  # a patch release: its compiler may differ
    assert compiled_cache.read(str(cache), regex_code._magic(MAGIC_NUMBER), regex_code._is_key) == {}
    monkeypatch.undo()
    import _sre

    monkeypatch.setattr(_sre, "MAGIC", _sre.MAGIC + 1)
    assert compiled_cache.read(str(cache), regex_code._magic(MAGIC_NUMBER), regex_code._is_key) == {}


@pytest.mark.parametrize("key", [("x", 0), (False, b"x", 0), (True, "x", 0), (False, "x", "0"), (0, "x", 0),
                                 (False, "x", 0, 1), [False, "x", 0]])
def test_a_key_of_another_shape_is_not_read(key):
    assert not regex_code._is_key(key)
    assert regex_code._is_key((False, "x", 0)) and regex_code._is_key((True, b"x", 0))


def test_it_is_installed_once_and_only_on_cpython(monkeypatch, tmp_path):
    hook = re._compiler.compile
    assert hook is regex_code._compile  # installed when memento_core was imported
    monkeypatch.setattr(regex_code, "_cache", {})
    regex_code.install()  # the file is not read again
    assert regex_code._cache == {} and re._compiler.compile is hook
    monkeypatch.setattr(regex_code, "_path", "")  # not installed yet
    monkeypatch.setattr(sys.implementation, "name", "pypy")
    monkeypatch.setattr(re._compiler, "compile", regex_code._original)
    regex_code.install()  # another Python: re as it is
    assert re._compiler.compile is regex_code._original and regex_code._path == ""


@pytest.mark.parametrize("module", [regex_code, dataclass_code], ids=["regex_code", "dataclass_code"])
def test_its_file_is_never_a_modules_own_bytecode_and_the_tick_removes_one_a_work_tree_has(module):
    """Python writes a module's bytecode beside the file too: a name of a module would be overwritten."""
    assert not (ROOT / "memento_core" / module.CACHE_NAME).exists()
    rel = Path(cache_from_source("memento_core/" + module.CACHE_NAME))
    assert rel.parent.name == "__pycache__" and scratch.is_bytecode(rel.as_posix())
    assert compiled_cache.path_of(module.CACHE_NAME).endswith(rel.name)
