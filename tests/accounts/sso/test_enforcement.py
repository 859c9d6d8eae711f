"""Turning single sign-on enforcement on ends the password sessions of members and managers in
every server process within 2 seconds, and leaves their API tokens, their sessions begun through
the provider and admins' sessions alone (docs/decisions.md §2): two server processes on one database."""

from __future__ import annotations

import time
import uuid

import pytest
import requests

from kindling.accounts.principal_cache import PRINCIPAL_TTL
from kindling.platform.database import upgrade
from tests.helpers import call, sign_up
from tests.helpers.revocation import BOUND, answers_around, assert_refused_within_bound
from tests.servers.openid_provider import CLIENT_ID, CLIENT_SECRET

pytestmark = pytest.mark.live


@pytest.fixture
def servers(fresh_database_url, live_server, dns_server):
    upgrade(fresh_database_url)
    env = {
        "DATABASE_URL": fresh_database_url,
        "RATE_LIMIT_MULTIPLIER": "100",
        "SECRET_KEY": "s" * 40,
        "WEBHOOK_ALLOW_PRIVATE_URLS": "true",
        "DNS_NAMESERVERS": f"127.0.0.1:{dns_server.port}",
    }
    return [live_server(**env) for _ in range(2)]


def _sso_session(server, provider, email: str) -> str:
    """A session begun through the provider by a person new to Kindling (made just in time)."""
    started = requests.get(
        f"{server.url}/api/auth/sso/start", params={"email": email}, allow_redirects=False, timeout=10
    )
    assert started.status_code == 302, started.text
    callback = provider.sign_in(started.headers["Location"], provider.person(email=email))
    finished = requests.get(server.url + callback, allow_redirects=False, timeout=10)
    assert finished.status_code == 303, finished.text
    return finished.cookies["kindling.session_token"]


def test_enforcing_sso_ends_password_sessions_everywhere_within_two_seconds(servers, openid_provider, dns_server):
    assert PRINCIPAL_TTL < BOUND
    first, second = servers
    name = f"d{uuid.uuid4().hex[:10]}.test"
    admin = sign_up(first.url)
    settings = {
        "issuer": openid_provider.url,
        "clientId": CLIENT_ID,
        "clientSecret": CLIENT_SECRET,
        "emailDomains": [name],
        "jitProvisioning": True,
    }
    claim = call(first, "PUT", "/api/organization/sso", admin.token, json=settings).json()["data"]["emailDomains"][0]
    dns_server.publish(claim["record"]["name"], claim["record"]["value"])
    call(second, "POST", f"/api/organization/sso/domains/{name}/verify", admin.token)
    join_code = call(first, "GET", "/api/auth/session", admin.token).json()["data"]["organization"]["joinCode"]
    member = sign_up(first.url, joinCode=join_code)
    token = call(first, "POST", "/api/auth/tokens", member.token, json={"name": "ci", "expiresInDays": 7}).json()
    credentials = {
        "password session": member.token,
        "token": token["data"]["token"],
        "sso session": _sso_session(second, openid_provider, f"sam@{name}"),
        "admin's password session": admin.token,
    }

    def enforce() -> float:
        call(second, "PUT", "/api/organization/sso", admin.token, json={**settings, "enforced": True})
        return time.monotonic()

    # One client per credential, and two more on the password session, each taking both processes in turn.
    tokens = [*credentials.values(), member.token, member.token]
    answers = answers_around(servers, tokens, enforce)
    assert_refused_within_bound(answers[member.token], asked=10)
    for kind in ("token", "sso session", "admin's password session"):
        kept = [answer.status for answer in answers[credentials[kind]]]
        assert kept and set(kept) == {200}, (kind, kept)
