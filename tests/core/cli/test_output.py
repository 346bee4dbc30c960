"""The command line says what it means (issue 14): prefixes that match the outcome, no repeated
words, notes that take the rest of the line, exit codes that follow the meaning. Real subprocesses."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memento_core.status_log import parse_status

PLAN = "docs/MASTER_PLAN.md"
WORDS_PLAN = """# MASTER_PLAN: words

## Meta
- tick_mode: auto
- max_retries: 2

## Phase 1: One
<!-- depends: none -->

- [ ] `T-1` [MODULE:a] Passes
  - verify: `test -f a.txt`
  - context_files: [a.txt]
  - do: `echo a > a.txt`

- [ ] `T-2` [MODULE:b] Fails without a word
  - verify: `false`
  - context_files: [b.txt]
  - do: `echo b > b.txt`
"""


def run(*argv: str, cwd: Path | None = None, env: dict | None = None, stdin=None,
        input: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(list(argv), cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True, text=True,
                          timeout=120, stdin=stdin, input=input)


def memento(*args: str, **kw) -> subprocess.CompletedProcess:
    return run(sys.executable, "-m", "memento_core.cli", *args, **kw)


def tui(*args: str, **kw) -> subprocess.CompletedProcess:
    return run(sys.executable, "-m", "memento_tui.app", *args, **kw)


@pytest.fixture
def ws(tmp_path: Path, git_identity) -> Path:
    root = tmp_path / "proj"
    assert memento("init", str(root)).returncode == 0
    (root / PLAN).write_text(WORDS_PLAN)
    (root / "memento.toml").write_text('[agent]\npreset = "script"\n')
    return root


def last_attempt(ws: Path):
    return [e for e in parse_status(ws / "docs/TICK_STATUS.md") if e.field("Task")][-1]


def test_a_failed_or_blocked_tick_is_not_ok(ws: Path):
    r = memento("tick", str(ws))
    assert (r.returncode, r.stdout) == (0, "[ok] tick #1: T-1 passed\n")
    r = memento("tick", str(ws))
    assert r.returncode == 0  # a recorded failure: the tick itself ran
    assert r.stdout == "[warn] tick #2: T-2 failed: verify failed with exit code 1\n"
    r = memento("tick", str(ws))
    assert r.returncode == 1 and r.stdout.startswith("[warn] tick #3: T-2 blocked: ")
    entry = last_attempt(ws)
    # `false` prints nothing: the field says the reason once, not "… exit code 1` (exit code 1)".
    assert entry.field("Verify Output") == "`verify failed with exit code 1`"
    r = memento("status", str(ws))  # half the tasks blocked: the breaker paused the project over them
    assert r.returncode == 1 and r.stdout.startswith("[warn] words: BLOCKED")


def test_a_failure_with_output_keeps_its_exit_code(ws: Path):
    (ws / PLAN).write_text(WORDS_PLAN.replace("verify: `false`", "verify: `echo boom; exit 3`"))
    memento("tick", str(ws))
    memento("tick", str(ws))
    entry = last_attempt(ws)
    assert entry.field("Verify Output") == "`boom` (exit code 3)"


def test_status_prefix_follows_the_state(ws: Path):
    r = memento("status", str(ws))  # no cron entry, no auto-tick: nothing will tick
    assert r.returncode == 1 and r.stdout.startswith("[warn] words: IDLE")
    (ws / PLAN).write_text(WORDS_PLAN.replace("- [ ] `T-2`", "- [!] `T-2`").replace("- [ ] `T-1`", "- [x] `T-1`"))
    r = memento("status", str(ws))
    assert r.returncode == 1 and r.stdout.startswith("[warn] words: BLOCKED")
    (ws / PLAN).write_text(WORDS_PLAN.replace("max_retries: 2", "max_retries: lots"))
    r = memento("status", str(ws))
    assert r.returncode == 1 and r.stdout.startswith("[error] words: INVALID")


def test_the_lint_summary_has_a_prefix(ws: Path):
    r = memento("lint", str(ws))
    assert r.returncode == 0 and r.stdout == "[ok] docs/MASTER_PLAN.md: 2 tasks in 1 phase, no problems\n"
    (ws / PLAN).write_text(WORDS_PLAN + "\n- [ ] not a task\n")
    r = memento("lint", str(ws))
    assert r.returncode == 1
    assert r.stdout.splitlines()[-1] == "[warn] docs/MASTER_PLAN.md: 2 tasks in 1 phase, 1 warning"
    (ws / PLAN).write_text(WORDS_PLAN.replace("max_retries: 2", "max_retries: lots") + "\n- [ ] not a task\n")
    r = memento("lint", str(ws))
    assert r.returncode == 2
    assert r.stderr.splitlines()[-1] == "[error] docs/MASTER_PLAN.md: 2 tasks in 1 phase, 1 error, 1 warning"


def notes_of(ws: Path) -> str:
    return (ws / "docs/HUMAN_NOTES.md").read_text()


def test_a_note_is_the_rest_of_the_line(ws: Path):
    (ws / "bugs").mkdir()  # a folder called like the note's last word is no workspace
    r = memento("note", "fix", "bugs", cwd=ws)
    assert r.returncode == 0, r.stderr
    r = memento("note", "use", "the", "force", cwd=ws)
    assert r.returncode == 0, r.stderr
    r = memento("note", "--task", "T-2", "quoted", "for", "T-2", str(ws))  # the last word a workspace: DIR
    assert r.returncode == 0, r.stderr
    text = notes_of(ws)
    assert "→ global\nfix bugs\n" in text and "→ global\nuse the force\n" in text
    assert "→ T-2\nquoted for T-2\n" in text


def test_a_note_without_text_reads_stdin(ws: Path):
    r = memento("note", "--project", str(ws), input="line one\nline two\n")
    assert r.returncode == 0, r.stderr
    assert "→ global\nline one\nline two\n" in notes_of(ws)
    r = memento("note", "--project", str(ws), input="  \n")
    assert r.returncode == 2 and r.stderr == "[error] the note is empty; nothing added\n"


def test_a_note_without_text_on_a_terminal_opens_the_editor(ws: Path):
    controller, terminal = os.openpty()
    try:
        editor = "sh -c 'printf \"written in the editor\\n\" > \"$1\"' editor"
        r = memento("note", "--project", str(ws), stdin=terminal, env={"EDITOR": editor, "VISUAL": ""})
        assert r.returncode == 0, r.stderr
        assert "→ global\nwritten in the editor\n" in notes_of(ws)
        r = memento("note", "--project", str(ws), stdin=terminal, env={"EDITOR": "false", "VISUAL": ""})
        assert r.returncode == 2 and "the editor (false) exited with code 1; no note added" in r.stderr
    finally:
        os.close(controller)
        os.close(terminal)


def test_reset_after_skip_drops_the_skip_reason(ws: Path):
    assert memento("skip", "T-2", "--reason", "not needed", str(ws)).returncode == 0
    assert "  - reason: not needed\n" in (ws / PLAN).read_text()
    assert memento("reset", "T-2", str(ws)).returncode == 0
    after = (ws / PLAN).read_text()
    assert "reason:" not in after
    assert after.split("- [ ] `T-2`")[1] == (" [MODULE:b] Fails without a word\n  - verify: `false`\n"
                                            "  - context_files: [b.txt]\n  - do: `echo b > b.txt`\n  - retries: 0\n")


def test_memory_search_without_a_match_exits_1(ws: Path):
    r = memento("memory", "search", "no-such-words", "--project", str(ws))
    assert r.returncode == 1 and r.stdout == "[warn] no match for 'no-such-words' in memory/\n"


def test_cron_show_without_crontab_says_so_with_exit_1(ws: Path, tmp_path: Path):
    empty = tmp_path / "bin"
    empty.mkdir()
    r = memento("cron", "show", str(ws), env={"PATH": str(empty), "MEMENTO_CRONTAB_FILE": ""})
    assert r.returncode == 1, r.stderr
    assert r.stdout.startswith("[warn] no crontab to show: the `crontab` command is not installed")


def test_dashboard_and_status_agree_on_a_missing_directory(tmp_path: Path):
    missing = str(tmp_path / "nonexistent")
    a, b = tui(missing), memento("status", missing)
    assert (a.returncode, a.stderr) == (b.returncode, b.stderr) == (2, f"[error] {missing}: no such directory\n")


def test_dashboard_version():
    from memento_core import __version__

    r = tui("--version")
    assert (r.returncode, r.stdout) == (0, f"memento-tui {__version__}\n")


def _cron_daemon_seen() -> bool:
    """The truth, read here independently: a cron daemon among this machine's processes."""
    for comm in Path("/proc").glob("[0-9]*/comm"):
        try:
            if comm.read_text().strip() in ("cron", "crond", "cronie", "fcron", "busybox-crond"):
                return True
        except OSError:
            continue
    return False


def test_cron_install_says_when_no_cron_daemon_would_run_the_entry(ws: Path, tmp_path: Path):
    tab = tmp_path / "crontab.txt"
    tab.write_text("")
    env = {"MEMENTO_CRONTAB_FILE": str(tab)}
    install, show = memento("cron", "install", str(ws), env=env), memento("cron", "show", str(ws), env=env)
    assert install.returncode == 0 and show.returncode == 0, install.stderr + show.stderr
    warning = "[warn] no cron daemon is running on this machine, so this entry will never tick"
    daemon = _cron_daemon_seen()
    assert (warning in install.stdout) is not daemon and (warning in show.stdout) is not daemon


def test_cron_daemon_detection_reads_process_names(tmp_path: Path):
    from memento_core.cron import daemon_running

    for pid, name in (("1", "init"), ("42", "bash"), ("self", "cron")):  # "self" is no pid
        (tmp_path / pid).mkdir()
        (tmp_path / pid / "comm").write_text(name + "\n")
    assert daemon_running(tmp_path) is False
    (tmp_path / "77").mkdir()
    (tmp_path / "77" / "comm").write_text("crond\n")
    assert daemon_running(tmp_path) is True
    assert daemon_running(tmp_path / "missing") is True  # cannot tell: no warning
