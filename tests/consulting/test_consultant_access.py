"""Who may call the consultant-side endpoints, and the consultant rate limit (docs/decisions.md §3, §10)."""

from __future__ import annotations

import time

import pytest

from tests.helpers import assert_envelope

CSV = {"files": {"file": ("clients.csv", b"organizationId,message\nx,\n", "text/csv")}}
CONSULTANT_ONLY = [
    ("GET", "/api/organizations/search?q=ab", {}),
    ("POST", "/api/invitations/send", {"json": {"organizationId": "x"}}),
    ("POST", "/api/invitations/cancel", {"json": {"invitationId": "x"}}),
    ("GET", "/api/clients", {}),
    ("DELETE", "/api/clients/x", {}),
    ("POST", "/api/bulk/invite", CSV),
]
ADMIN_ONLY = [
    ("POST", "/api/invitations/accept", {"json": {"invitationId": "x"}}),
    ("POST", "/api/invitations/decline", {"json": {"invitationId": "x"}}),
    ("GET", "/api/consultants", {}),
    ("DELETE", "/api/consultants/x", {}),
]
EVERY = CONSULTANT_ONLY + ADMIN_ONLY + [("GET", "/api/invitations", {})]


def call(client, method, path, kwargs, account=None):
    headers = account.headers if account is not None else {}
    return client.request(method, path, headers=headers, **kwargs)


@pytest.mark.parametrize(("method", "path", "kwargs"), EVERY)
def test_no_session_is_401(client, method, path, kwargs):
    assert_envelope(call(client, method, path, kwargs), 401, "unauthenticated")


@pytest.mark.parametrize(("method", "path", "kwargs"), CONSULTANT_ONLY)
def test_members_are_refused_consultant_endpoints(client, make, method, path, kwargs):
    admin = make.admin()
    for account in (admin, make.member(admin)):
        assert_envelope(call(client, method, path, kwargs, account), 403, "forbidden")


@pytest.mark.parametrize(("method", "path", "kwargs"), ADMIN_ONLY)
def test_consultants_and_plain_members_are_refused_admin_endpoints(client, make, method, path, kwargs):
    for account in (make.consultant(), make.member(make.admin())):
        assert_envelope(call(client, method, path, kwargs, account), 403, "forbidden")


def test_plain_members_see_no_invitations(client, make):
    assert_envelope(call(client, "GET", "/api/invitations", {}, make.member(make.admin())), 403, "forbidden")


def test_a_consultant_makes_at_most_100_requests_a_minute(rate_window, client, make):
    consultant = make.consultant()
    for n in range(100):
        response = client.get("/api/clients", headers=consultant.headers)
        assert response.status_code == 200, n
        assert response.headers["x-ratelimit-limit"] == "100"
        assert response.headers["x-ratelimit-remaining"] == str(99 - n)
    limited = client.get("/api/organizations/search", params={"q": "ab"}, headers=consultant.headers)
    assert_envelope(limited, 429, "rate_limited")
    assert limited.json()["retryAfter"] > 0
    assert 0 < int(limited.headers["retry-after"]) <= 61  # the reset is rounded up to whole seconds
    assert limited.headers["x-ratelimit-limit"] == "100"
    assert limited.headers["x-ratelimit-remaining"] == "0"
    assert time.time() - 1 <= int(limited.headers["x-ratelimit-reset"]) <= time.time() + 61
    # The limit is per account.
    assert client.get("/api/clients", headers=make.consultant().headers).status_code == 200
