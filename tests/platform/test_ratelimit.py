"""Rate limits (docs/decisions.md §10): headers on every limited response, 429 with Retry-After, shared state."""

from __future__ import annotations

import time

import pytest
import redis
import requests

from kindling.platform.ratelimit import RULES, RateLimiter
from kindling.web.app import load_spec
from kindling.web.operations import HTTP_METHODS

HEADERS = ("x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset")


def test_headers_on_success_and_error_responses(client):
    for response in (client.get("/api/auth/session"), client.get("/api/kindness"), client.get("/api/nowhere")):
        assert all(name in response.headers for name in HEADERS), response.status_code
        assert response.headers["x-ratelimit-limit"] == "60"
        assert int(response.headers["x-ratelimit-reset"]) >= int(time.time())


def test_remaining_counts_down(rate_window, client):
    first = int(client.get("/api/auth/session").headers["x-ratelimit-remaining"])
    second = int(client.get("/api/auth/session").headers["x-ratelimit-remaining"])
    assert second == first - 1


def test_anonymous_limit_then_429(rate_window, client):
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


def test_an_operation_class_is_counted_apart_from_the_callers_limit(rate_window, client, make):
    consultant = make.consultant()
    for _ in range(5):
        response = client.post("/api/theme/generate", json={}, headers=consultant.headers)
        assert response.status_code == 400 and response.headers["x-ratelimit-limit"] == "5"
    refused = client.post("/api/theme/generate", json={}, headers=consultant.headers)
    assert refused.status_code == 429 and refused.json()["code"] == "rate_limited"
    assert refused.headers["retry-after"] == str(refused.json()["retryAfter"])
    assert (refused.headers["x-ratelimit-limit"], refused.headers["x-ratelimit-remaining"]) == ("5", "0")
    # The consultant's own limit is untouched by the class's refusal.
    other = client.get("/api/clients", headers=consultant.headers)
    assert other.status_code == 200 and other.headers["x-ratelimit-limit"] == "100"
    assert int(other.headers["x-ratelimit-remaining"]) == 100 - 7


def test_every_declared_rate_limit_class_is_a_rule():
    classes = {
        operation.get("x-rate-limit")
        for item in load_spec()["paths"].values()
        for operation in item.values()
        if isinstance(operation, dict)
    }
    assert classes - {None} <= set(RULES)


def test_multiplier_scales_every_limit():
    limiter = RateLimiter(None, multiplier=3)
    assert limiter.hit("anonymous", "k").limit == 180
    assert limiter.attempt("sign-in", "k").limit == 30


@pytest.mark.live
def test_limit_is_shared_by_two_server_processes(rate_window, settings, runtime, live_server):
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


def _commands_run(client: redis.Redis) -> dict[str, int]:
    """Calls of each command so far; those a script runs are counted under their own names too."""
    stats = client.info("commandstats")
    return {name.removeprefix("cmdstat_"): stat["calls"] for name, stat in stats.items() if name != "cmdstat_info"}


def test_a_check_is_one_redis_command_and_its_headers_are_exact(redis_service):
    limiter = RateLimiter(redis_service.url)
    limiter.reset()
    observer = redis.Redis.from_url(redis_service.url)
    limiter.hit("bulk", "warm-up")  # loads the script once
    before = _commands_run(observer)
    decisions = [limiter.hit("bulk", "caller") for _ in range(12)]
    after = _commands_run(observer)
    sent = {name: after[name] - before.get(name, 0) for name in after if after[name] != before.get(name, 0)}
    # One script per check: what else ran, ran inside it.
    assert sent.pop("evalsha") == 12 and set(sent) <= {"incrby", "expire"}, sent
    assert [d.remaining for d in decisions] == [9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0, 0]
    assert [d.allowed for d in decisions] == [True] * 10 + [False] * 2
    assert {d.reset for d in decisions} == {decisions[0].reset}
    assert decisions[0].reset % 60 == 0 and 0 < decisions[0].reset - time.time() <= 60
    observer.close()


def test_limits_hold_across_limiters_on_one_redis(redis_service):
    first, second = RateLimiter(redis_service.url), RateLimiter(redis_service.url)
    first.reset()
    statuses = [(first if i % 2 else second).hit("theme-generate", "shared").allowed for i in range(7)]
    assert statuses == [True] * 5 + [False] * 2


def test_every_response_under_api_declares_the_headers_it_carries():
    """Every response of every limited operation, errors and `default` included, declares the
    X-RateLimit-* headers the limiter adds to it."""
    spec = load_spec()
    responses = spec["components"]["responses"]
    undeclared = []
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            if method not in HTTP_METHODS or not path.startswith("/api/") or path == "/api/health":
                continue
            for status, response in operation["responses"].items():
                if "$ref" in response:
                    response = responses[response["$ref"].rsplit("/", 1)[1]]
                if (
                    not {"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"}
                    <= response.get("headers", {}).keys()
                ):
                    undeclared.append((method, path, status))
    assert undeclared == []
