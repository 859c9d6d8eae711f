"""A personal API token is refused by every server process within 2 seconds of its revocation, of
its owner's deactivation and of its expiry (docs/decisions.md §2): two server processes on one database."""

from __future__ import annotations

import datetime as dt
import time

import pytest
import requests
from sqlalchemy import update

from kindling.accounts.models import ApiToken
from kindling.platform.base import utcnow
from kindling.platform.database import make_engine, upgrade
from tests.helpers import call, sign_up
from tests.helpers.revocation import answers_around, assert_refused_within_bound

pytestmark = pytest.mark.live


@pytest.fixture
def servers(fresh_database_url, live_server):
    upgrade(fresh_database_url)
    return [live_server(DATABASE_URL=fresh_database_url, RATE_LIMIT_MULTIPLIER="100") for _ in range(2)]


def _member_with_token(server) -> tuple[dict, str, str]:
    """An admin's headers, and a member of the same organization with a personal token: (admin headers, member id, token)."""
    admin = sign_up(server.url)
    join_code = call(server, "GET", "/api/auth/session", admin.token).json()["data"]["organization"]["joinCode"]
    member = sign_up(server.url, joinCode=join_code)
    token = call(server, "POST", "/api/auth/tokens", member.token, json={"name": "ci", "expiresInDays": 7}).json()[
        "data"
    ]
    return admin.headers, member.id, token


def test_a_revoked_token_is_refused_everywhere_within_two_seconds(servers):
    _, _, token = _member_with_token(servers[0])

    def revoke() -> float:
        response = requests.delete(
            f"{servers[1].url}/api/auth/tokens/{token['id']}",
            headers={"Authorization": f"Bearer {token['token']}"},
            timeout=10,
        )
        assert response.status_code == 204, response.text
        return time.monotonic()

    assert_refused_within_bound(answers_around(servers, [token["token"]] * 6, revoke)[token["token"]], asked=10)


def test_a_deactivated_owners_token_is_refused_everywhere_within_two_seconds(servers):
    admin_headers, member_id, token = _member_with_token(servers[0])

    def remove() -> float:
        response = requests.delete(
            f"{servers[1].url}/api/organization/members/{member_id}", headers=admin_headers, timeout=10
        )
        assert response.status_code == 204, response.text
        return time.monotonic()

    assert_refused_within_bound(answers_around(servers, [token["token"]] * 6, remove)[token["token"]], asked=10)


def test_an_expiring_token_is_refused_everywhere_from_its_expiry(servers, fresh_database_url):
    _, _, token = _member_with_token(servers[0])
    engine = make_engine(fresh_database_url)

    def expire_soon() -> float:
        lapse = 1.0
        with engine.begin() as connection:
            connection.execute(
                update(ApiToken)
                .where(ApiToken.id == token["id"])
                .values(expires_at=utcnow() + dt.timedelta(seconds=lapse))
            )
        return time.monotonic() + lapse

    try:
        answers = answers_around(servers, [token["token"]] * 6, expire_soon, watch=4.0)[token["token"]]
    finally:
        engine.dispose()
    assert_refused_within_bound(answers, asked=10)
    # Not a moment's grace: the process memory never outlives the expiry.
    assert not [answer for answer in answers if answer.after >= 0.05 and answer.status != 401]
