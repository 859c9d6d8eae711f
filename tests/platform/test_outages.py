"""Outages of Redis and PostgreSQL under a running server, on throwaway servers of the test's own.

Redis down (stopped or hung): the API keeps answering, quickly, with the cache and rate limits
kept in the process; health says so. PostgreSQL down (stopped or frozen): 503 with the
envelope, promptly. Both come back without restarting anything, and nothing that was answered
201 is lost.
"""

from __future__ import annotations

import statistics
import threading
import time

import pytest
import redis
import requests

from tests.helpers import OUTSIDER_ACT, Caller

pytestmark = pytest.mark.live

BREAKER_WARNING = "Redis (cache and rate limits) unavailable"


def timed(call) -> tuple[requests.Response, float]:
    started = time.perf_counter()
    response = call()
    return response, time.perf_counter() - started


def counters_shared(caller, first, second) -> bool:
    """True when the second server counts on from the first: both limit through Redis."""
    for _ in range(3):
        before = caller.remaining(first)
        if caller.remaining(second) != before - 1:
            return False
    return True


def redis_keys(url: str) -> list:
    client = redis.Redis.from_url(url)
    try:
        return client.keys("kindling:*")
    finally:
        client.close()


def test_stopped_redis_degrades_to_the_process_then_is_shared_again(redis_service, postgres_service, live_server):
    env = {"DATABASE_URL": postgres_service.url, "REDIS_URL": redis_service.url, "RATE_LIMIT_MULTIPLIER": "10"}
    server, strict = live_server(**env), live_server(**env, STRICT_HEALTH_CHECK="true")
    caller = Caller(server)
    assert counters_shared(caller, server, strict)

    redis_service.stop()
    try:
        seconds = []
        for _ in range(5):
            for name, call in caller.requests(server).items():
                response, elapsed = timed(call)
                seconds.append(elapsed)
                assert response.status_code == (201 if name == "create" else 200), (name, response.text)
                assert ("x-ratelimit-remaining" in response.headers) == (name != "health"), name
        assert max(seconds) < 2, seconds
        health = requests.get(f"{server.url}/api/health", timeout=10).json()
        assert health["status"] == "degraded" and health["checks"]["database"] == {"status": "ok"}
        assert (
            health["checks"]["cache"]["status"] == "error" and "ConnectionError" in health["checks"]["cache"]["message"]
        )
        unhealthy = requests.get(f"{strict.url}/api/health", timeout=10)
        assert unhealthy.status_code == 503
        assert unhealthy.json()["status"] == "unhealthy" and unhealthy.json()["checks"]["cache"]["status"] == "error"
        assert server.log().count(BREAKER_WARNING) == 1, server.log()
    finally:
        redis_service.start()

    # Each server probes Redis again after its breaker's cooldown (5 s); no restart.
    deadline = time.monotonic() + 15
    while not (counters_shared(caller, server, strict) and redis_keys(redis_service.url)):
        assert time.monotonic() < deadline, "the servers did not go back to sharing Redis"
        time.sleep(0.25)
    for target in (server, strict):
        health = requests.get(f"{target.url}/api/health", timeout=10)
        assert health.status_code == 200 and health.json()["status"] == "ok"


def test_hung_redis_costs_one_timeout_per_cooldown_not_per_request(silent_server, postgres_service, live_server):
    server = live_server(
        DATABASE_URL=postgres_service.url, REDIS_URL=silent_server.url("redis") + "/0", RATE_LIMIT_MULTIPLIER="10"
    )
    caller = Caller(server)
    seconds = {name: [] for name in ("sign-in", "session", "list", "stats", "create")}
    for _ in range(4):
        for name, call in caller.requests(server).items():
            if name in seconds:
                response, elapsed = timed(call)
                assert response.status_code < 500, (name, response.text)
                seconds[name].append(elapsed)
    every = [s for times in seconds.values() for s in times]
    # Without the breaker each of these waits out the 1 s socket timeout at least once.
    assert statistics.median(every) < 0.25, seconds
    assert max(every) < 2, seconds
    response, elapsed = timed(lambda: requests.get(f"{server.url}/api/health", timeout=10))
    assert response.json()["status"] == "degraded" and response.json()["checks"]["cache"]["status"] == "error"
    assert elapsed < 5.5
    assert server.log().count(BREAKER_WARNING) == 1, server.log()


def test_database_outage_answers_503_then_recovers_with_every_201_kept(postgres_service, redis_service, live_server):
    server = live_server(DATABASE_URL=postgres_service.url, REDIS_URL=redis_service.url, RATE_LIMIT_MULTIPLIER="100")
    caller = Caller(server)
    calls = caller.requests(server)
    answered: list[tuple[int, str | None]] = []
    writing = threading.Event()
    writing.set()

    def write() -> None:
        with requests.Session() as http:
            while writing.is_set():
                response = http.post(
                    f"{server.url}/api/kindness", json=OUTSIDER_ACT, headers=caller.headers, timeout=10
                )
                answered.append((response.status_code, response.json().get("data", {}).get("id")))

    writers = [threading.Thread(target=write) for _ in range(3)]
    for writer in writers:
        writer.start()
    try:
        time.sleep(0.5)
        postgres_service.stop()  # immediate: every connection dropped mid-flight
        time.sleep(0.5)
        for name in ("sign-in", "session", "list", "stats", "create"):
            response, elapsed = timed(calls[name])
            assert response.status_code == 503, (name, response.text)
            assert response.json() == {
                "error": "The database is unavailable; try again shortly",
                "code": "service_unavailable",
            }
            assert response.headers["retry-after"] == "5"
            assert elapsed < 6.5, (name, elapsed)
        response, elapsed = timed(calls["health"])
        assert response.status_code == 200 and response.json()["status"] == "degraded", response.text
        assert response.json()["checks"]["database"]["status"] == "error" and elapsed < 6.5
    finally:
        writing.clear()
        for writer in writers:
            writer.join()
        postgres_service.start()

    assert {status for status, _ in answered} <= {201, 503}, answered
    assert 201 in {status for status, _ in answered} and 503 in {status for status, _ in answered}
    # The pool's pre-ping replaces the dead connections: the first request after the restart succeeds.
    assert calls["session"]().status_code == 200
    assert calls["create"]().status_code == 201
    created = [act_id for status, act_id in answered if status == 201]
    missing = [
        act_id
        for act_id in created
        if requests.get(f"{server.url}/api/kindness/{act_id}", headers=caller.headers, timeout=10).status_code != 200
    ]
    assert missing == [], f"{len(missing)} of {len(created)} acts answered 201 are gone"


def test_health_reports_the_database_ok_on_its_first_check_after_a_restart(postgres_service, live_server):
    server = live_server(DATABASE_URL=postgres_service.url)
    health = f"{server.url}/api/health"
    assert requests.get(health, timeout=10).json()["checks"]["database"] == {"status": "ok"}
    postgres_service.stop()  # drops health's own connection with every other
    postgres_service.start()
    assert requests.get(health, timeout=10).json()["checks"]["database"] == {"status": "ok"}


def test_frozen_database_answers_503_within_seconds_then_recovers(postgres_service, redis_service, live_server):
    server = live_server(DATABASE_URL=postgres_service.url, REDIS_URL=redis_service.url, RATE_LIMIT_MULTIPLIER="100")
    caller = Caller(server)
    calls = caller.requests(server)
    assert calls["list"]().status_code == 200
    postgres_service.freeze()
    try:
        # A pooled connection's pre-ping gets no answer (3 s), then a new connection none (2 s).
        for name in ("sign-in", "list", "create"):
            response, elapsed = timed(calls[name])
            assert response.status_code == 503, (name, response.text)
            assert response.json()["code"] == "service_unavailable"
            assert elapsed < 6.5, (name, elapsed)
        response, elapsed = timed(calls["health"])
        assert response.status_code == 200 and response.json()["checks"]["database"]["status"] == "error"
        assert elapsed < 6.5
    finally:
        postgres_service.thaw()
    created = calls["create"]()
    assert created.status_code == 201, created.text
    act = requests.get(f"{server.url}/api/kindness/{created.json()['data']['id']}", headers=caller.headers, timeout=10)
    assert act.status_code == 200
