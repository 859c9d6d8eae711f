"""API2 Broken Authentication: every secured operation refuses a missing, made-up, revoked or
deactivated credential with 401, and password guessing is throttled per email and per client."""

from __future__ import annotations

import concurrent.futures
import uuid

import pytest
import requests

from kindling.accounts.sessions import COOKIE_NAME
from kindling.platform.database import upgrade
from tests.factories import PASSWORD
from tests.helpers import assert_envelope, sign_up, spec

SECURED = sorted(key for key, operation in spec.operations().items() if operation.get("security") != [])


def call(client, key, headers):
    method, path = key
    url = (
        path.replace("{id}", str(uuid.uuid4()))
        .replace("{organizationId}", str(uuid.uuid4()))
        .replace("{consultantId}", str(uuid.uuid4()))
    )
    return client.request(method, url, headers=headers, json={} if method in ("POST", "PUT") else None)


def test_the_spec_secures_everything_but_health_sign_up_sign_in_webhooks_and_attestations():
    # An attester has no account: the single-use token in the body is the credential. The
    # evidence keys are public: an auditor checks bundles and exports with them, without an account.
    # Single sign-on begins without a session, and its callback is proven by the single-use state,
    # as the Slack install's is. Slack's requests are proven by Slack's signature. A SAML response
    # is proven by the identity provider's signature, and the service provider's metadata is for
    # identity providers to read.
    open_operations = sorted(key for key, operation in spec.operations().items() if operation.get("security") == [])
    assert open_operations == [
        ("GET", "/api/auth/saml/{organizationSlug}/metadata"),
        ("GET", "/api/auth/sso/callback"),
        ("GET", "/api/auth/sso/start"),
        ("GET", "/api/evidence/keys"),
        ("GET", "/api/health"),
        ("GET", "/api/integrations/slack/callback"),
        ("GET", "/attest"),
        ("POST", "/api/attestations/answer"),
        ("POST", "/api/attestations/lookup"),
        ("POST", "/api/auth/saml/acs"),
        ("POST", "/api/auth/sign-in"),
        ("POST", "/api/auth/sign-up"),
        ("POST", "/integrations/slack/commands"),
        ("POST", "/integrations/slack/events"),
        ("POST", "/integrations/slack/interactions"),
        ("POST", "/webhooks/auth"),
        ("POST", "/webhooks/payments"),
    ]


@pytest.mark.parametrize("key", SECURED, ids=[f"{m} {p}" for m, p in SECURED])
def test_secured_operations_refuse_bad_credentials(client, make, db, runtime, key):
    revoked, deactivated = make.admin(), make.admin()
    assert client.post("/api/auth/sign-out", headers=revoked.headers).status_code == 200
    deactivated.user.active = False
    db.flush()
    for headers in (
        {},
        {"Authorization": "Bearer " + "A" * 43},
        {"Authorization": f"Bearer {revoked.token}"},
        {"Cookie": f"{COOKIE_NAME}={revoked.token}"},
        {"Authorization": f"Bearer {deactivated.token}"},
        {"Authorization": f"Bearer {deactivated.token[:-1]}"},  # one character short of a real token
    ):
        runtime.limiter.reset()  # theme generation allows 5 a minute, even to the unauthenticated
        assert_envelope(call(client, key, headers), 401, "unauthenticated")


def test_guessing_one_accounts_password_is_throttled_whatever_the_spelling_of_the_email(client, make):
    account = make.admin()
    spellings = [account.user.email.upper(), f"  {account.user.email}", account.user.email.title()]
    for attempt in range(10):
        wrong = client.post(
            "/api/auth/sign-in", json={"email": spellings[attempt % 3], "password": f"guess number {attempt}"}
        )
        assert wrong.status_code == 401
    blocked = client.post("/api/auth/sign-in", json={"email": account.user.email, "password": PASSWORD})
    body = assert_envelope(blocked, 429, "rate_limited")
    assert body["retryAfter"] > 0 and "set-cookie" not in blocked.headers


def test_guessing_across_many_emails_from_one_client_is_throttled(rate_window, client):
    statuses = [
        client.post(
            "/api/auth/sign-in", json={"email": f"stuffed-{n}@example.test", "password": "password123456"}
        ).status_code
        for n in range(61)
    ]
    assert statuses[:60] == [401] * 60
    assert statuses[60] == 429


def _guess(server, email: str, address: str, password: str = "wrong password!"):
    return requests.post(
        f"{server.url}/api/auth/sign-in",
        json={"email": email, "password": password},
        headers={"X-Forwarded-For": address},
        timeout=60,
    )


def _assert_ten_checked(responses) -> None:
    statuses = [response.status_code for response in responses]
    assert statuses.count(401) == 10, statuses
    assert statuses.count(429) == len(statuses) - 10, statuses
    for response in responses:
        if response.status_code == 429:
            assert response.json()["error"] == "Too many sign-in attempts; try again later"
            assert 880 <= int(response.headers["retry-after"]) <= 900


@pytest.mark.live
@pytest.mark.parametrize("addresses", [1, 100])
def test_concurrent_guesses_get_ten_checks_then_even_the_right_password_waits(
    fresh_database_url, live_server, addresses
):
    """Each attempt is counted before its password is checked, atomically: of 60 (or, from 100
    client addresses, 100) concurrent wrong guesses for one email, exactly 10 are checked."""
    upgrade(fresh_database_url)
    server = live_server(DATABASE_URL=fresh_database_url)
    email = sign_up(server.url, headers={"X-Forwarded-For": "198.51.100.1"}).email
    guesses = 60 if addresses == 1 else 100
    with concurrent.futures.ThreadPoolExecutor(max_workers=guesses) as pool:
        responses = list(pool.map(lambda i: _guess(server, email, f"203.0.113.{i % addresses + 1}"), range(guesses)))
    _assert_ten_checked(responses)
    right = _guess(server, email, "192.0.2.200", password=PASSWORD)
    assert right.status_code == 429, right.text
    assert right.json()["error"] == "Too many sign-in attempts; try again later"
    assert 0 < int(right.headers["retry-after"]) <= 900
