"""Every `memento …` and `memento-tui …` command line in README.md and docs/*.md is checked
against the real argument parsers, so the documentation cannot name a command or flag that
does not exist (STYLE.md "Docs").

A line written out in full (`memento skip T-1 --reason "done elsewhere"`) must parse. A usage
line (`memento cron install [--every 5min]`, `memento reset T-…`) must name a real command,
and every option in it must be one of that command's.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from memento_core.cli.main import build_parser, parse_args

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
USAGE = re.compile(r"[\[\]|…<>{}]|\.\.\.")
FENCE = re.compile(r"^\s*(```|~~~)")
SPAN = re.compile(r"`(memento(?:-tui)?(?: [^`]+)?)`")


def _tui_parser() -> argparse.ArgumentParser:
    """memento-tui's own parser, as `memento_tui.app._parse` builds it (caught at its parse)."""
    from memento_tui import app

    caught: list[argparse.ArgumentParser] = []

    def catch(self, *args, **kwargs):
        caught.append(self)
        raise SystemExit(0)

    original = argparse.ArgumentParser.parse_args
    argparse.ArgumentParser.parse_args = catch
    try:
        app._parse([])
    except SystemExit:
        pass
    finally:
        argparse.ArgumentParser.parse_args = original
    return caught[0]


def command_lines(text: str) -> list[tuple[int, str]]:
    """(line number, command) for each memento command in code blocks and inline code."""
    found: list[tuple[int, str]] = []
    in_fence = False
    prose: list[tuple[int, str]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            found += [(number, c) for c in _shell_commands(line)]
        else:
            prose.append((number, line))
    # Inline code may wrap across lines within a paragraph: join each run of prose lines.
    joined = " ".join(line for _, line in prose).replace("\\|", "|")
    starts: list[int] = []
    offset = 0
    for _, line in prose:
        starts.append(offset)
        offset += len(line) + 1
    for match in SPAN.finditer(joined):
        index = max(i for i, start in enumerate(starts) if start <= match.start())
        found.append((prose[index][0], " ".join(match.group(1).split())))
    return found


def _shell_commands(line: str) -> list[str]:
    """The memento commands of one shell line: `$ ` prompts, `a && b`, `x | memento …`."""
    text = line.strip()
    if text.startswith("$ "):
        text = text[2:]
    if "memento" not in text:
        return []
    try:
        lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:
        return []
    commands, current = [], []
    for token in tokens + [";"]:
        if token in {"|", "||", "&&", ";", "&", "(", ")"}:
            if current and current[0] in {"memento", "memento-tui"}:
                commands.append(shlex.join(current))
            current = []
        else:
            current.append(token)
    return commands


def _subcommand(parser: argparse.ArgumentParser, words: list[str]) -> tuple[argparse.ArgumentParser, list[str]]:
    """Walk `memory write …` down the subparsers: the innermost parser and the path taken."""
    path = []
    for word in words:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs or word not in subs[0].choices:
            break
        parser = subs[0].choices[word]
        path.append(word)
    return parser, path


def _options(parser: argparse.ArgumentParser) -> set[str]:
    return set(parser._option_string_actions)


def problems(command: str) -> list[str]:
    words = shlex.split(command) if not USAGE.search(command) else command.split()
    program, args = words[0], words[1:]
    if not args:
        return []
    usage = bool(USAGE.search(command))
    flags = [w.strip("[]()").split("=", 1)[0] for w in args if w.strip("[]()").startswith("-")]
    flags = [f for f in flags if f not in {"-", "--"} and not f.startswith("-…")]
    if program == "memento-tui":
        from memento_tui import app

        bad = [f for f in flags if f not in _options(_tui_parser())]
        if bad:
            return [f"{command}: unknown option(s) {', '.join(bad)}"]
        if usage:
            return []
        return _parses(lambda: app._parse(args), command)
    parser = build_parser()
    inner, path = _subcommand(parser, args)
    if not path and not args[0].startswith("-"):
        return [f"{command}: no command {args[0]!r}"]
    allowed = _options(inner) | _options(parser)
    bad = [f for f in flags if f not in allowed]
    if bad:
        return [f"{command}: unknown option(s) {', '.join(bad)} for `memento {' '.join(path)}`"]
    if usage or len(path) == len(args):  # a usage line, or a command named in prose
        return []
    return _parses(lambda: parse_args(build_parser(), args), command)


def _parses(parse, command: str) -> list[str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            parse()
        except SystemExit as exc:
            if exc.code:
                return [f"{command}: {err.getvalue().strip().splitlines()[-1]}"]
    return []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_command_line_in_the_docs_parses(page):
    lines = command_lines(page.read_text(encoding="utf-8"))
    assert lines, f"{page.name} names no memento command (is the extraction broken?)"
    found = [f"{page.relative_to(ROOT)}:{number}: {p}" for number, command in lines for p in problems(command)]
    assert not found, "\n".join(found)


def test_the_check_catches_a_flag_or_command_that_does_not_exist():
    assert problems("memento status --jsn")
    assert problems("memento cron install [--evry 5min]")
    assert problems("memento frobnicate DIR")
    assert problems("memento skip T-1")  # --reason is required
    assert problems("memento-tui --frobnicate")
    assert not problems("memento skip T-1 --reason done")
    assert not problems("memento memory log [PATH] [-n 30] [--json]")
    assert command_lines("run `memento\nstatus --json` now\n```bash\n$ echo x | memento note - # hi\n```\n") == [
        (4, "memento note -"), (1, "memento status --json")]


def test_the_docs_pages_exist_and_the_readme_is_a_front_door():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 300
    assert "SPEC" not in readme and not any("SPEC §" in p.read_text(encoding="utf-8") for p in PAGES)
    for name in ("plan", "tick", "cli", "dashboard", "agents", "confinement", "workers", "notifications",
                 "architect", "memory", "doctor", "development"):
        assert (ROOT / "docs" / f"{name}.md").exists()
        assert f"(docs/{name}.md)" in readme
    # the first project's plan is complete: every task of the script preset has its do:
    plan = re.search(r"```markdown\n(# MASTER_PLAN.*?)```", readme, re.S).group(1)
    tasks = re.split(r"\n- \[ \] ", plan)[1:]
    assert tasks and all("- do: `" in t and "- verify: `" in t and "- context_files:" in t for t in tasks)


def _commands(parser: argparse.ArgumentParser, prefix: str = "memento") -> list[str]:
    """Every command a person can type: `memento init`, `memento cron install`, … (leaves only)."""
    found = []
    for action in parser._actions:  # noqa: SLF001
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            for name, sub in action.choices.items():
                below = _commands(sub, f"{prefix} {name}")
                found += below or [f"{prefix} {name}"]
    return found


def _row_commands(first_cell: str) -> list[str]:
    """The commands a table row names: `memento cron install [--every 5min]`, `remove`, `show` →
    memento cron install, memento cron remove, memento cron show."""
    spans = re.findall(r"`([^`]+)`", first_cell)
    if not spans:
        return []
    words = []
    for word in spans[0].split():
        if word.startswith(("-", "[")) or not re.fullmatch(r"[a-z][a-z-]*", word):
            break
        words.append(word)
    commands = [" ".join(words)]
    for span in spans[1:]:
        if re.fullmatch(r"[a-z][a-z-]*", span):
            commands.append(" ".join([*words[:-1], span]))
    return commands


def test_docs_cli_md_has_one_row_for_every_command():
    """Issue 38 item 13: docs/cli.md's table lacked report, doctor, ack and notify test, and had two
    rows for architect. Every command has a row, and no command two (`memento architect --ack` is
    a row of its own: a different act)."""
    rows = [line for line in (ROOT / "docs" / "cli.md").read_text().splitlines() if line.startswith("| `memento")]
    named: list[str] = []
    for row in rows:
        first = row.split(" | ")[0]
        named += [c + (" --ack" if "--ack" in first else "") for c in _row_commands(first)]
    missing = [c for c in _commands(build_parser()) if c not in named]
    assert not missing, f"docs/cli.md has no row for {missing}"
    repeated = sorted({c for c in named if named.count(c) > 1})
    assert not repeated, f"docs/cli.md has several rows for {repeated}"
