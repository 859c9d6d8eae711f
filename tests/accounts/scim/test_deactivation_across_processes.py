"""`active: false` over SCIM is refused by every server process within 2 seconds: two workers
sharing PostgreSQL and Redis, the same revocation path as sign-out (docs/decisions.md §10, §13)."""

from __future__ import annotations

import time

import pytest
import requests

from kindling.platform.database import upgrade
from tests.helpers import sign_up
from tests.helpers.revocation import BOUND, answers_around, assert_refused_within_bound
from tests.helpers.scim import patch, user

pytestmark = pytest.mark.live


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

    def deactivate() -> float:
        body = patch({"op": "replace", "value": {"active": False}})
        response = requests.patch(f"{server.url}/scim/v2/Users/{linked}", headers=scim, json=body, timeout=10)
        assert response.status_code == 200, response.text
        return time.monotonic()

    answers = answers_around([server], [member.token] * 8, deactivate, watch=BOUND + 1.5)[member.token]
    assert_refused_within_bound(answers, asked=20)
