"""A CLI's event stream made readable as it arrives (SPEC §20): agents/stream.py, fed claude's renderer
(each preset's renderer: tests/core/agents/presets/; the pipe that feeds it: test_logpipe.py).

The events are the shapes the CLIs print (claude's stream-json, codex's
``exec --json`` items, gemini's stream-json); the bad input is what a pipe
really delivers: a line split across reads, a line that is not JSON, a
truncated object, 10 MB on one line, a stream cut off mid-line.
"""

from __future__ import annotations

from memento_core.agents.presets import claude
from memento_core.agents.stream import MAX_LINE, TEXT_CAP, StreamLog
from tests.core.agents.outputs import CLAUDE, assistant, ev, rendered


def test_lines_split_across_reads_come_out_the_same():
    """A pipe hands over whatever is there: an event split anywhere, even inside a UTF-8 character."""
    data = CLAUDE + assistant({"type": "tool_use", "id": "t9", "name": "Bash", "input": {"command": "echo é✓"}})
    whole = rendered(claude.SPEC, data, root="/p")
    for chunk in (1, 2, 7, 64, 4096):
        assert rendered(claude.SPEC, data, chunk=chunk, root="/p") == whole
    assert whole.splitlines()[-1] == "[tool] Bash: echo é✓"


def test_each_line_is_written_when_its_newline_arrives_not_later():
    log = StreamLog(claude.SPEC.stream(), claude.SPEC.stream_wanted)
    line = assistant({"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "make"}})
    assert log.feed(line[:-1]) == b""  # no newline yet: nothing to write
    assert log.feed(line[-1:]) == b"[tool] Bash: make\n"


def test_bad_input_is_text_never_a_crash():
    data = (b"node: (warning) not JSON at all\n"
            + b'{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Ba\n'  # truncated
            + b"[1, 2, 3]\n"  # JSON, not an object
            + b'{"type":"assistant","message":"a string"}\n'  # an object of a shape not expected
            + b'{"type":"assistant","message":{"content":[{"type":"tool_use"}]}}\n'  # no name
            + b"\xff\xfe binary junk\n"
            + b'{"type":"weird"}\n'
            + assistant({"type": "tool_use", "id": "t", "name": "Bash", "input": {"command": "ok"}})
            + b'{"type":"assistant","message":{"content":[{"type":"tool_')  # cut off mid-line
    out = rendered(claude.SPEC, data).encode().decode("utf-8", "replace").splitlines()
    assert out == [
        "node: (warning) not JSON at all",
        '{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Ba',
        "[1, 2, 3]",
        "[tool] ?",
        "\ufffd\ufffd binary junk",  # the bytes as printed (decoded for this comparison)
        "[tool] Bash: ok",
        '{"type":"assistant","message":{"content":[{"type":"tool_',
    ]


def test_a_10_mb_tool_output_is_never_shown_and_10_mb_of_text_is_capped():
    big = "x" * (10 * 1024 * 1024)
    result = ev({"type": "user", "message": {"content": [{"type": "tool_result", "content": big}]}})
    text = ("y" * (10 * 1024 * 1024) + "\n").encode()
    data = result + text + assistant({"type": "tool_use", "id": "t", "name": "Bash", "input": {"command": "ls"}})
    out = rendered(claude.SPEC, data, chunk=1 << 20)
    lines = out.splitlines()
    assert len(out) < 3 * TEXT_CAP
    assert lines[0].startswith("y" * TEXT_CAP) and lines[0].endswith(
        f"[memento: {10 * 1024 * 1024 - TEXT_CAP} bytes of this line cut]")
    assert lines[1] == "[tool] Bash: ls"


def test_a_line_over_the_longest_kept_is_cut_without_holding_it(monkeypatch):
    from memento_core.agents import stream

    monkeypatch.setattr(stream, "MAX_LINE", 1000)
    log = StreamLog(claude.SPEC.stream(), claude.SPEC.stream_wanted)
    out = b"".join(log.feed(b'{"type":"assistant",' + b"z" * 500) for _ in range(20))
    assert out == b"" and len(log._partial) <= 1000
    out = log.feed(b"\n").decode()
    assert out.startswith('{"type":"assistant",') and "bytes of this line cut]" in out
    assert MAX_LINE >= 10 * 1024 * 1024  # a 10 MB event is still read whole
