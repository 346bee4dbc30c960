"""memory/queue.py (SPEC §13): a memory write from inside the sandbox, where memory/ is read-only,
left as a request in .memento/worker/memory/ and applied by the tick after the agent — every check
made again, the source always the running task, anything but a small regular JSON request refused,
at most MAX_REQUESTS read, and the queue emptied. The write queued from a real sandbox is judged in
tests/core/sandbox/test_sandbox.py."""

from __future__ import annotations

import json

import pytest

from memento_core.errors import MementoError
from memento_core.memory import queue
from memento_core.memory.queue import apply_queue, clear_queue, queue_dir, queue_write
from memento_core.memory.store import history


def test_a_queued_write_is_checked_first_and_left_as_one_json_request(ws):
    for args, words in ((("knowledge/lessons/a.md", "text\n", " \n"), "needs a summary"),
                        (("../x.md", "text\n", "s"), "'..' is refused"),
                        (("knowledge/lessons/a.md", " \n", "s"), "the content \\(standard input\\) is empty")):
        with pytest.raises(MementoError, match=words):
            queue_write(ws, *args)
    assert not queue_dir(ws).exists()
    path = queue_write(ws, "./knowledge//lessons/a.md", "use the blue pen\n", "blue pen", tags=("pens",),
                       priority="high")
    assert path.parent == queue_dir(ws) and path.suffix == ".json"
    assert json.loads(path.read_text()) == {"path": "knowledge/lessons/a.md", "content": "use the blue pen\n",
                                            "summary": "blue pen", "mode": None, "tags": ["pens"],
                                            "priority": "high"}
    with pytest.raises(MementoError, match="limited to 1024 KB"):
        queue_write(ws, "knowledge/lessons/b.md", "x" * (queue.MAX_REQUEST_BYTES + 1), "big")


def test_the_queue_applied_in_order_with_the_task_as_source_then_emptied(ws):
    assert apply_queue(ws, "T-1") == []  # nothing queued: nothing imported, nothing done
    queue_write(ws, "knowledge/lessons/a.md", "first lesson\n", "first")
    queue_write(ws, "knowledge/decisions/b.md", "second decision\n", "second")
    done = apply_queue(ws, "T-7")
    assert [(d.path, d.action) for d in done] == [("knowledge/lessons/a.md", "create"),
                                                 ("knowledge/decisions/b.md", "create")]
    assert [(c.subject, c.source) for c in history(ws)[:2]] == [("second", "T-7"), ("first", "T-7")]
    assert list(queue_dir(ws).iterdir()) == []


@pytest.mark.parametrize(("request_", "why"), [
    ({"path": "knowledge/lessons/a.md", "content": "x", "summary": "s", "tags": "one"}, "tags must be a list"),
    ({"path": "knowledge/lessons/a.md", "content": 3, "summary": "s"}, "content must be text"),
    ({"path": "knowledge/lessons/a.md", "content": "x", "summary": "s", "mode": 1}, "mode must be text"),
    ({"content": "x", "summary": "s"}, "not a memory write request"),
    ([1, 2], "not a memory write request"),
])
def test_a_request_of_the_wrong_shape_is_refused_saying_why(ws, request_, why):
    queue_dir(ws).mkdir(parents=True)
    (queue_dir(ws) / "1.json").write_text(json.dumps(request_))
    (refused,) = apply_queue(ws, "T-1")
    assert refused.action == "refused" and refused.detail.startswith(why)


def test_more_than_max_requests_are_refused_and_all_are_removed(ws, monkeypatch):
    monkeypatch.setattr(queue, "MAX_REQUESTS", 2)
    for n in range(3):
        queue_write(ws, f"knowledge/lessons/l{n}.md", f"lesson number {n}\n", f"lesson {n}")
    done = apply_queue(ws, "T-1")
    assert [d.action for d in done] == ["create", "create", "refused"]
    assert done[2].detail == "more than 2 requests in one run"
    assert list(queue_dir(ws).iterdir()) == []


def test_clearing_drops_old_requests_and_a_link_in_the_queues_place(ws, tmp_path):
    queue_write(ws, "knowledge/lessons/a.md", "old\n", "old")
    (queue_dir(ws) / "keep.txt").write_text("not a request")
    clear_queue(ws)
    assert [p.name for p in queue_dir(ws).iterdir()] == ["keep.txt"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "x.json").write_text("{}")
    for p in queue_dir(ws).iterdir():
        p.unlink()
    queue_dir(ws).rmdir()
    queue_dir(ws).symlink_to(elsewhere)
    clear_queue(ws)
    assert not queue_dir(ws).exists() and (elsewhere / "x.json").exists()  # the link went, not what it led to
    assert apply_queue(ws, "T-1") == []


def test_queued_requests_are_checked_again_and_the_source_is_the_task(ws):
    folder = queue_dir(ws)
    folder.mkdir(parents=True)
    good = {"path": "knowledge/lessons/a.md", "content": "use the blue pen\n", "summary": "blue pen",
            "source": "source=human"}
    (folder / "1.json").write_text(json.dumps(good))
    (folder / "2.json").write_text(json.dumps({**good, "path": "../../docs/MASTER_PLAN.md"}))
    (folder / "3.json").write_text(json.dumps({**good, "path": "PERSONA.md"}))
    (folder / "4.json").write_text("not json")
    (folder / "5.json").symlink_to(folder / "1.json")
    (folder / "6.json").write_text(json.dumps({**good, "summary": ""}))
    plan = ws.plan_path.read_bytes()
    done = apply_queue(ws, "T-1")
    assert [d.action for d in done] == ["create", "refused", "refused", "refused", "refused", "refused"]
    assert ws.plan_path.read_bytes() == plan
    (c,) = [c for c in history(ws) if c.subject == "blue pen"]
    assert c.source == "T-1"  # never the request's "source=human"
    assert list(folder.iterdir()) == []


def test_a_request_that_is_a_link_is_never_followed(ws, tmp_path):
    outside = tmp_path / "request.json"
    outside.write_text(json.dumps({"path": "knowledge/lessons/a.md", "content": "x\n", "summary": "s"}))
    queue_dir(ws).mkdir(parents=True)
    (queue_dir(ws) / "1.json").symlink_to(outside)
    (refused,) = apply_queue(ws, "T-1")
    assert refused.action == "refused" and refused.detail.startswith("unreadable request")
    assert outside.exists() and not (ws.memory_dir / "knowledge" / "lessons" / "a.md").exists()
