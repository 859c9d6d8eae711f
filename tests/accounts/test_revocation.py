"""A revoked session is refused by every server process within 2 seconds, Redis up or stopped
(docs/decisions.md §10): two workers, on throwaway PostgreSQL and Redis servers of the test's own."""

from __future__ import annotations

import time

import pytest
import requests

from kindling.accounts.principal_cache import PRINCIPAL_TTL
from tests.helpers import sign_up
from tests.helpers.revocation import BOUND, answers_around, assert_refused_within_bound

pytestmark = pytest.mark.live


@pytest.mark.parametrize("redis_state", ["up", "stopped"])
def test_a_signed_out_session_is_refused_everywhere_within_two_seconds(
    redis_service, postgres_service, live_server, redis_state
):
    assert PRINCIPAL_TTL < BOUND
    server = live_server(
        workers=2, DATABASE_URL=postgres_service.url, REDIS_URL=redis_service.url, RATE_LIMIT_MULTIPLIER="100"
    )
    account = sign_up(server.url)

    def sign_out() -> float:
        response = requests.post(f"{server.url}/api/auth/sign-out", headers=account.headers, timeout=10)
        assert response.status_code == 200, response.text
        return time.monotonic()

    if redis_state == "stopped":
        redis_service.stop()
    try:
        # New connections from 8 clients, so that both workers serve them.
        answers = answers_around([server], [account.token] * 8, sign_out, watch=3.5)[account.token]
    finally:
        if redis_state == "stopped":
            redis_service.start()
    assert_refused_within_bound(answers, asked=20)


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
