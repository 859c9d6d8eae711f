"""Which addresses and URLs Kindling may send requests to, and the setting that widens it."""

from __future__ import annotations

import ipaddress
import urllib.parse

import pytest
from urllib3.connection import HTTPConnection, HTTPSConnection

from kindling.config import ConfigError, Settings
from kindling.platform.destinations import (
    DestinationPolicy,
    RefusedDestination,
    check_url,
    check_urllib3,
    is_public,
    session,
)


@pytest.mark.parametrize(
    "address, public",
    [
        ("93.184.215.14", True),
        ("2606:2800:21f:cb07:6820:80da:af6b:8b2c", True),
        ("127.0.0.1", False),
        ("10.1.2.3", False),
        ("172.16.0.1", False),
        ("192.168.0.1", False),
        ("169.254.169.254", False),
        ("100.64.0.1", False),
        ("0.0.0.0", False),
        ("224.0.0.251", False),
        ("255.255.255.255", False),
        ("240.0.0.1", False),
        ("::1", False),
        ("::", False),
        ("fe80::1", False),
        ("fc00::1", False),
        ("ff02::1", False),
        ("::ffff:127.0.0.1", False),
        ("::ffff:10.0.0.1", False),
        ("2002:7f00:1::", False),  # 6to4 around 127.0.0.1
    ],
)
def test_public_addresses(address, public):
    assert is_public(ipaddress.ip_address(address)) is public


def test_every_resolved_address_must_be_public(monkeypatch):
    def resolve(host, port, type):
        return [(None, None, None, "", ("93.184.215.14", port)), (None, None, None, "", ("10.0.0.7", port))]

    monkeypatch.setattr("socket.getaddrinfo", resolve)
    with pytest.raises(RefusedDestination) as refused:
        check_url("https://mixed.example/hook", DestinationPolicy())
    assert refused.value.code == "destination_not_allowed"


def test_policy_follows_the_settings():
    assert DestinationPolicy.from_settings(Settings.from_env({})) == DestinationPolicy(False, False)
    production = Settings.from_env(
        {
            "ENVIRONMENT": "production",
            "SECRET_KEY": "k" * 32,
            "EVIDENCE_SIGNING_KEY": "A" * 43 + "=",
            "WEBHOOK_ALLOW_PRIVATE_URLS": "true",
        }
    )
    assert DestinationPolicy.from_settings(production) == DestinationPolicy(allow_private=True, require_https=True)


def test_a_bad_flag_fails_with_one_line():
    with pytest.raises(ConfigError) as raised:
        Settings.from_env({"WEBHOOK_ALLOW_PRIVATE_URLS": "sometimes"})
    assert "WEBHOOK_ALLOW_PRIVATE_URLS" in str(raised.value) and "\n" not in str(raised.value)


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_a_peer_that_is_not_public_is_refused_after_resolving(receiver, scheme):
    # `localhost` passes a form-only check, as at delivery time; the connection finds 127.0.0.1.
    port = urllib.parse.urlsplit(receiver.url).port
    url = f"{scheme}://localhost:{port}/hook"
    check_url(url, DestinationPolicy(), resolve=False)
    with pytest.raises(RefusedDestination) as refused:
        session(DestinationPolicy()).post(url, json={}, timeout=5)
    assert refused.value.code == "destination_not_allowed"
    assert receiver.requests == []


def test_the_peer_check_stands_aside_when_private_addresses_are_allowed(receiver):
    port = urllib.parse.urlsplit(receiver.url).port
    response = session(DestinationPolicy(allow_private=True)).post(f"http://localhost:{port}/hook", json={}, timeout=5)
    assert response.ok
    assert len(receiver.requests) == 1


def test_the_start_up_check_accepts_this_urllib3_and_refuses_a_changed_one():
    check_urllib3()

    class ConnectingElsewise(HTTPConnection):
        def connect(self) -> None:
            self.sock = None

    class OpeningWithArguments(HTTPSConnection):
        def _new_conn(self, timeout):
            return None

    for changed in (ConnectingElsewise, OpeningWithArguments):
        with pytest.raises(RuntimeError, match="_new_conn"):
            check_urllib3((changed,))
