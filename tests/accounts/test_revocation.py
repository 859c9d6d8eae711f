"""A revoked session is refused by every server process within 2 seconds, Redis up or stopped
(docs/decisions.md §10): two workers, on throwaway PostgreSQL and Redis servers of the test's own."""

from __future__ import annotations

import concurrent.futures
import threading
import time

import pytest
import requests

from kindling.accounts.principal_cache import PRINCIPAL_TTL
from tests.helpers import sign_up

pytestmark = pytest.mark.live

BOUND = 2.0


def _answers_after_sign_out(server, headers: dict, *, callers: int = 8, watch: float = 3.5) -> list[tuple[float, int]]:
    """(seconds after the sign-out answered, status) of requests made with the token by `callers`
    concurrent clients (new connections, so both workers serve them), from half a second before
    the sign-out until `watch` seconds after it."""
    calls: list[tuple[float, int]] = []
    stop = threading.Event()

    def keep_calling() -> None:
        while not stop.is_set():
            started = time.monotonic()
            status = requests.get(f"{server.url}/api/auth/session", headers=headers, timeout=10).status_code
            calls.append((started, status))

    with concurrent.futures.ThreadPoolExecutor(max_workers=callers) as pool:
        callers_running = [pool.submit(keep_calling) for _ in range(callers)]
        time.sleep(0.5)  # every worker has the session cached
        response = requests.post(f"{server.url}/api/auth/sign-out", headers=headers, timeout=10)
        assert response.status_code == 200, response.text
        signed_out_at = time.monotonic()
        time.sleep(watch)
        stop.set()
        for caller in callers_running:
            caller.result()
    return [(started - signed_out_at, status) for started, status in calls]


def _assert_refused_within_bound(answers: list[tuple[float, int]]) -> None:
    before = [status for after, status in answers if after < -0.2]
    assert before and set(before) == {200}, before  # the session worked, and was cached
    late = [(round(after, 3), status) for after, status in answers if after >= BOUND and status != 401]
    assert not late, late
    assert len([after for after, _status in answers if after >= BOUND]) > 20, answers  # it was asked, often


@pytest.mark.parametrize("redis_state", ["up", "stopped"])
def test_a_signed_out_session_is_refused_everywhere_within_two_seconds(
    redis_service, postgres_service, live_server, redis_state
):
    assert PRINCIPAL_TTL < BOUND
    server = live_server(
        workers=2, DATABASE_URL=postgres_service.url, REDIS_URL=redis_service.url, RATE_LIMIT_MULTIPLIER="100"
    )
    headers = sign_up(server.url).headers
    if redis_state == "stopped":
        redis_service.stop()
    try:
        answers = _answers_after_sign_out(server, headers)
    finally:
        if redis_state == "stopped":
            redis_service.start()
    _assert_refused_within_bound(answers)


def test_a_session_revoked_while_redis_was_down_stays_revoked_when_it_returns(
    redis_service, postgres_service, live_server
):
    server = live_server(
        workers=2, DATABASE_URL=postgres_service.url, REDIS_URL=redis_service.url, RATE_LIMIT_MULTIPLIER="100"
    )
    headers = sign_up(server.url).headers
    for _ in range(20):  # cached by whichever workers answer
        assert requests.get(f"{server.url}/api/auth/session", headers=headers, timeout=10).status_code == 200
    redis_service.stop()
    try:
        assert requests.post(f"{server.url}/api/auth/sign-out", headers=headers, timeout=10).status_code == 200
    finally:
        redis_service.start()
    time.sleep(BOUND)
    statuses = [
        requests.get(f"{server.url}/api/auth/session", headers=headers, timeout=10).status_code for _ in range(40)
    ]
    assert statuses == [401] * 40
