"""Where Kindling may send its own HTTP requests: public http(s) hosts only, never internal services.

Checking a URL's host before a request is not enough: the name may resolve to a public address
then and to a private one when the connection is made (DNS rebinding). So `session()` checks the
address each connection actually reached, by extending urllib3's private
`HTTPConnection._new_conn`, the one place that opens the socket before anything is sent. What it
gains is safety, not speed: without it a webhook delivery to a name that resolves to 127.0.0.1
reaches that loopback service (`pytest tests/platform/test_destinations.py -k peer` shows it: it fails
when `session()` mounts no guarded adapter). The hook's shape is checked when this module is
imported, so a urllib3 that changed it stops the server and the worker at start.
"""

from __future__ import annotations

import dataclasses
import inspect
import ipaddress
import socket

import requests
from requests.adapters import DEFAULT_POOLBLOCK, HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import LocationParseError
from urllib3.poolmanager import PoolManager
from urllib3.util import parse_url

from kindling.config import Settings

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class RefusedDestination(ValueError):
    """A URL Kindling will not send requests to; `code` says why."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


@dataclasses.dataclass(frozen=True)
class DestinationPolicy:
    """What outbound URLs are allowed: private addresses only when configured, https only in production."""

    allow_private: bool = False
    require_https: bool = False

    @classmethod
    def from_settings(cls, settings: Settings) -> DestinationPolicy:
        return cls(allow_private=settings.webhook_allow_private_urls, require_https=settings.production)


def check_url(url: str, policy: DestinationPolicy, *, resolve: bool = True) -> None:
    """Refuse `url` unless it is http(s) to a host whose every address is public.

    With `resolve=False` only the URL's form is checked (the delivery-time connection
    checks the address it actually reached).
    """
    try:
        parsed = parse_url(url)
    except LocationParseError:
        raise RefusedDestination("The URL cannot be parsed", "invalid_url") from None
    scheme = (parsed.scheme or "").lower()
    if scheme not in ("http", "https"):
        raise RefusedDestination("The URL must use http or https", "invalid_url")
    if policy.require_https and scheme != "https":
        raise RefusedDestination("The URL must use https", "https_required")
    if parsed.auth is not None:
        raise RefusedDestination("The URL must not carry credentials; deliveries are signed instead", "invalid_url")
    host = (parsed.host or "").strip("[]")
    if not host:
        raise RefusedDestination("The URL has no host", "invalid_url")
    if policy.allow_private or not resolve:
        return
    for address in _resolve(host, parsed.port or (443 if scheme == "https" else 80)):
        if not is_public(address):
            raise RefusedDestination(
                "The URL's host is a loopback, private, link-local or otherwise non-public address",
                "destination_not_allowed",
            )


def is_public(address: IPAddress) -> bool:
    """True for a globally routable unicast address, including any IPv4 address embedded in IPv6."""
    if isinstance(address, ipaddress.IPv6Address):
        # Python 3.11 does not look inside IPv4-mapped or 6to4 addresses on its own.
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is not None and not is_public(embedded):
            return False
    return address.is_global and not (address.is_multicast or address.is_reserved or address.is_unspecified)


def _resolve(host: str, port: int) -> list[IPAddress]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise RefusedDestination("The URL's host does not resolve", "unresolvable_host") from None
    return [ipaddress.ip_address(info[4][0]) for info in infos]


def session(policy: DestinationPolicy) -> requests.Session:
    """A requests session that ignores proxy settings and, unless private addresses are
    allowed, refuses a connection whose peer is not public (after DNS, so rebinding fails)."""
    return guard(requests.Session(), policy)


def guard(http: requests.Session, policy: DestinationPolicy) -> requests.Session:
    """`http` (a requests session, or a library's subclass of one) made to follow `session()`'s rules."""
    http.trust_env = False  # no proxies or .netrc from the environment
    if not policy.allow_private:
        adapter = _GuardedAdapter()
        http.mount("http://", adapter)
        http.mount("https://", adapter)
    return http


def check_urllib3(connections: tuple[type[HTTPConnection], ...] = (HTTPConnection, HTTPSConnection)) -> None:
    """Fail loudly unless urllib3 still opens every connection's socket in `_new_conn()`, and
    pools still take their connection class and pool managers their pool class per scheme."""
    for connection in connections:
        new_conn = inspect.getattr_static(connection, "_new_conn", None)
        if (
            not inspect.isfunction(new_conn)
            or list(inspect.signature(new_conn).parameters) != ["self"]
            or "self._new_conn()" not in inspect.getsource(connection.connect)
        ):
            raise RuntimeError(
                f"urllib3's {connection.__qualname__} no longer opens its socket in `_new_conn()`, which "
                "kindling/platform/destinations.py extends to check the peer address; adapt that module to this urllib3"
            )
    if (
        HTTPConnectionPool.ConnectionCls is not HTTPConnection
        or HTTPSConnectionPool.ConnectionCls is not HTTPSConnection
        or "self.pool_classes_by_scheme[" not in inspect.getsource(PoolManager._new_pool)
    ):
        raise RuntimeError(
            "urllib3's pools no longer take their connection class from `ConnectionCls`, or pool managers their "
            "pool class from `pool_classes_by_scheme`; adapt kindling/platform/destinations.py to this urllib3"
        )


check_urllib3()


class _PeerCheck(HTTPConnection):
    def _new_conn(self) -> socket.socket:
        sock = super()._new_conn()
        peer = ipaddress.ip_address(sock.getpeername()[0].split("%", 1)[0])
        if not is_public(peer):
            sock.close()
            raise RefusedDestination("The host now resolves to a non-public address", "destination_not_allowed")
        return sock


class _GuardedHTTPConnection(_PeerCheck, HTTPConnection):
    pass


class _GuardedHTTPSConnection(_PeerCheck, HTTPSConnection):
    pass


class _GuardedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _GuardedHTTPConnection


class _GuardedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _GuardedHTTPSConnection


class _GuardedAdapter(HTTPAdapter):
    def init_poolmanager(
        self, connections: int, maxsize: int, block: bool = DEFAULT_POOLBLOCK, **pool_kwargs: object
    ) -> None:
        super().init_poolmanager(connections, maxsize, block, **pool_kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _GuardedHTTPPool, "https": _GuardedHTTPSPool}
