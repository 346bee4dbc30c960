"""browser.py without a browser: what the served-dashboard test and screenshots/serve.png stand on.

The terminal stream made plain, a Chromium found on PATH, a free port, a server
waited for, and a process group ended whole (real subprocesses). The real
Chromium looking at the served dashboard is tests/tui/test_serve.py's.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from memento_tui.browser import find_chromium, free_port, plain, stop_group, wait_for_http


def test_plain_keeps_the_words_and_drops_every_control_sequence():
    stream = ("\x1b[1;38;2;255;0;0mcalc\x1b[0m (Memento demo)\x1b[K"  # CSI: colour, erase line
              "\x1b]0;a title\x07 \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"  # OSC: title, hyperlink
              " T-304\x1bM ✖").encode()  # a two-character escape: reverse index
    assert plain(stream) == "calc (Memento demo) link T-304 ✖"
    assert plain(b"bad \xff byte") == "bad \ufffd byte"


def test_plain_drops_the_escapes_of_a_private_final_and_of_a_character_set():
    """ESC 7 / ESC 8 (save and restore the cursor), ESC = / ESC > (the keypad's modes), ESC c (a
    reset), and a character set chosen with ESC ( B: none of them leaves a character behind."""
    stream = b"\x1b7saved\x1b8 \x1b=keypad\x1b> \x1b(Bascii \x1bcreset"
    assert plain(stream) == "saved keypad ascii reset"


def test_find_chromium_takes_the_first_name_on_path(tmp_path, monkeypatch):
    for name in ("google-chrome", "chromium-browser"):
        binary = tmp_path / name
        binary.write_text("#!/bin/sh\n")
        binary.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert find_chromium() == str(tmp_path / "chromium-browser")  # before google-chrome in CHROMIUM_NAMES
    (tmp_path / "chromium-browser").unlink()
    assert find_chromium() == str(tmp_path / "google-chrome")
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    assert find_chromium() is None


def test_wait_for_http_returns_the_body_once_the_server_answers(tmp_path):
    (tmp_path / "index.html").write_text("the dashboard page")
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
                              cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    try:
        assert wait_for_http(f"http://127.0.0.1:{port}/index.html", server, timeout=60) == b"the dashboard page"
    finally:
        stop_group(server)
    assert server.returncode is not None


def test_wait_for_http_fails_at_once_when_the_server_exits():
    gone = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"], start_new_session=True)
    gone.wait()
    with pytest.raises(RuntimeError, match="the server exited with code 3"):
        wait_for_http(f"http://127.0.0.1:{free_port()}/", gone, timeout=60)


def _group(ignore_term: bool) -> tuple[subprocess.Popen, int]:
    """A shell leading its own process group, and a child of it (a served dashboard's shape)."""
    trap = "trap '' TERM; " if ignore_term else ""
    proc = subprocess.Popen(["sh", "-c", f"{trap}sleep 300 & echo $!; wait"], stdout=subprocess.PIPE,
                            text=True, start_new_session=True)
    return proc, int(proc.stdout.readline())


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"  # a zombie has ended
    except FileNotFoundError:
        return True


@pytest.mark.parametrize("ignore_term", [False, True], ids=["leaves-on-TERM", "ignores-TERM"])
def test_stop_group_ends_the_leader_and_its_children(ignore_term):
    proc, child = _group(ignore_term)
    try:
        stop_group(proc, grace=1.0)
        assert proc.returncode == (-signal.SIGKILL if ignore_term else -signal.SIGTERM)
        for _ in range(400):  # the orphan is reaped by whoever adopts it, when it gets the CPU (up to 20 s)
            if _gone(child):
                break
            time.sleep(0.05)
        assert _gone(child)
    finally:
        if not _gone(child):
            os.kill(child, signal.SIGKILL)
        proc.stdout.close()
