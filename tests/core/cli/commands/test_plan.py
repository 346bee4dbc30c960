"""cli/commands/plan.py's own part of `memento plan draft`: the brief read from a file or standard input
(a BOM dropped, a folder, a binary file and an oversized one refused, each naming it) and the lines
that say how a draft ended. The draft itself is the architect's (tick/architect/draft.py)."""

from __future__ import annotations

import io
import sys

import pytest

from memento_core.cli.commands.plan import read_brief, report
from memento_core.errors import MementoError
from memento_core.tick.architect.draft import (
    ERROR,
    KEPT,
    MAX_BRIEF_BYTES,
    PROPOSED,
    REFUSED,
    DraftResult,
    RedCheck,
)


def test_a_brief_file_is_read_as_text_with_its_name(tmp_path):
    brief = tmp_path / "greeter.md"
    brief.write_bytes("\ufeffA greeter that says héllo.\n".encode())
    assert read_brief(str(brief)) == ("A greeter that says héllo.\n", "greeter.md")


def test_a_brief_from_standard_input_is_named_stdin(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"From a pipe.\n")))
    assert read_brief("-") == ("From a pipe.\n", "stdin")


def test_what_is_not_a_brief_is_refused_naming_it(tmp_path):
    with pytest.raises(MementoError, match=r"nope\.md: no such file"):
        read_brief(str(tmp_path / "nope.md"))
    with pytest.raises(MementoError, match="not a regular file"):
        read_brief(str(tmp_path))
    binary = tmp_path / "bin.md"
    binary.write_bytes(b"ok so far \xff\xfe")
    with pytest.raises(MementoError, match=r"bin\.md: the brief is not UTF-8 text \(byte 10\)"):
        read_brief(str(binary))
    big = tmp_path / "big.md"
    big.write_bytes(b"x" * (MAX_BRIEF_BYTES + 1))
    with pytest.raises(MementoError, match="over the limit of 200 KB"):
        read_brief(str(big))
    big.write_bytes(b"x" * MAX_BRIEF_BYTES)
    assert len(read_brief(str(big))[0]) == MAX_BRIEF_BYTES  # the limit itself is allowed


def test_the_report_says_how_the_draft_ended(capsys):
    red = (RedCheck("T-7", 1, False, "exit code 1: no module named greeter"),)
    report(DraftResult(KEPT, new_ids=("T-7", "T-8"), red=red, commit="abcdef1234", brief_name="brief.md",
                       warnings=("T-8's verify already passes: it proves nothing",)))
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "[ok] red first: T-7 fails as it should (exit code 1: no module named greeter)",
        "[warn] T-8's verify already passes: it proves nothing",
        "[ok] plan drafted from brief.md: added T-7, T-8; commit abcdef1, 📝 PLAN DRAFTED entry in "
        "docs/TICK_STATUS.md",
        "[ok] the plan is paused until you have read it; `memento resume` starts the pipeline",
    ]
    report(DraftResult(PROPOSED, new_ids=("T-7",), brief_name="b.md", log="logs/draft.log"))
    assert capsys.readouterr().out == ("[ok] dry run: the draft from b.md would add T-7; the checks pass; "
                                       "nothing was changed (log: logs/draft.log)\n")
    report(DraftResult(REFUSED, reasons=("docs/MASTER_PLAN.md:9: T-7 has no verify",)))
    assert capsys.readouterr().out == ("[warn] the draft was refused, everything was put back:\n"
                                       "  - docs/MASTER_PLAN.md:9: T-7 has no verify\n")
    report(DraftResult(ERROR, reasons=("the drafter exited 1",)))
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == "[error] the plan could not be drafted:\n  - the drafter exited 1\n"
