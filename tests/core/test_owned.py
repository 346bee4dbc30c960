"""owned.py: Memento's own state files an unconfined agent could reach. What this process wrote or
baselined is expected; anything else found there (new bytes, a symbolic or hard link, a FIFO, a folder,
a new file in a watched folder, a removal) is put back and recorded as a Change (real files)."""

from __future__ import annotations

import json
import os
import time

from memento_core import owned


def test_a_file_rewritten_by_someone_else_is_put_back_and_recorded(tmp_path):
    ledger = tmp_path / "usage.json"
    ledger.write_bytes(b'{"spent": 1}')
    owned.baseline([ledger])
    assert owned.watched(ledger) and not owned.watched(tmp_path / "other.json")
    assert owned.settle(ledger) is None  # as expected
    before = time.monotonic()
    ledger.write_bytes(b'{"spent": 0}')
    change = owned.settle(ledger)
    assert change is not None and change.path == str(ledger) and change.found == b'{"spent": 0}'
    assert ledger.read_bytes() == b'{"spent": 1}'
    assert owned.changes([ledger], before) == [change] and owned.changes([tmp_path], before) == [change]
    assert owned.changes([ledger], change.at) == []


def test_memento_s_own_write_and_removal_are_expected(tmp_path):
    state = tmp_path / "notify.json"
    owned.baseline([state])  # absent
    owned.write(state, b"v1")
    assert owned.settle(state) is None and state.read_bytes() == b"v1"
    owned.remove(state)
    assert owned.settle(state) is None and not state.exists()
    state.write_bytes(b"planted")  # after Memento removed it: not Memento's
    assert owned.settle(state).found == b"planted" and not state.exists()


def test_a_write_over_what_someone_else_left_records_it(tmp_path):
    state = tmp_path / "claims.json"
    owned.write(state, b"mine")
    state.write_bytes(b"theirs")
    before = time.monotonic()
    owned.write(state, b"mine again")
    assert [c.found for c in owned.changes([state], before)] == [b"theirs"]
    assert state.read_bytes() == b"mine again"


def test_links_and_fifos_are_removed_never_followed_or_opened(tmp_path):
    persons = tmp_path / "thesis.tex"
    persons.write_bytes(b"a person's file\n")
    ledger = tmp_path / "usage.json"
    ledger.write_bytes(b"{}")
    owned.baseline([ledger])
    ledger.unlink()
    ledger.symlink_to(persons)
    assert owned.settle(ledger).found == owned.NOT_A_FILE
    assert not ledger.is_symlink() and ledger.read_bytes() == b"{}"
    ledger.unlink()
    os.link(persons, ledger)  # a hard link: written over by rename, never through
    assert owned.read(ledger) == owned.NOT_A_FILE
    assert owned.settle(ledger).found == owned.NOT_A_FILE and ledger.read_bytes() == b"{}"
    ledger.unlink()
    os.mkfifo(ledger)
    assert owned.settle(ledger).found == owned.NOT_A_FILE  # read without opening it: nothing blocks
    assert ledger.read_bytes() == b"{}"
    ledger.unlink()
    (ledger / "inside").mkdir(parents=True)
    assert owned.settle(ledger).found == owned.NOT_A_FILE and ledger.read_bytes() == b"{}"
    assert persons.read_bytes() == b"a person's file\n"


def test_a_watched_folder_loses_new_entries_and_gets_changed_or_removed_ones_back(tmp_path):
    claims = tmp_path / "claims"
    claims.mkdir()
    (claims / "T-1").write_bytes(b"host-a")
    (claims / "T-2").write_bytes(b"host-a")
    owned.baseline([], [claims])
    (claims / "T-1").write_bytes(b"forged")
    (claims / "T-2").unlink()
    (claims / "T-3").write_bytes(b"planted")
    found = {os.path.basename(c.path): c.found for c in owned.settle_dir(claims)}
    assert found == {"T-1": b"forged", "T-2": None, "T-3": b"planted"}
    assert sorted(os.listdir(claims)) == ["T-1", "T-2"]
    assert (claims / "T-1").read_bytes() == b"host-a" and (claims / "T-2").read_bytes() == b"host-a"
    owned.write(claims / "T-4", b"host-a")  # Memento's own new claim in the folder
    assert owned.settle_dir(claims) == [] and (claims / "T-4").exists()
    assert owned.settle_dir(tmp_path) == []  # never baselined: nothing known


def test_an_equivalent_content_is_no_change_when_a_comparison_is_given(tmp_path):
    ledger = tmp_path / "usage.json"
    ledger.write_bytes(b'{"a": 1, "b": 2}')
    owned.baseline([ledger], same={str(ledger): lambda old, new: json.loads(old) == json.loads(new)})
    ledger.write_bytes(b'{"b": 2,   "a": 1}')
    assert owned.settle(ledger) is None
    ledger.write_bytes(b"not json")  # the comparison cannot read it: a change
    assert owned.settle(ledger).found == b"not json" and ledger.read_bytes() == b'{"a": 1, "b": 2}'
