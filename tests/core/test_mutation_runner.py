"""bench/mutants.py, the mutation runner of issue 37: what it mutates, and that a run judges each
mutant by the tests alone and leaves the project as it found it (a copy is mutated, never the tree)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "mutants.py"
spec = importlib.util.spec_from_file_location("mutants_bench", BENCH)
mutants = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = mutants  # its dataclasses look their module up
spec.loader.exec_module(mutants)

CALC = '''"""A module docstring: never mutated."""


def sign(x):
    if x > 0 and x is not None:
        return 1
    return 0


LIMIT = 3  # pragma: no mutate (a setting, not behaviour)


def names(items):
    for item in items:
        if item.startswith("_") or not item:
            continue
        yield item
    raise_it = False
    if raise_it:
        raise ValueError("never")
'''
TEST = '''from pkg.calc import names, sign


def test_sign():
    assert sign(5) == 1 and sign(-1) == 0


def test_names():
    assert list(names(["a", "_b", ""])) == ["a"]
'''


def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "calc.py").write_text(CALC)
    (root / "tests").mkdir()
    (root / "tests" / "test_calc.py").write_text(TEST)
    return root


def test_each_kind_of_one_line_mutation_is_made_and_compiles_but_not_in_docstrings_or_marked_lines(tmp_path):
    root = project(tmp_path)
    found = mutants.mutants_of("pkg/calc.py", root)
    kinds = {m.what for m in found}
    assert {"> -> >=", "and -> or", "is not -> is", "1 -> 2", "return None", ".startswith -> .endswith",
            "not removed", "continue deleted", "raise deleted", "False -> True", "or -> and"} <= kinds
    assert all(m.line != 1 for m in found)  # the docstring
    assert all("LIMIT" not in m.was for m in found)  # pragma: no mutate
    for m in found:
        changed = [i for i, (a, b) in enumerate(zip(CALC.splitlines(), m.text.splitlines(), strict=True)) if a != b]
        assert changed == [m.line - 1], m
    sampled = [m for m in mutants.sample(found, 4, 37, "pkg/calc.py") if mutants.compiles(m)]
    assert len(sampled) == 4 and sampled == mutants.sample(found, 4, 37, "pkg/calc.py")  # by the seed alone
    assert sampled != mutants.sample(found, 4, 38, "pkg/calc.py")


@pytest.mark.slow  # a pytest run per mutant: ~10 runs
def test_a_run_kills_what_the_tests_see_lists_what_they_do_not_and_leaves_the_project_untouched(tmp_path):
    root = project(tmp_path)
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    out = tmp_path / "results.json"
    run = subprocess.run([sys.executable, str(BENCH), "--root", str(root), "--json", str(out), "--jobs", "2",
                          "--at", "pkg/calc.py:5", "--at", "pkg/calc.py:15",
                          "pkg/calc.py=tests/test_calc.py"], capture_output=True, text=True, timeout=300)
    results = {(r["line"], r["what"]): r["verdict"] for r in json.loads(out.read_text())}
    # sign(0) is never asked: `x >= 0` passes every test; `_b` and "" are asked about
    assert results[(5, "> -> >=")] == "survived"
    assert results[(5, "and -> or")] == "killed"  # sign(-1) would be 1
    assert results[(15, ".startswith -> .endswith")] == "killed"
    assert results[(15, "not removed")] == "killed"
    assert "pkg/calc.py:5: > -> >=" in run.stdout and "survivors" in run.stdout
    assert run.returncode == 1  # under the budget
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before
    assert not list(tmp_path.glob(".mutants-*"))


def test_an_equivalent_entry_matching_more_mutants_than_it_says_stops_the_run(tmp_path, monkeypatch, capsys):
    """Keyed by the line's text, an entry for one `return 0` would also hide a `return 0` written
    later elsewhere in the module: a run refuses until the entry says how many it means."""
    root = project(tmp_path)
    calc = root / "pkg" / "calc.py"
    calc.write_text(CALC + "\n\ndef zero():\n    return 0\n")
    key = ("pkg/calc.py", "return 0", "return None")
    monkeypatch.setattr(mutants, "EQUIVALENT", {key: "sign's 0 is only tested for truth"})
    found = mutants.mutants_of("pkg/calc.py", root)
    errors, stale = mutants.equivalent_problems("pkg/calc.py", found)
    assert len(errors) == 1 and "matches 2 (lines 7, 24)" in errors[0] and not stale
    assert mutants.main(["--root", str(root), "--list", "pkg/calc.py=tests/test_calc.py"]) == 2
    assert "matches 2" in capsys.readouterr().err

    monkeypatch.setattr(mutants, "EQUIVALENT", {key: mutants.Each(2, "0 is only tested for truth")})
    assert mutants.equivalent_problems("pkg/calc.py", found) == ([], [])
    assert [(m.line, m.equivalent) for m in found if m.equivalent] == [(7, "0 is only tested for truth"),
                                                                       (24, "0 is only tested for truth")]
    assert mutants.main(["--root", str(root), "--list", "pkg/calc.py=tests/test_calc.py"]) == 0

    calc.write_text(CALC)  # zero() gone: the Each(2) entry now matches 1, fewer than it says
    errors, _ = mutants.equivalent_problems("pkg/calc.py", mutants.mutants_of("pkg/calc.py", root))
    assert "meant for 2 mutants and matches 1" in errors[0]

    monkeypatch.setattr(mutants, "EQUIVALENT", {("pkg/calc.py", "return 7", "return None"): "gone"})
    errors, stale = mutants.equivalent_problems("pkg/calc.py", mutants.mutants_of("pkg/calc.py", root))
    assert not errors and "no mutant is 'return None' of 'return 7' today" in stale[0]
    assert mutants.main(["--root", str(root), "--list", "pkg/calc.py=tests/test_calc.py"]) == 0
    assert "warning: pkg/calc.py: no mutant" in capsys.readouterr().err


def test_every_equivalent_entry_of_the_repository_matches_as_many_mutants_as_it_says():
    for module in sorted({key[0] for key in mutants.EQUIVALENT}):
        errors, _ = mutants.equivalent_problems(module, mutants.mutants_of(module))
        assert errors == [], errors
