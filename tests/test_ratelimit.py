"""Rate limits of §10: headers on every limited response, 429 with Retry-After, shared state."""

from __future__ import annotations

import time

import pytest
import requests

from kindling.access import Principal
from kindling.ratelimit import RateLimiter, rules_for

HEADERS = ("x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset")


def test_headers_on_success_and_error_responses(client):
    for response in (client.get("/api/health"), client.get("/api/auth/session"), client.get("/api/nowhere")):
        assert all(name in response.headers for name in HEADERS), response.status_code
        assert response.headers["x-ratelimit-limit"] == "60"
        assert int(response.headers["x-ratelimit-reset"]) >= int(time.time())


def test_remaining_counts_down(client):
    first = int(client.get("/api/health").headers["x-ratelimit-remaining"])
    second = int(client.get("/api/health").headers["x-ratelimit-remaining"])
    assert second == first - 1


def test_anonymous_limit_then_429(client):
    for _ in range(60):
        assert client.get("/api/auth/session").status_code == 401
    response = client.get("/api/auth/session")
    assert response.status_code == 429
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["code"] == "rate_limited" and 1 <= body["retryAfter"] <= 60
    assert response.headers["retry-after"] == str(body["retryAfter"])
    assert response.headers["x-ratelimit-remaining"] == "0"


def test_members_are_limited_per_account_not_per_ip(client, make):
    member = make.admin()
    for _ in range(60):
        client.get("/api/auth/session")  # exhaust the anonymous budget of this IP
    response = client.get("/api/auth/session", headers=member.headers)
    assert response.status_code == 200
    assert response.headers["x-ratelimit-limit"] == "300"


def test_consultant_limit_is_100(client, make):
    consultant = make.consultant()
    assert client.get("/api/auth/session", headers=consultant.headers).headers["x-ratelimit-limit"] == "100"


def test_rules():
    consultant = Principal("u", "consultant", None, None, "s")
    member = Principal("u", "member", "o", "member", "s")
    assert rules_for("/api/bulk/invite", consultant) == ["consultant", "bulk"]
    assert rules_for("/api/theme/generate", consultant) == ["consultant", "theme-generate"]
    assert rules_for("/api/kindness", member) == ["member"]
    assert rules_for("/api/health", None) == ["anonymous"]


def test_multiplier_scales_every_limit():
    limiter = RateLimiter(None, multiplier=3)
    assert limiter.hit("anonymous", "k").limit == 180
    assert limiter.hit("sign-in-failures", "k").limit == 30


@pytest.mark.live
def test_limit_is_shared_by_two_server_processes(settings, runtime, live_server):
    if not settings.redis_url:
        pytest.skip("sharing across processes needs Redis (TEST_REDIS_URL)")
    first, second = live_server(), live_server()
    runtime.limiter.reset()  # forget the start-up probes; the servers share this Redis
    statuses = []
    for i in range(61):
        server = first if i % 2 == 0 else second
        statuses.append(requests.get(server.url + "/api/auth/session", timeout=5).status_code)
    assert statuses[:60] == [401] * 60
    assert statuses[60] == 429
