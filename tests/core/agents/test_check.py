"""agents/check.py: which presets can run here, what `memento agents` shows: a CLI found on PATH and its
version read from stdout, a version that hangs bounded with nothing left running, the Node an npm
CLI runs on checked against its package's engines."""

from __future__ import annotations

import json
from pathlib import Path

from memento_core import agents
from memento_core.agents.check import probe, probe_all


def test_probe_finds_the_stub_and_its_version(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stub = bin_dir / "claude"
    stub.write_text("#!/bin/sh\necho '9.9.9 (Claude Code)'\n", encoding="utf-8")
    stub.chmod(0o755)
    found = probe(agents.PRESETS["claude"], selected=True, env={"PATH": str(bin_dir)})
    assert found.path == str(stub) and found.version == "9.9.9 (Claude Code)"
    assert found.selected and found.runnable and found.note == ""
    missing = probe(agents.PRESETS["codex"], env={"PATH": str(bin_dir)})
    assert missing.path is None and not missing.runnable
    assert missing.note == "'codex' not found on PATH"


def test_probe_of_a_hanging_version_is_bounded_and_leaves_nothing(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stub = bin_dir / "gemini"
    stub.write_text("#!/bin/sh\necho starting\nsleep 61.25 &\nsleep 61.25\n", encoding="utf-8")
    stub.chmod(0o755)
    found = probe(agents.PRESETS["gemini"], env={"PATH": f"{bin_dir}:/usr/bin:/bin"}, timeout=0.5)
    assert found.version == "starting"
    assert "did not answer within 0.5s" in found.note
    assert sleepers("61.25") == []  # the whole process group is gone, background child included


def sleepers(mark: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
                state = (entry / "stat").read_bytes().rsplit(b")", 1)[1].split()[0]
            except OSError:
                continue
            if argv[:2] == [b"sleep", mark.encode()] and state not in (b"Z", b"X"):
                found.append(int(entry.name))
    return found


def test_probe_all_lists_every_preset_and_marks_the_selected_one():
    probes = probe_all("script", env={"PATH": "/nonexistent"})
    assert [p.preset for p in probes] == list(agents.PRESETS)
    assert [p.preset for p in probes if p.selected] == ["script"]


def node_cli(tmp_path: Path, *, node_version: str, engines: str) -> dict:
    """A claude installed as npm does it: bin/claude -> the package's cli.js, run by `env node`.

    The fake node answers ``--version`` with ``node_version`` and runs "cli.js --version"
    as Claude Code does, with a warning on stderr that is not the version.
    """
    bin_dir = tmp_path / "bin"
    package = tmp_path / "lib" / "node_modules" / "@anthropic-ai" / "claude-code"
    package.mkdir(parents=True)
    bin_dir.mkdir()
    (package / "package.json").write_text(json.dumps({"name": "@anthropic-ai/claude-code",
                                                      "engines": {"node": engines}}))
    (package / "cli.js").write_text("#!/usr/bin/env node\nconsole.log('2.1.332 (Claude Code)')\n")
    (package / "cli.js").chmod(0o755)
    (bin_dir / "claude").symlink_to(package / "cli.js")
    (bin_dir / "node").write_text(
        "#!/bin/sh\nif [ \"$1\" = --version ]; then echo " + node_version + "; exit 0; fi\n"
        "echo 'WARNING: proceeding, even though we could not create PATH aliases' >&2\n"
        "echo '2.1.332 (Claude Code)'\n")
    (bin_dir / "node").chmod(0o755)
    return {"PATH": f"{bin_dir}:/usr/bin:/bin"}


def test_agents_reads_the_version_from_stdout_and_checks_the_node_it_runs_on(tmp_path):
    env = node_cli(tmp_path, node_version="v20.11.1", engines=">=22.0.0")
    found = probe(agents.PRESETS["claude"], env=env)
    assert found.version == "2.1.332 (Claude Code)"  # not the stderr warning
    assert found.runtime == "node v20.11.1 (the package needs >=22.0.0) — install a newer Node"
    assert not found.runtime_ok


def test_a_new_enough_node_is_reported_and_accepted(tmp_path):
    env = node_cli(tmp_path, node_version="v22.12.0", engines=">=22")
    found = probe(agents.PRESETS["claude"], env=env)
    assert found.runtime == "node v22.12.0 (the package needs >=22)" and found.runtime_ok
