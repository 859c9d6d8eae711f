"""scim2-tester, the SCIM conformance suite, against a live server: every check passes, and its
discovery reaches the CRUD and PATCH checks. What it does not check (filters, paging,
uniqueness, soft delete, the providers' quirks) the other tests of this package do."""

from __future__ import annotations

import collections

import pytest
import requests
from httpx2 import Client
from scim2_client.engines.httpx2 import SyncSCIMClient
from scim2_tester import Status, check_server

from kindling.platform.database import upgrade
from tests.helpers import sign_up

pytestmark = pytest.mark.live


def test_scim2_tester_passes_every_check(fresh_database_url, live_server):
    upgrade(fresh_database_url)
    server = live_server(DATABASE_URL=fresh_database_url, RATE_LIMIT_MULTIPLIER="100")
    admin = sign_up(server.url)
    created = requests.post(
        f"{server.url}/api/organization/scim-tokens",
        headers=admin.headers,
        json={"description": "scim2-tester"},
        timeout=10,
    )
    token = created.json()["data"]["token"]
    with Client(base_url=f"{server.url}/scim/v2", headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
        results = check_server(SyncSCIMClient(http))
    failed = [
        (result.title, result.reason) for result in results if result.status not in (Status.SUCCESS, Status.SKIPPED)
    ]
    assert not failed, failed
    titles = collections.Counter(result.title for result in results if result.status == Status.SUCCESS)
    # Discovery reached the resources: both were created, read, replaced, deleted and patched.
    for check in (
        "object_creation",
        "object_query",
        "object_replacement",
        "object_deletion",
        "check_add_attribute",
        "check_remove_attribute",
        "check_replace_attribute",
    ):
        assert titles[check] >= 2, (check, titles)
    assert sum(titles.values()) >= 75
