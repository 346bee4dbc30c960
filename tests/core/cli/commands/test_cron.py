"""`memento cron install | remove | show` (cli/commands/cron.py, SPEC §7) in-process against a crontab
file: the lines it prints, the exit codes, memento.toml's interval saved and committed (or left for the
person when the file was dirty), the --dry-run and --github paths. The scheduling itself
(memento_core/cron.py) is tests/core/test_cron.py."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memento_core import cron
from memento_core.cli.main import main
from memento_core.scaffold import init_workspace
from tests.core.cronhelp import OTHERS, entry_lines


@pytest.fixture
def workspace(tmp_path, git_identity) -> Path:
    root = tmp_path / "ws"
    init_workspace(root, project="ws")
    return root


def test_cli_install_show_remove(workspace, tab, monkeypatch, capsys):
    monkeypatch.setenv(cron.CRONTAB_FILE_ENV, str(tab))
    assert main(["cron", "install", "--every", "7min", str(workspace)]) == 0
    out = capsys.readouterr().out
    assert "[warn] cron repeats evenly only at intervals" in out
    assert f"[ok] installed the crontab entry for {workspace}: */6 * * * * (every 6m00s)" in out
    assert "memento.toml: [schedule] every = '6min' (committed)" in out
    assert 'every = "6min"' in (workspace / "memento.toml").read_text()
    dirty = subprocess.run(["git", "status", "--porcelain"], cwd=workspace, capture_output=True,
                           text=True).stdout
    assert dirty == ""  # the tick would refuse a dirty tree: memento.toml was committed

    assert main(["cron", "install", "--project", str(workspace)]) == 0
    out = capsys.readouterr().out
    assert "[ok] updated the crontab entry" in out and "(committed)" not in out  # 7min from memento.toml
    assert len(entry_lines(tab.read_text())) == 1

    assert main(["cron", "show", str(workspace)]) == 0
    out = capsys.readouterr().out
    assert f"[ok] {workspace}  <- this project" in out and "memento_core.tick" in out

    assert main(["cron", "remove", str(workspace)]) == 0
    assert "[ok] removed the crontab entry" in capsys.readouterr().out
    assert tab.read_text() == OTHERS
    assert main(["cron", "show", str(workspace)]) == 1
    assert "has no crontab entry" in capsys.readouterr().out


def test_show_warns_of_an_entry_written_without_safe_path_until_install_rewrites_it(workspace, tab, monkeypatch,
                                                                                  capsys):
    """An entry from before -P: python -m puts the project's folder first on the import path."""
    monkeypatch.setenv(cron.CRONTAB_FILE_ENV, str(tab))
    assert main(["cron", "install", str(workspace)]) == 0
    text = tab.read_text()
    tab.write_text(text.replace(" -P -m memento_core.tick", " -m memento_core.tick"))
    capsys.readouterr()
    assert main(["cron", "show", str(workspace)]) == 1
    out = capsys.readouterr().out
    assert (f"[warn] {workspace.resolve()}: its entry runs Python with the project's folder first on the import "
            "path (no -P)") in out and f"`memento cron install {workspace.resolve()}` rewrites it" in out
    assert main(["cron", "install", str(workspace)]) == 0
    assert " -P -m memento_core.tick" in tab.read_text()
    capsys.readouterr()
    assert main(["cron", "show", str(workspace)]) == 0
    assert "no -P" not in capsys.readouterr().out


def test_show_warns_of_a_systemd_unit_written_without_safe_path_until_install_rewrites_it(
        workspace, tab, monkeypatch, tmp_path, capsys):
    """A service from before -P runs the tick in the project's folder with it first on the import
    path; `cron show` names its file (with or without a crontab) and exits 1 until it is rewritten."""
    monkeypatch.setenv(cron.CRONTAB_FILE_ENV, str(tab))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert main(["cron", "install", str(workspace)]) == 0
    assert main(["cron", "install", "--systemd", "--write", str(workspace)]) == 0
    capsys.readouterr()
    assert main(["cron", "show", str(workspace)]) == 0
    assert "ExecStart runs Python" not in capsys.readouterr().out
    service = tmp_path / "home" / ".config" / "systemd" / "user" / f"{cron.unit_name(workspace)}.service"
    service.write_text(service.read_text().replace(" -P -m memento_core.tick", " -m memento_core.tick"))
    assert main(["cron", "show", str(workspace)]) == 1
    out = capsys.readouterr().out
    assert (f"[warn] {service}: its ExecStart runs Python with the project's folder first on the import path "
            "(no -P)") in out and "`memento cron install --systemd --write` in that project rewrites it" in out
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))  # no crontab at all: the unit is still named
    monkeypatch.delenv(cron.CRONTAB_FILE_ENV)
    assert main(["cron", "show", str(workspace)]) == 1
    assert f"[warn] {service}: its ExecStart runs Python" in capsys.readouterr().out
    monkeypatch.undo()
    monkeypatch.setenv(cron.CRONTAB_FILE_ENV, str(tab))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert main(["cron", "install", "--systemd", "--write", str(workspace)]) == 0
    capsys.readouterr()
    assert main(["cron", "show", str(workspace)]) == 0
    assert "ExecStart runs Python" not in capsys.readouterr().out


def test_cli_without_crontab_binary(workspace, monkeypatch, tmp_path, capsys):
    monkeypatch.delenv(cron.CRONTAB_FILE_ENV, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    assert main(["cron", "install", str(workspace)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("[error] the `crontab` command is not installed") and "cron" in err


def test_cli_systemd_print_and_write(workspace, monkeypatch, tmp_path, capsys):
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    assert main(["cron", "install", "--systemd", str(workspace)]) == 0
    out = capsys.readouterr().out
    assert "Persistent=true" in out and "ExecStart=" in out
    assert not (home / ".config").exists()
    assert main(["cron", "install", "--systemd", "--write", str(workspace)]) == 0
    written = sorted(p.name for p in (home / ".config" / "systemd" / "user").iterdir())
    name = cron.unit_name(workspace)
    assert written == [f"{name}.service", f"{name}.timer"]
    assert "systemctl --user daemon-reload" in capsys.readouterr().out


def test_a_dry_run_prints_the_entry_and_changes_neither_the_crontab_nor_memento_toml(workspace, tab, monkeypatch,
                                                                                      capsys):
    monkeypatch.setenv(cron.CRONTAB_FILE_ENV, str(tab))
    toml = (workspace / "memento.toml").read_bytes()
    assert main(["cron", "install", "--dry-run", "--every", "10min", str(workspace)]) == 0
    out = capsys.readouterr().out
    assert "[ok] would add this crontab entry (nothing changed: --dry-run):" in out
    line = f"*/10 * * * * {cron.tick_command(workspace)} # {cron.tag_for(workspace)}"
    assert line in out.splitlines()
    assert tab.read_text() == OTHERS and (workspace / "memento.toml").read_bytes() == toml
    assert main(["cron", "install", str(workspace)]) == 0
    capsys.readouterr()
    assert main(["cron", "install", "--dry-run", str(workspace)]) == 0
    assert "[ok] would update this crontab entry" in capsys.readouterr().out


def test_an_interval_given_to_a_dirty_memento_toml_is_written_and_left_for_the_person_to_commit(
        workspace, tab, monkeypatch, capsys):
    monkeypatch.setenv(cron.CRONTAB_FILE_ENV, str(tab))
    toml = workspace / "memento.toml"
    toml.write_text(toml.read_text() + "\n# the person's own edit\n")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=workspace, capture_output=True, text=True).stdout
    assert main(["cron", "install", "--every", "20min", str(workspace)]) == 0
    out = capsys.readouterr().out
    assert ("[warn] memento.toml now says every = '20min'; it had other uncommitted changes, "
            "so commit it yourself") in out
    assert 'every = "20min"' in toml.read_text() and "# the person's own edit" in toml.read_text()
    assert subprocess.run(["git", "rev-parse", "HEAD"], cwd=workspace, capture_output=True, text=True).stdout == head
    assert main(["cron", "install", "--every", "20m", str(workspace)]) == 0  # the same interval: nothing to say
    assert "memento.toml" not in capsys.readouterr().out


def test_the_github_workflow_goes_to_stdout_and_its_caveats_to_stderr(workspace, capsys):
    assert main(["cron", "install", "--github", "--every", "1min", "--pip", "memento-tick==1.0", str(workspace)]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("name:") or "jobs:" in captured.out
    assert "python -P -m pip install memento-tick==1.0" in captured.out and "[warn]" not in captured.out
    err = captured.err.splitlines()
    assert any(ln.startswith("[warn] memento.toml has no [workers] remote") for ln in err)
    assert any(ln.startswith("[warn] GitHub runs scheduled workflows every 5 minutes at most often") for ln in err)
    assert not any("--pip REQUIREMENT" in ln for ln in err)  # a requirement was given


def test_remove_names_a_systemd_timer_left_behind(workspace, tab, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv(cron.CRONTAB_FILE_ENV, str(tab))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert main(["cron", "remove", str(workspace)]) == 0
    out = capsys.readouterr().out
    assert out == f"[ok] no crontab entry for {workspace}; nothing to remove\n"
    assert main(["cron", "install", "--systemd", "--write", str(workspace)]) == 0
    capsys.readouterr()
    assert main(["cron", "remove", str(workspace)]) == 0
    assert f"A systemd timer exists too: systemctl --user disable --now {cron.unit_name(workspace)}.timer" in \
        capsys.readouterr().out
