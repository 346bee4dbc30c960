"""patterns.py: .gitignore-like patterns matched with no git."""

from __future__ import annotations

import pytest

from memento_core.git.patterns import matches_any, read_pattern_file


@pytest.mark.parametrize(
    ("path", "patterns", "expected"),
    [
        ("src/db/schema.py", ["src/db/schema.py"], True),
        ("src/db/schema.py", ["src/db/"], True),
        ("src/db/schema.py", ["src/db"], True),
        ("src/dbx/schema.py", ["src/db/"], False),
        ("src/db", ["src/db/"], False),
        ("src/db/schema.py", ["./src/db/schema.py"], True),
        ("src/db/schema.py", ["src/*.py"], False),
        ("src/db/schema.py", ["src/*/*.py"], True),
        ("src/db/schema.py", ["src/**/*.py"], True),
        ("src/schema.py", ["src/**/*.py"], True),
        ("src/db/schema.py", ["**/schema.py"], True),
        ("src/db/schema.py", ["*.py"], True),
        ("src/db/schema.py", ["/*.py"], False),
        ("setup.py", ["/*.py"], True),
        ("build/out/x.o", ["build*/"], True),
        ("src/a1.py", ["src/a[0-9].py"], True),
        ("src/ab.py", ["src/a[!0-9].py"], True),
        ("src/a1.py", ["src/a[!0-9].py"], False),
        ("tests/test_x.py", ["src/", "tests/test_?.py"], True),
        ("other.txt", ["src/", "*.py"], False),
        ("anything", [], False),
        ("anything", ["", "  "], False),
    ],
)
def test_matches_any(path, patterns, expected):
    assert matches_any(path, patterns) is expected


def test_read_pattern_file(tmp_path):
    path = tmp_path / ".memento_cleanignore"
    assert read_pattern_file(path) == []
    path.write_text("# comment\n\nscratch/\n  *.log  \n# another\ndata/raw.csv\n")
    assert read_pattern_file(path) == ["scratch/", "*.log", "data/raw.csv"]
