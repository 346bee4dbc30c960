"""review.md as a model writes it (SPEC §16): the verdict and a finding per criterion.

The acceptance gate (review.py) reads the reviewer's file through :func:`read_review`:
a line that names a criterion by its number or its text and says PASS or FAIL is its
finding (a heading, a numbered list, a table, emphasis allowed); a review it still cannot
read (none, garbled, a criterion without a finding or judged both ways, a verdict its
findings contradict) comes back as a :class:`Review` with its ``problem``. Imported where
a review is read: a tick without ``[review]`` compiles none of these patterns.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

MAX_REVIEW_BYTES = 64 * 1024
_VERDICT_RE = re.compile(r"^(?:#{1,6}[ \t]+|[-*+>][ \t]+)?(?:(?:overall|final)[ \t]+)?Verdict[ \t]*:[ \t]*"
                         r"(?:[✅❌✔✓✗✘]\ufe0f?[ \t]*)?(?P<v>[^\s.,;:!()\[\]—–-]+)(?P<rest>.*)$", re.I)
_VERDICT_HEAD_RE = re.compile(r"^(?:#{1,6}[ \t]+)?(?:(?:overall|final)[ \t]+)?Verdict[ \t]*:?$", re.I)
_EMPHASIS_RE = re.compile(r"\*\*|__|(?<![\w*])[*_](?=\S)|(?<=\S)[*_](?![\w*])")
# A finding's mark: PASS or FAIL in capitals anywhere on the line; "Pass"/"fail" only where it stands
# as a mark (a table cell, brackets, after a colon or a dash), never inside prose ("it may fail").
_MARK_RE = re.compile(r"(?<![\w-])(?P<m>PASS(?:ED)?|FAIL(?:ED)?)(?![\w-])")
_SOFT_MARK_RE = re.compile(r"(?:^|[\[|(]|[:—–][ \t]|[ \t]-[ \t])[ \t]*(?:[✅❌✔✓✗✘]\ufe0f?[ \t]*)?"
                           r"(?P<m>pass(?:ed)?|fail(?:ed)?)[ \t]*(?=$|[\]|).,;:!]|[ \t][—–-][ \t])", re.I)
_LEAD_RE = re.compile(r"^(?:>[ \t]*)*(?:#{1,6}[ \t]+)?(?:[-*+][ \t]+)?(?:\|[ \t]*)?"
                      r"(?:(?:\[[^\]\n0-9]{1,8}\]|[✅❌✔✓✗✘]\ufe0f?)[ \t]*)?")
# A criterion named by its number: first on the line, as a list's or a table's number or after
# "criterion"; one number only ("criteria 1-3: PASS" judges none of them).
_NUMBER_RE = re.compile(r"^(?:(?:acceptance[ \t]+)?criteri(?:on|a)[ \t]*|AC[ \t]*|item[ \t]*)?#?\[?"
                        r"(?P<n>[0-9]{1,4})\]?(?=[ \t]*(?:[.:)|]|$)|[ \t]+[—–-][ \t]|[ \t]+\(|[ \t]+(?:PASS|FAIL)\b)"
                        r"(?![ \t]*(?:[-–,&/+]|and\b|or\b|to\b)[ \t]*[0-9])", re.I)
_SEPARATORS = " \t:.)|—–-"


@dataclass(frozen=True)
class Review:
    """A parsed review.md: the verdict and (criterion number, met, finding); ``problem`` when garbled."""

    verdict: str = "FAIL"
    findings: tuple[tuple[int, bool, str], ...] = ()
    problem: str = ""

    @property
    def passed(self) -> bool:
        return self.verdict == "PASS" and not self.problem


def _plain(text: str) -> str:
    """``text`` without Markdown emphasis and code ticks, its spaces collapsed."""
    return " ".join(_EMPHASIS_RE.sub("", text).replace("`", "").split())


def verdict_of(line: str) -> str | None:
    """"PASS"/"FAIL" when ``line`` reads ``Verdict: PASS|FAIL`` (as a heading or a list item too,
    Markdown emphasis allowed: ``**Verdict:** PASS``, ``*Verdict*: FAIL``, ``Verdict: **PASS**``,
    words after it: ``Verdict: PASS (3/3 criteria met)``), "" for a Verdict line with another
    word, None for any other line."""
    m = _VERDICT_RE.match(_plain(line))
    if m is None:
        return None
    word = m.group("v").upper()
    return word if word in ("PASS", "FAIL") else ""


def _criterion_texts(criteria) -> list[str]:
    return [_plain(c).casefold().rstrip(" .;") for c in criteria]


def _named_by_text(low: str, texts: list[str]) -> list[tuple[int, int, int]]:
    """(start, end, criterion number) of each criterion's text on the line, whole words only;
    the first named first."""
    out = []
    for n, text in enumerate(texts, 1):
        if not text:
            continue
        for m in re.finditer(re.escape(text), low):
            before = low[m.start() - 1] if m.start() else " "
            after = low[m.end()] if m.end() < len(low) else " "
            if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
                out.append((m.start(), m.end(), n))
                break
    return sorted(out, key=lambda s: (s[0], -(s[1] - s[0])))


def _finding(line: str, texts: list[str]) -> tuple[int, bool, str] | None:
    """(criterion, met, finding) when the line names one criterion, by its number or its text,
    and says PASS or FAIL; None for any other line."""
    plain = _plain(line)
    lead = _LEAD_RE.match(plain)
    at = lead.end() if lead else 0
    body = plain[at:]
    number = _NUMBER_RE.match(body)
    named = [(a + at, b + at, n) for a, b, n in _named_by_text(body.casefold(), texts)]
    n = int(number.group("n")) if number else 0
    spans = [(at, at + number.end())] if number else []
    if number and 1 <= n <= len(texts):
        after = at + number.end()
        after += len(plain[after:]) - len(plain[after:].lstrip(_SEPARATORS))
        right = next((s for s in named if s[0] == after), None)  # "1. <a criterion's text>: PASS"
        if right is not None:
            n = right[2]  # a list's own numbering; the text says which criterion it is
        spans += [(a, b) for a, b, m in named if m == n]
    elif named:
        n = named[0][2]  # the criterion named first is the one judged
        spans.append(named[0][:2])
    else:
        return None
    rest = list(plain)
    for a, b in spans:  # the criterion's own words never count as its mark ("prints PASS on success")
        rest[a:b] = ["\0"] * (b - a)
    masked = "".join(rest)
    mark = _MARK_RE.search(masked) or _SOFT_MARK_RE.search(masked)
    if mark is None:
        return None
    ok = mark.group("m").upper().startswith("PASS")
    a, b = mark.span("m")
    said = masked[at:a] + "\0" + masked[b:] if a >= at else masked[at:]
    said = re.sub(r"\[\s*\0*\s*\]|\(\s*\0+\s*\)|\0+", " ", said)
    cells = [c.strip(_SEPARATORS + "[]✅❌✔✓✗✘\ufe0f") for c in said.split("|")]
    return n, ok, " ".join(" — ".join(c for c in cells if c).split())


def parse_review(text: str, criteria) -> Review:
    """The review as a model writes it: a ``Verdict: PASS|FAIL`` line (or a ``## Verdict`` heading
    over the word) and a finding per criterion, each line that names one criterion by its number or
    its text and says PASS or FAIL, anywhere in the file. ``criteria`` are the task's ``accept:``
    texts (or only their count: then by number only). A criterion judged twice alike is one finding
    (a model's details, then its summary table); judged both PASS and FAIL, the review cannot be
    read; without a Verdict line the findings decide."""
    texts = _criterion_texts(criteria) if not isinstance(criteria, int) else [""] * criteria
    count = len(texts)
    lines = [ln.strip() for ln in text.removeprefix("\ufeff").replace("\r\n", "\n").split("\n")]
    lines = [ln for ln in lines if ln]
    if not lines:
        return Review(problem="it is empty")
    verdicts: list[str] = []
    found: dict[int, list[tuple[bool, str]]] = {}
    for i, line in enumerate(lines):
        verdict = verdict_of(line)
        if verdict is None and _VERDICT_HEAD_RE.match(_plain(line)) and i + 1 < len(lines):
            word = _MARK_RE.match(_plain(lines[i + 1]).lstrip("#>-*+ \t[|"))
            verdict = word.group("m").upper()[:4] if word else ""
        if verdict is not None:
            verdicts.append(verdict)
            continue
        f = _finding(line, texts)
        if f is None:
            continue
        n, ok, finding = f
        if not finding and i + 1 < len(lines) and verdict_of(lines[i + 1]) is None \
                and _finding(lines[i + 1], texts) is None and not lines[i + 1].startswith(("#", "|")):
            finding = _plain(lines[i + 1]).lstrip("-*+> ")  # "### 2. PASS" over its paragraph
        found.setdefault(n, []).append((ok, finding))
    if "" in verdicts:
        return Review(problem="its Verdict line is not `Verdict: PASS` or `Verdict: FAIL`")
    if len(set(verdicts)) > 1:
        return Review(problem="it has two Verdict lines that disagree")
    if not verdicts and not found:
        return Review(problem="it has no line `Verdict: PASS` or `Verdict: FAIL` and no finding")
    missing = [str(n) for n in range(1, count + 1) if n not in found]
    if missing:
        return Review(problem="it has no finding for criterion " + ", ".join(missing))
    torn = [n for n in range(1, count + 1) if len({ok for ok, _ in found[n]}) > 1]
    if torn:
        return Review(problem=f"it judges criterion {torn[0]} both PASS and FAIL")
    findings = tuple((n, found[n][0][0], next((f for _, f in found[n] if f), "")) for n in range(1, count + 1))
    failed = [n for n, ok, _ in findings if not ok]
    verdict = verdicts[0] if verdicts else "FAIL" if failed else "PASS"
    if verdict == "PASS" and failed:
        return Review(problem=f"it says PASS but criterion {failed[0]} is FAIL")
    if verdict == "FAIL" and not failed:
        return Review(problem="it says FAIL but every criterion is PASS")
    return Review(verdict, findings)


def read_review(path: Path, criteria) -> Review:
    """The reviewer's file, read without following a link; anything but a small regular file is a FAIL."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return Review(problem="the reviewer wrote no .memento/worker/review.md")
    except OSError as exc:
        return Review(problem=f".memento/worker/review.md could not be read ({exc.strerror or exc})")
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return Review(problem=".memento/worker/review.md is not a regular file")
        data = os.read(fd, MAX_REVIEW_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_REVIEW_BYTES:
        return Review(problem=f".memento/worker/review.md is larger than {MAX_REVIEW_BYTES // 1024} KiB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return Review(problem=".memento/worker/review.md is not UTF-8 text")
    review = parse_review(text, criteria)
    if review.problem:
        return Review(problem=f".memento/worker/review.md is not a valid review: {review.problem}")
    return review
