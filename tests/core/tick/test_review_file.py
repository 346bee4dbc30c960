"""tick/review_file.py: the reviewer's review.md read as a model writes it (SPEC §16): the verdict on
its first line that says one (emphasis, a heading), each criterion's PASS or FAIL in a list or a table,
a PASS that does not judge every criterion never a pass, and a file that cannot be read (a link, too
big, not UTF-8, missing, a folder) a problem that says why (the review gate's own tests, whole ticks
with a reviewer: test_review.py)."""

from __future__ import annotations

import pytest

from memento_core.tick.review_file import parse_review


def test_parse_review_says_why_it_cannot_read_a_review():
    ok = parse_review("Verdict: PASS\n\n- [PASS] 1: a\n- [PASS] 2: b\n", 2)
    assert ok.passed and ok.findings == ((1, True, "a"), (2, True, "b"))
    failed = parse_review("Verdict: FAIL\nnotes\n* [FAIL] 2) wrong\n- [PASS] 1: fine\n", 2)
    assert not failed.passed and not failed.problem and failed.findings[1] == (2, False, "wrong")
    for text, problem in [
        ("", "it is empty"),
        ("Looks good to me\n", "no line `Verdict: PASS`"),
        ("Verdict: MAYBE\n- [PASS] 1: a\n- [PASS] 2: b\n", "its Verdict line is not"),
        ("Verdict: PASS\n- [PASS] 1: a\n", "no finding for criterion 2"),
        ("Verdict: PASS\n- [PASS] 1: a\n- [FAIL] 1: a\n- [PASS] 2: b\n", "judges criterion 1 both PASS and FAIL"),
        ("Verdict: PASS\n- [PASS] 1: a\n- [PASS] 3: b\n", "no finding for criterion 2"),
        ("Verdict: PASS\n- [OK] 1: a\n- [PASS] 2: b\n", "no finding for criterion 1"),
        ("Verdict: FAIL\n- [PASS] 1: a\n- [PASS] 2: b\n", "says FAIL but every"),
        ("Verdict: PASS\n- [PASS] 1: a\n- [FAIL] 2: b\n", "says PASS but criterion 2 is FAIL"),
        ("Verdict: PASS\n- [PASS] 1: a\n- [PASS] 2: b\nVerdict: FAIL\n", "two Verdict lines that disagree"),
    ]:
        review = parse_review(text, 2)
        assert not review.passed and problem in review.problem, (text, review)
    # judged twice alike (details, then a summary) is one finding; a verdict after the findings counts
    twice = parse_review("- [PASS] 1: a\n- [PASS] 2: b\n\n| 1 | PASS |\n| 2 | PASS |\n\nVerdict: PASS\n", 2)
    assert twice.passed and twice.findings == ((1, True, "a"), (2, True, "b")), twice


GREETING = ("the greeting says hello politely", "no other file changes", "`greeting.txt` ends with a newline.")


@pytest.mark.parametrize("text, verdict, details", [
    # the SPEC's own three
    ("Verdict: PASS\n- [PASS] 1: a\n- [PASS] 2: b\n- [PASS] 3: c\n", "PASS", ("a", "b", "c")),
    ("Verdict: FAIL\n- the greeting says hello politely: FAIL — it says hi\n- no other file changes: PASS — ok\n"
     "- greeting.txt ends with a newline: PASS — it does\n", "FAIL", ("it says hi", "ok", "it does")),
    ("Verdict: PASS\n**1. PASS**\n**2. PASS**\n**3. PASS**\n", "PASS", ("", "", "")),
    # bold numbers, numbered lists, checkboxes, headings over a paragraph
    ("**Verdict: PASS**\n\n**1.** PASS — polite\n**2.** PASS: nothing else\n**3.** PASS\n", "PASS",
     ("polite", "nothing else", "")),
    ("## Review\n\nVerdict: FAIL\n\n1. the greeting says hello politely — FAIL. It says hi.\n"
     "2. no other file changes — PASS\n3. `greeting.txt` ends with a newline — PASS\n", "FAIL",
     ("It says hi", "", "")),
    ("Verdict: PASS\n- [x] 1. the greeting says hello politely — PASS\n- [x] 2. no other file changes — PASS\n"
     "- [x] 3. greeting.txt ends with a newline — PASS\n", "PASS", ("", "", "")),
    ("## Verdict\n\n**FAIL**\n\n### Criterion 1 — FAIL\nThe greeting is rude.\n### Criterion 2 — PASS\n"
     "Nothing else.\n### Criterion 3: PASS\nThere is one.\n", "FAIL",
     ("The greeting is rude.", "Nothing else.", "There is one.")),
    # a table, with its header and emoji; "Pass" as a cell
    ("# Review\n\n| # | Criterion | Result | Notes |\n|---|---|---|---|\n"
     "| 1 | the greeting says hello politely | ✅ PASS | says hello |\n| 2 | no other file changes | ✅ Pass | ok |\n"
     "| 3 | greeting.txt ends with a newline | PASS | yes |\n\n**Verdict: PASS**\n", "PASS",
     ("says hello", "ok", "yes")),
    # the criterion by its text, emphasised, the mark before or after, PASSED/FAILED
    ("Overall verdict: FAIL\n- **the greeting says hello politely**: FAILED — it says hi\n"
     "- [PASS] no other file changes — checked\n- Criterion 3 (greeting.txt ends with a newline): PASSED\n", "FAIL",
     ("it says hi", "checked", "")),
    ("Verdict: ✅ PASS (3/3 criteria met)\nAC1: PASS - a\nAC2: PASS - b\n[3] PASS c\n", "PASS", ("a", "b", "c")),
    # a list numbered in its own order: the text says which criterion it is
    ("Verdict: PASS\n1. greeting.txt ends with a newline: PASS\n2. no other file changes: PASS\n"
     "3. the greeting says hello politely: PASS — polite\n", "PASS", ("polite", "", "")),
    # the criterion's own words are not its mark; prose "fail" is not a mark
    ("Verdict: FAIL\n- [FAIL] 1: it may fail on a PASS-word input\n- 2: PASS — it would pass\n- 3: PASS\n",
     "FAIL", ("it may fail on a PASS-word input", "it would pass", "")),
    # no Verdict line: the findings decide
    ("- [PASS] 1: a\n- [PASS] 2: b\n- [FAIL] 3: no newline\n", "FAIL", ("a", "b", "no newline")),
])
def test_a_review_is_read_as_a_model_writes_it(text, verdict, details):
    review = parse_review(text, GREETING)
    assert not review.problem and review.verdict == verdict, review
    assert tuple(f for _, _, f in review.findings) == details, review.findings
    assert all(ok for _, ok, _ in review.findings) == (verdict == "PASS")


@pytest.mark.parametrize("text", [
    "Verdict: PASS\n- [PASS] 1: checked\n- All criteria: PASS\n",
    "Verdict: PASS\n- [PASS] 1: checked\n- Criteria 2-3: PASS\n",
    "Verdict: PASS\n- [PASS] 1: checked\n- 2, 3: PASS\n- 2 and 3: PASS\n- criteria 2 to 3: PASS\n",
    "Verdict: PASS\n- [PASS] 1: checked; no other file changes and greeting.txt ends with a newline too\n",
    "Verdict: PASS\n- the greeting says hello politely, no other file changes, greeting.txt ends with a newline: PASS\n",
    "Verdict: PASS\n| 1 | 2 | 3 | PASS |\nEvery criterion should PASS.\nPASS\n",
    "Verdict: PASS\n- [PASS] 1: ok\n- [PASS] 2: ok\n- [PASS] 4: ok\n- [PASS] 9999: ok\n",
    "Verdict: PASS\n- [PASS] 1: ok\n- [PASS] 2: ok\n- 3: the newline is there, it passes\n",
])
def test_a_reviewer_cannot_claim_pass_for_criteria_it_did_not_judge(text):
    review = parse_review(text, GREETING)
    assert not review.passed and "no finding for criterion" in review.problem, review


@pytest.mark.parametrize("text", [
    "# Review\n\nVerdict: PASS\n- [PASS] 1: a\n- [PASS] 2: b\n",
    "# Review of T-1\nI read the diff.\n\n**Verdict:** PASS\n\n- **[PASS] 1:** a\n- [PASS] **2**: b\n",
    "*Verdict*: PASS\n- [PASS] 1: a\n- [PASS] 2: b\n",
    "Verdict: **PASS**\n- [PASS] 1: a\n- [PASS] 2: b\n",
    "## Verdict: PASS\n- [PASS] 1: a\n- [PASS] 2: b\nOverall, **Verdict: PASS**\n",
    "verdict: pass\n- [PASS] 1: a\n- [PASS] 2: b\n",
])
def test_the_verdict_is_the_first_line_that_reads_verdict_emphasis_and_a_heading_allowed(text):
    review = parse_review(text, 2)
    assert review.passed and not review.problem, review
    assert review.findings == ((1, True, "a"), (2, True, "b"))
    failed = parse_review(text.replace("PASS", "FAIL", 1).replace("pass", "fail", 1).replace("[PASS] 1", "[FAIL] 1"), 2)
    assert failed.verdict == "FAIL" and not failed.problem and not failed.passed, failed


def test_read_review_refuses_links_big_files_and_bad_bytes(tmp_path):
    from memento_core.tick.review_file import MAX_REVIEW_BYTES, read_review

    good = tmp_path / "good.md"
    good.write_text("Verdict: PASS\n- [PASS] 1: ok\n")
    assert read_review(good, 1).passed
    link = tmp_path / "review.md"
    link.symlink_to(good)
    assert not read_review(link, 1).passed and "could not be read" in read_review(link, 1).problem
    big = tmp_path / "big.md"
    big.write_text("Verdict: PASS\n- [PASS] 1: ok\n" + "x" * MAX_REVIEW_BYTES)
    assert "larger than" in read_review(big, 1).problem
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"Verdict: PASS\n- [PASS] 1: \xff\n")
    assert "not UTF-8" in read_review(bad, 1).problem
    assert "wrote no" in read_review(tmp_path / "missing.md", 1).problem
    (tmp_path / "dir.md").mkdir()
    assert not read_review(tmp_path / "dir.md", 1).passed

