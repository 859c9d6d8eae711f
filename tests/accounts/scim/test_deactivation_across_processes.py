"""`active: false` over SCIM is refused by every server process within 2 seconds: two workers
sharing PostgreSQL and Redis, the same revocation path as sign-out (docs/decisions.md §10, §13)."""

from __future__ import annotations

import concurrent.futures
import threading
import time

import pytest
import requests

from kindling.platform.database import upgrade
from tests.helpers import sign_up
from tests.helpers.scim import patch, user

pytestmark = pytest.mark.live
BOUND = 2.0


def test_deactivation_is_refused_everywhere_within_two_seconds(settings, fresh_database_url, live_server):
    if settings.embedded or not settings.redis_url:
        pytest.skip("several server processes need PostgreSQL and Redis")
    upgrade(fresh_database_url)
    server = live_server(workers=2, DATABASE_URL=fresh_database_url, RATE_LIMIT_MULTIPLIER="100")
    admin = sign_up(server.url)
    join_code = requests.get(f"{server.url}/api/auth/session", headers=admin.headers, timeout=10).json()["data"][
        "organization"
    ]["joinCode"]
    member = sign_up(server.url, joinCode=join_code)
    created = requests.post(
        f"{server.url}/api/organization/scim-tokens", headers=admin.headers, json={"description": "IdP"}, timeout=10
    )
    scim = {"Authorization": f"Bearer {created.json()['data']['token']}", "Content-Type": "application/scim+json"}
    linked = requests.post(f"{server.url}/scim/v2/Users", headers=scim, json=user(member.email), timeout=10).json()[
        "id"
    ]
    calls: list[tuple[float, int]] = []
    stop = threading.Event()

    def keep_calling() -> None:
        while not stop.is_set():
            started = time.monotonic()
            calls.append(
                (
                    started,
                    requests.get(f"{server.url}/api/auth/session", headers=member.headers, timeout=10).status_code,
                )
            )

    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        running = [pool.submit(keep_calling) for _ in range(8)]
        time.sleep(0.5)  # every worker has the session cached
        body = patch({"op": "replace", "value": {"active": False}})
        response = requests.patch(f"{server.url}/scim/v2/Users/{linked}", headers=scim, json=body, timeout=10)
        assert response.status_code == 200, response.text
        deactivated_at = time.monotonic()
        time.sleep(BOUND + 1.5)
        stop.set()
        for caller in running:
            caller.result()
    answers = [(started - deactivated_at, status) for started, status in calls]
    assert {status for after, status in answers if after < -0.2} == {200}
    late = [(round(after, 3), status) for after, status in answers if after >= BOUND and status != 401]
    assert not late, late
    assert len([after for after, _ in answers if after >= BOUND]) > 20
