"""Host patterns of ``[sandbox] allow`` and of the model endpoints (SPEC §13).

A pattern is a host name (``pypi.org``), a wildcard for its subdomains
(``*.example.com``: ``a.example.com``, not ``example.com``), an IPv4 address
or a bracketed IPv6 one, each with an optional ``:port``. Without a port a
pattern means the web ports, 80 and 443. Names compare without case and
without a trailing dot; nothing else is normalised (``127.1`` is not
``127.0.0.1``), so a pattern matches only what it says.
"""

from __future__ import annotations

NETWORK_MODES = ("model", "all", "none")
WEB_PORTS = (80, 443)
_LABEL_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")


def _is_name(name: str) -> bool:
    """A DNS name (letters, digits, '-' in labels of 1-63), or ``*.`` and one."""
    labels = name.split(".")
    if labels[0] == "*" and len(labels) > 1:
        labels = labels[1:]
    return all(0 < len(label) <= 63 and set(label) <= _LABEL_CHARS and label[0] != "-" != label[-1]
               for label in labels)


class HostPattern:
    """One allowed host: ``host`` lower-case (``*.`` prefix for subdomains), ``port`` or None (80 and 443).
    (A plain class, no dataclass: proxy.py loads this module at every agent start, and imports cost.)"""

    __slots__ = ("host", "port")

    def __init__(self, host: str, port: int | None = None):
        self.host, self.port = host, port

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HostPattern) and (self.host, self.port) == (other.host, other.port)

    def __hash__(self) -> int:
        return hash((self.host, self.port))

    def __repr__(self) -> str:
        return f"HostPattern({self.host!r}, {self.port!r})"

    def matches(self, host: str, port: int) -> bool:
        name = host.lower().rstrip(".")
        if self.port is None and port not in WEB_PORTS or self.port is not None and port != self.port:
            return False
        if self.host.startswith("*."):
            return name.endswith(self.host[1:]) and len(name) > len(self.host) - 1
        return name == self.host

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port is None else f"{host}:{self.port}"


def _ipv4(text: str) -> bool:
    """A dotted IPv4 address as ``ipaddress`` reads it (four parts 0-255, no leading zeros), without
    importing it: proxy.py loads this module at every agent start."""
    parts = text.split(".")
    return len(parts) == 4 and all(p.isdigit() and p.isascii() and int(p) <= 255 and (p == "0" or p[0] != "0")
                                   for p in parts)


def _ipv6(text: str) -> str | None:
    import ipaddress

    try:
        return str(ipaddress.IPv6Address(text))
    except ValueError:
        return None


def _host(text: str) -> str | None:
    """``text`` as a host (lower case, no trailing dot), or None when it is none."""
    if text.startswith("[") and text.endswith("]"):
        return _ipv6(text[1:-1])
    name = text.lower().rstrip(".") if text != "." else ""
    if len(name) > 253 or not _is_name(name):
        return None
    if name.replace(".", "").isdigit():  # all digits: only a dotted IPv4 address is one
        return name if _ipv4(name) else None
    return name


def _port(text: str) -> bool:
    """A port number 1-65535 in ASCII digits (``str.isdigit`` takes ``²``, which ``int`` refuses)."""
    return text.isascii() and text.isdigit() and len(text) <= 5 and 1 <= int(text) <= 65535


def parse_host(entry: str) -> HostPattern | None:
    """``host``, ``*.domain``, ``1.2.3.4``, ``[::1]``, each with an optional ``:port``; None if not one."""
    text = entry.strip()
    port: int | None = None
    head, sep, tail = text.rpartition(":")
    if sep and not (text.startswith("[") and text.endswith("]")) and "]" not in tail:
        if not _port(tail):
            return None
        text, port = head, int(tail)
    if not text or ":" in text and not text.startswith("["):
        return None
    host = _host(text)
    return None if host is None else HostPattern(host, port)


def split_host_port(target: str) -> tuple[str, int] | None:
    """``host:port`` of a CONNECT request or an endpoint (an IPv6 host in brackets), or None."""
    head, sep, tail = target.rpartition(":")
    if not sep or not _port(tail):
        return None
    if head.startswith("[") and head.endswith("]"):  # only an IPv6 address is bracketed
        return (head[1:-1], int(tail)) if ":" in head[1:-1] else None
    return None if not head or ":" in head else (head, int(tail))


def is_loopback(host: str) -> bool:
    """``localhost`` or a loopback address (127.0.0.0/8, ::1)."""
    host = host.lower().rstrip(".").strip("[]")
    if host == "localhost":
        return True
    if _ipv4(host):
        return host.startswith("127.")
    return ":" in host and _ipv6(host) == "::1"
