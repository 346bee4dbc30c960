"""`memento agents` (cli/commands/agents.py), a real subprocess: each preset's CLI and version, the
selected one marked, --json, exit 1 when the selected preset cannot run unattended."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.core.agents.stubs import workspace


def test_memento_agents_command(tmp_path, git_identity):
    root = workspace(tmp_path / "project", "gemini")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gemini").write_text("#!/bin/sh\necho 0.9.0\n", encoding="utf-8")
    (bin_dir / "gemini").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.path.dirname(sys.executable)}:/usr/bin:/bin"}
    run = subprocess.run([sys.executable, "-m", "memento_core.cli", "agents", str(root)],
                         capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    gemini = next(ln for ln in lines if ln.split()[1] == "gemini")
    assert gemini.startswith("[ok]") and "0.9.0" in gemini and gemini.endswith("<- memento.toml")
    assert any(ln.startswith("[warn] claude") for ln in lines)
    run = subprocess.run([sys.executable, "-m", "memento_core.cli", "agents", "--json",
                          "--project", str(root)], capture_output=True, text=True, env=env)
    doc = json.loads(run.stdout)
    assert doc["selected"] == "gemini" and doc["root"] == str(root)
    assert {p["preset"]: p["version"] for p in doc["presets"]}["gemini"] == "0.9.0"
    # the selected preset's CLI missing: exit 1, so scripts notice
    (bin_dir / "gemini").unlink()
    run = subprocess.run([sys.executable, "-m", "memento_core.cli", "agents", str(root)],
                         capture_output=True, text=True, env=env)
    assert run.returncode == 1


def test_agents_flags_aider_without_a_model_with_what_to_do(tmp_path, git_identity):
    root = workspace(tmp_path / "project", "aider")
    toml = root / "memento.toml"
    toml.write_text(toml.read_text().replace('model = "stub-model"\n', ""))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "aider").write_text("#!/bin/sh\necho 'aider 0.86.2'\n")
    (bin_dir / "aider").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.path.dirname(sys.executable)}:/usr/bin:/bin"}
    run = subprocess.run([sys.executable, "-m", "memento_core.cli", "agents", str(root)],
                         capture_output=True, text=True, env=env)
    assert run.returncode == 1  # the selected preset cannot run unattended
    assert any(ln.startswith("[warn] aider") and "[agent] model" in ln for ln in run.stdout.splitlines())
    doc = json.loads(subprocess.run([sys.executable, "-m", "memento_core.cli", "agents", "--json", str(root)],
                                    capture_output=True, text=True, env=env).stdout)
    aider = next(p for p in doc["presets"] if p["preset"] == "aider")
    assert "[agent] model" in aider["unattended"] and aider["version"] == "aider 0.86.2"
