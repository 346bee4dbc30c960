"""hosts.py: the host patterns of `[sandbox] allow` and of the model endpoints (SPEC §13), on values: what
parses, what a pattern matches (a wildcard its subdomains only, no port the web ports), a CONNECT
target's host and port, and what is loopback."""

from __future__ import annotations

import pytest

from memento_core.hosts import HostPattern, is_loopback, parse_host, split_host_port


@pytest.mark.parametrize(("entry", "shown"), [
    ("pypi.org", "pypi.org"), ("PyPI.org.", "pypi.org"), ("*.example.com:8443", "*.example.com:8443"),
    ("10.0.0.5:5432", "10.0.0.5:5432"), ("[::1]:8080", "[::1]:8080"),
    ("127.1", None), ("::1", None), ("a b", None), ("x:0", None), ("http://x", None), ("", None),
])
def test_host_patterns(entry, shown):
    found = parse_host(entry)
    assert (str(found) if found else None) == shown


@pytest.mark.parametrize(("pattern", "host", "port", "matched"), [
    ("pypi.org", "pypi.org", 443, True),
    ("pypi.org", "PyPI.org.", 80, True),           # names compare without case or a trailing dot
    ("pypi.org", "pypi.org", 8080, False),         # no port in the pattern: the web ports only
    ("pypi.org", "files.pypi.org", 443, False),
    ("pypi.org", "evilpypi.org", 443, False),
    ("*.example.com", "a.example.com", 443, True),
    ("*.example.com", "a.b.example.com", 80, True),
    ("*.example.com", "example.com", 443, False),  # a wildcard is its subdomains, not the domain
    ("*.example.com", "badexample.com", 443, False),
    ("*.example.com:8443", "a.example.com", 8443, True),
    ("*.example.com:8443", "a.example.com", 443, False),
    ("10.0.0.5:5432", "10.0.0.5", 5432, True),
    ("127.0.0.1", "127.1", 443, False),            # nothing is normalised but case and the dot
    ("[::1]:8080", "::1", 8080, True),
])
def test_a_pattern_matches_only_what_it_says(pattern, host, port, matched):
    found = parse_host(pattern)
    assert found is not None and found.matches(host, port) is matched


def test_patterns_compare_by_host_and_port():
    assert parse_host("PyPI.org") == parse_host("pypi.org.") == HostPattern("pypi.org", None)
    assert parse_host("pypi.org:443") != parse_host("pypi.org")  # 443 alone is not "the web ports"
    assert len({parse_host("a.io"), parse_host("A.io"), parse_host("a.io:80")}) == 2


@pytest.mark.parametrize(("target", "split"), [
    ("pypi.org:443", ("pypi.org", 443)),
    ("[::1]:8080", ("::1", 8080)),
    ("10.0.0.5:5432", ("10.0.0.5", 5432)),
    ("pypi.org", None),          # a CONNECT target always has a port
    ("pypi.org:0", None),
    ("pypi.org:65536", None),
    ("pypi.org:²", None),        # str.isdigit takes it, int does not
    (":443", None),
    ("::1:443", None),           # an IPv6 host must be bracketed
    ("[pypi.org]:443", None),    # only an IPv6 address is
])
def test_a_connect_target_splits_into_host_and_port(target, split):
    assert split_host_port(target) == split


@pytest.mark.parametrize(("host", "loopback"), [
    ("localhost", True), ("LOCALHOST.", True), ("127.0.0.1", True), ("127.8.9.10", True),
    ("::1", True), ("[::1]", True), ("0:0:0:0:0:0:0:1", True),
    ("128.0.0.1", False), ("10.0.0.1", False), ("::2", False), ("localhost.example.com", False),
    ("127.0.0.1.nip.io", False), ("0127.0.0.1", False),
])
def test_loopback_is_localhost_127_and_1(host, loopback):
    assert is_loopback(host) is loopback
