"""config/chat.py: memento.toml's [chat] section read into TelegramChat and MatrixChat, inline or as
[chat.<service>] tables; a token written in it, a wrong value or an unknown key is an error at its line."""

from __future__ import annotations

import pytest

from memento_core.config.load import load_config
from memento_core.config.model import MatrixChat, TelegramChat
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


def load(tmp_path, chat: str):
    path = tmp_path / "memento.toml"
    path.write_text('[agent]\npreset = "script"\n\n' + chat)
    return load_config(path)


def refused(tmp_path, chat: str) -> str:
    with pytest.raises(MementoError) as caught:
        load(tmp_path, chat)
    return str(caught.value)


def test_telegram_and_matrix_read_inline_or_as_tables(tmp_path):
    config = load(tmp_path, '[chat]\ntelegram = { token_file = " ~/.config/memento/tg ", chats = [123, -100200], '
                            'senders = [111], api = "http://127.0.0.1:8081/" }\n')
    assert config.chat_telegram == TelegramChat("~/.config/memento/tg", (123, -100200), (111,),
                                                "http://127.0.0.1:8081")
    config = load(tmp_path, '[chat.matrix]\nhomeserver = "https://matrix.example.org/"\nuser = "@memento:example.org"\n'
                            'token_file = "/secrets/mx"\nroom = "!abc:example.org"\nsenders = [" @me:example.org "]\n')
    assert config.chat_matrix == MatrixChat("https://matrix.example.org", "@memento:example.org", "/secrets/mx",
                                            "!abc:example.org", ("@me:example.org",))
    assert config.chat_telegram is None


@pytest.mark.parametrize("chat, says", [
    ('[chat]\ntelegram = { token_file = "/t", chats = [] }\n',
     "memento.toml:5: [chat] telegram.chats: expected a list of chat ids such as [123456789], got []"),
    ('[chat]\ntelegram = { token_file = "/t", chats = [true] }\n', "[chat] telegram.chats: expected a list"),
    ('[chat]\ntelegram = { chats = [1] }\n', "[chat] telegram.token_file: expected the path of a file"),
    ('[chat]\ntelegram = { token_file = "/t", chats = [1], senders = ["me"] }\n', "[chat] telegram.senders:"),
    ('[chat]\ntelegram = { token_file = "/t", chats = [1], api = "api.telegram.org" }\n',
     '[chat] telegram.api: expected a URL such as "https://api.telegram.org"'),
    ('[chat]\ntelegram = { token_file = "/t", chats = [1], chat = 2 }\n',
     "[chat] telegram.chat: unknown key; one of token_file, chats, senders, api"),
    ('[chat]\ntelegram = "yes"\n', "memento.toml:5: [chat] telegram: expected a table such as telegram = {"),
    ('[chat.matrix]\nhomeserver = "https://m.org"\nuser = "memento"\ntoken_file = "/t"\nroom = "!a"\n'
     'senders = ["@me:m.org"]\n',
     "memento.toml:6: [chat] matrix.user: expected a Matrix user id such as"),
    ('[chat.matrix]\nhomeserver = "https://m.org"\nuser = "@m:m.org"\ntoken_file = "/t"\nroom = "#general"\n'
     'senders = ["@me:m.org"]\n', "memento.toml:8: [chat] matrix.room: expected a room id"),
    ('[chat.matrix]\nhomeserver = "https://m.org"\nuser = "@m:m.org"\ntoken_file = "/t"\nroom = "!a"\n',
     "[chat] matrix.senders: required: the Matrix users who may steer"),
    ('[chat.matrix]\nhomeserver = "https://m.org/path"\nuser = "@m:m.org"\ntoken_file = "/t"\nroom = "!a"\n'
     'senders = ["@me:m.org"]\n', "memento.toml:5: [chat] matrix.homeserver: expected a URL"),
])
def test_a_wrong_value_is_refused_at_its_line(tmp_path, chat, says):
    assert says in refused(tmp_path, chat)
