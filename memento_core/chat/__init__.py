"""Chat, both ways (SPEC §18): rooms where Memento posts what ``[notify]`` would and reads replies.

``tokens``: the token files (mode 0600, never memento.toml). ``transport``: one JSON request with a
deadline, nothing of a token in its errors. ``telegram`` and ``matrix``: a client each, the
service's API and nothing else (Bot API ``getUpdates``/``sendMessage``; client-server ``/sync``
and ``m.room.message``). ``record``: ``.memento/chat.json`` (offsets, the sync token, the
question messages, pending sends). ``inbox``: a service's message as one shape, who may steer.
``commands``: what a message does (an answer, ``/status`` … ``/tick``), through the code the
command line runs. ``poll``: one bounded round (read, act, send), for the tick, ``memento chat
poll`` and the dashboard. ``chatlog``: ``logs/chat.log``.

Both clients use the standard library's HTTP: the tick reads chat synchronously within 3 s
before its pick and must stay light, and the Matrix libraries on PyPI (matrix-nio, mautrix)
are asyncio clients over aiohttp with a dozen dependencies for the three calls used here.
"""
