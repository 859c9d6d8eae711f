"""API2 Broken Authentication: every secured operation refuses a missing, made-up, revoked or
deactivated credential with 401, and password guessing is throttled per email and per client."""

from __future__ import annotations

import uuid

import pytest

from kindling.security import COOKIE_NAME
from tests.factories import PASSWORD
from tests.owasp import spec
from tests.owasp.conftest import assert_envelope

SECURED = sorted(key for key, operation in spec.operations().items() if operation.get("security") != [])


def call(client, key, headers):
    method, path = key
    url = path.replace("{id}", str(uuid.uuid4())).replace("{organizationId}", str(uuid.uuid4())).replace("{consultantId}", str(uuid.uuid4()))
    return client.request(method, url, headers=headers, json={} if method in ("POST", "PUT") else None)


def test_the_spec_secures_everything_but_health_sign_up_sign_in_and_webhooks():
    open_operations = sorted(key for key, operation in spec.operations().items() if operation.get("security") == [])
    assert open_operations == [
        ("GET", "/api/health"), ("POST", "/api/auth/sign-in"), ("POST", "/api/auth/sign-up"),
        ("POST", "/webhooks/auth"), ("POST", "/webhooks/payments"),
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
        wrong = client.post("/api/auth/sign-in", json={"email": spellings[attempt % 3], "password": f"guess number {attempt}"})
        assert wrong.status_code == 401
    blocked = client.post("/api/auth/sign-in", json={"email": account.user.email, "password": PASSWORD})
    body = assert_envelope(blocked, 429, "rate_limited")
    assert body["retryAfter"] > 0 and "set-cookie" not in blocked.headers


def test_guessing_across_many_emails_from_one_client_is_throttled(client):
    statuses = [
        client.post("/api/auth/sign-in", json={"email": f"stuffed-{n}@example.test", "password": "password123456"}).status_code
        for n in range(61)
    ]
    assert statuses[:60] == [401] * 60
    assert statuses[60] == 429
