"""The push endpoints the service posts to: a browser names one, so it is hostile input that
must not turn the service into a client of this network (its metadata service, its Redis,
an admin port).

Two checks, one rule: when a subscription is made, its URL's host must be a public-looking
DNS name (`check_endpoint`: no IP literal in any spelling a resolver accepts, no single
label, no name of a private zone); when a message is sent, every address the name resolves
to must be public (`address_allowed`), and the message goes to the address checked (the
sender's pinning), so a name that later resolves elsewhere gains nothing. Loopback is
allowed only when the operator says so (`TEN_PUSH_ALLOW_HTTP_LOOPBACK`: tests, benches)."""

from __future__ import annotations

import ipaddress
import re
import socket
from urllib.parse import urlsplit

from service.core.errors import ServiceError

LOOPBACK_HOSTS = frozenset(("127.0.0.1", "localhost", "::1"))
# zones that name machines of a private network, never a push service
PRIVATE_ZONES = ("localhost", "local", "internal", "lan", "intranet", "corp", "home", "arpa")
_NAME = re.compile(r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+")
# a last label a URL parser or resolver reads as a number: the host is an IPv4 address
# (decimal, octal, or hexadecimal: `2130706433`, `127.1`, `0x7f000001`, `0`)
_NUMBER = re.compile(r"(?:0x[0-9a-f]*|[0-9]+)")


def _refused() -> ServiceError:
    return ServiceError("push_endpoint_refused")


def _is_address(host: str) -> bool:
    if ":" in host or _NUMBER.fullmatch(host.rsplit(".", 1)[-1]):
        return True
    try:
        ipaddress.ip_address(host)
    except ValueError:
        pass
    else:
        return True
    try:
        socket.inet_aton(host)
    except (OSError, ValueError):
        return False
    return True


def check_endpoint(endpoint: str, allow_http_loopback: bool) -> None:
    """An https URL of a push service (no credentials in it, a public DNS name); http on
    this machine only when the operator allows it (tests and benches)."""
    try:
        parts = urlsplit(endpoint)
        host = parts.hostname or ""
        parts.port  # noqa: B018 - a port that is no number is refused here
    except ValueError:
        raise _refused() from None
    if not host or parts.username is not None or parts.password is not None:
        raise _refused()
    if parts.scheme not in ("http", "https"):
        raise _refused()
    if host in LOOPBACK_HOSTS:
        if allow_http_loopback and parts.scheme == "http":
            return
        raise _refused()
    if parts.scheme != "https":
        raise _refused()
    name = host[:-1] if host.endswith(".") else host
    if not name.isascii() or not _NAME.fullmatch(name) or _is_address(name):
        raise _refused()  # an address, a single label, or no plain DNS name
    last = name.rsplit(".", 1)[-1]
    if last in PRIVATE_ZONES:
        raise _refused()


def address_allowed(address: str, allow_loopback: bool) -> bool:
    """Whether the service may connect to this resolved address: a public one (loopback
    too when the operator allows it)."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if allow_loopback and ip.is_loopback:
        return True
    return ip.is_global
