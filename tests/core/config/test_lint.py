"""config/lint.py: what memento.toml says that Memento does not read (unknown sections and keys,
with their line) and the [keys] remaps the dashboard cannot honour, said by `memento lint` and
`memento doctor` with memento.toml:LINE (issue 38, item 9): a key tmux or the terminal keeps,
or no key at all."""

from __future__ import annotations

import pytest

from memento_core.config.lint import key_problem, unknown_keys
from memento_core.config.load import load_config
from tests.first_project import memento


def test_unknown_sections_and_keys_are_named_with_their_line(tmp_path):

    path = tmp_path / "memento.toml"
    text = '[agnet]\npreset = "codex"\n\n[agent]\npresett = "codex"\n\n[keys]\npause = "f6"\n'
    path.write_text(text)
    assert unknown_keys(load_config(path), text) == [("[agnet]", 1), ("[agent] presett", 5)]


@pytest.fixture
def greeter(tmp_path, git_identity):
    root = tmp_path / "greeter"
    root.mkdir()
    assert memento(root, "init").returncode == 0
    return root


def test_lint_and_doctor_name_the_refused_keys(greeter):
    toml = greeter / "memento.toml"
    toml.write_text(toml.read_text().replace('# pause = "f7"', 'reset = "ctrl+b"\nskip = "nonsense_key"\npause = "f7"'))
    lines = toml.read_text().splitlines()
    reset, skip = lines.index('reset = "ctrl+b"') + 1, lines.index('skip = "nonsense_key"') + 1
    lint = memento(greeter, "lint")
    assert lint.returncode == 1, lint.stdout + lint.stderr
    assert f"[warn] memento.toml:{reset}: [keys] reset = 'ctrl+b' is refused: ctrl+b is tmux's prefix" in lint.stdout
    assert f"[warn] memento.toml:{skip}: [keys] skip = 'nonsense_key' is refused: 'nonsense_key' is not a key name" \
        in lint.stdout
    assert "pause" not in lint.stdout  # f7 is fine
    doctor = memento(greeter, "doctor")
    assert f"memento.toml:{reset}: [keys] reset = 'ctrl+b' is refused" in doctor.stdout


@pytest.mark.parametrize("key", ["f5", "x", "ctrl+r", "question_mark", "shift+tab", "f6,t", "alt+enter"])
def test_keys_textual_reads_are_fine(key):
    assert key_problem(key) == ""


@pytest.mark.parametrize("key", ["ctrl+a", "ctrl+s", "ctrl+space", "nonsense_key", "ctrl+", "hyperspace+x", "f5,ctrl+b"])
def test_keys_never_arriving_are_refused(key):
    assert key_problem(key)
