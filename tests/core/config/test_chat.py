"""config/chat.py: memento.toml's [chat] section; a token written in it is an error naming its line."""

from __future__ import annotations

import pytest

from memento_core.config.load import load_config
from memento_core.errors import MementoError


@pytest.mark.parametrize("line, key", [
    ('telegram = { token_file = "/t", chats = [1], token = "x" }', "telegram.token"),
    ('telegram = { token_file = "/t", chats = [1], api = "123456789:AAbbCCddEEffGGhhIIjjKKllMMnnOOppQQ" }',
     "telegram.api"),
    ('matrix_token = "syt_bWVtZW50bw_abcdefghijklmnopqrst_1a2b3c"', "matrix_token"),
])
def test_a_token_in_memento_toml_is_a_config_error_with_its_line(tmp_path, line, key):
    path = tmp_path / "memento.toml"
    path.write_text(f'[agent]\npreset = "script"\n\n[chat]\n{line}\n')
    with pytest.raises(MementoError) as caught:
        load_config(path)
    assert str(caught.value).startswith(f"memento.toml:5: [chat] {key}: a token is never written in memento.toml")
