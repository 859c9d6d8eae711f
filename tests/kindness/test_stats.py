"""Kindness statistics and their cache (docs/decisions.md §6)."""

from __future__ import annotations

import datetime as dt
import json

from kindling.kindness import stats as kindness_stats
from kindling.platform.base import utcnow

T0 = dt.datetime(2024, 3, 1, tzinfo=dt.UTC)
DAY = dt.timedelta(days=1)
EMPTY = {
    "total": 0,
    "byCategory": {"peer_recognition": 0, "community": 0, "wellbeing": 0},
    "averageRippleScore": 0,
    "totalRippleScore": 0,
    "recentCount": 0,
    "topRecipients": [],
}


def stats(client, account) -> dict:
    response = client.get("/api/kindness/stats", headers=account.headers)
    assert response.status_code == 200
    return response.json()["data"]


def post_act(client, account, **fields) -> dict:
    body = {
        "description": "Brought soup",
        "category": "wellbeing",
        "verificationLevel": 1,
        "recipientId": "outsider",
        **fields,
    }
    response = client.post("/api/kindness", json=body, headers=account.headers)
    assert response.status_code == 201
    return response.json()["data"]


def test_organization_without_acts(client, make):
    assert stats(client, make.admin()) == EMPTY


def test_statistics_of_an_organization(client, make):
    a = make.admin()
    b = make.member(a)
    make.act(a, b, at=T0, category="community", verified_level=3)  # b passes it on twice: 3 + 1
    make.act(b, "outsider", at=T0 + DAY, category="community", verified_level=2)
    make.act(b, a, at=T0 + 2 * DAY, category="wellbeing", verified_level=5)
    elsewhere = make.admin()
    make.act(elsewhere, "outsider", at=T0, category="peer_recognition", verified_level=5)
    assert stats(client, a) == {
        "total": 3,
        "byCategory": {"peer_recognition": 0, "community": 2, "wellbeing": 1},
        "averageRippleScore": 3.67,
        "totalRippleScore": 11,
        "recentCount": 0,
        "topRecipients": [
            {"userId": recipient, "count": 1} for recipient in sorted([a.user.id, b.user.id]) + ["outsider"]
        ],
    }


def test_half_points_survive_in_the_total_and_averages_round_half_up(client, make):
    a = make.admin()
    b = make.member(a)
    make.act(a, b, at=T0, verification_level=1)
    make.act(b, "outsider", at=T0 + DAY, verification_level=1)  # the first act scores 1.5
    for _ in range(6):
        make.act(a, "outsider", at=T0, verification_level=1)
    # 8.5 over 8 acts, then 9.5 over 9
    assert (stats(client, a)["totalRippleScore"], stats(client, a)["averageRippleScore"]) == (8.5, 1.06)
    post_act(client, a)
    assert (stats(client, a)["totalRippleScore"], stats(client, a)["averageRippleScore"]) == (9.5, 1.06)


def test_average_rounds_half_up_not_to_even(client, make):
    a = make.admin()
    for level in (1, 1, 1, 1, 1, 1, 1, 2):
        make.act(a, at=T0, verified_level=level)
    # 9 / 8 = 1.125 exactly: half up gives 1.13 where round() would give 1.12.
    assert stats(client, a)["averageRippleScore"] == 1.13


def test_recent_count_covers_the_last_seven_days(client, make):
    a = make.admin()
    now = utcnow()
    make.act(a, at=now - 7 * DAY + dt.timedelta(minutes=1))
    make.act(a, at=now - dt.timedelta(minutes=1))
    make.act(a, at=now - 7 * DAY - dt.timedelta(minutes=1))
    make.act(a, at=T0)
    data = stats(client, a)
    assert (data["total"], data["recentCount"]) == (4, 2)


def test_top_recipients_are_five_by_count_then_id(client, make):
    a = make.admin()
    counts = {"zed": 4, "amy": 2, "bob": 2, "cat": 3, "dan": 1, "eve": 2, "fay": 1}
    for recipient, count in counts.items():
        for _ in range(count):
            make.act(a, recipient, at=T0)
    assert stats(client, a)["topRecipients"] == [
        {"userId": "zed", "count": 4},
        {"userId": "cat", "count": 3},
        {"userId": "amy", "count": 2},
        {"userId": "bob", "count": 2},
        {"userId": "eve", "count": 2},
    ]


def test_statistics_are_served_from_the_cache(client, make, db):
    a = make.admin()
    post_act(client, a)
    assert stats(client, a)["total"] == 1
    # Recorded in the test's own transaction, which never commits: the cache is not told.
    make.act(a, at=T0)
    assert kindness_stats.compute_stats(db, organization_id=a.organization_id)["total"] == 2
    assert stats(client, a)["total"] == 1


def test_creating_an_act_invalidates_the_statistics(client, make):
    a = make.admin()
    other = make.admin()
    assert stats(client, a)["total"] == 0
    assert stats(client, other)["total"] == 0
    make.act(other, at=T0)  # unseen by the cache, as above
    post_act(client, a)
    assert stats(client, a)["total"] == 1
    assert stats(client, other)["total"] == 0  # another organization's entry stays


def test_changing_an_act_invalidates_the_statistics(client, make):
    a = make.admin()
    act = post_act(client, a, category="wellbeing", verificationLevel=1)
    assert stats(client, a)["byCategory"]["wellbeing"] == 1
    response = client.put(
        f"/api/kindness/{act['id']}", json={"category": "community", "verificationLevel": 4}, headers=a.headers
    )
    assert response.status_code == 200
    data = stats(client, a)
    assert data["byCategory"] == {"peer_recognition": 0, "community": 1, "wellbeing": 0}
    assert data["totalRippleScore"] == 1  # level 4 is asked for, not yet evidenced


def test_a_verification_decision_invalidates_the_statistics(client, make):
    a = make.admin()
    manager = make.manager(a)
    act = post_act(client, a, verificationLevel=3)
    assert stats(client, a)["totalRippleScore"] == 1
    decided = client.post(
        f"/api/kindness/{act['id']}/verifications", json={"level": 3, "decision": "approve"}, headers=manager.headers
    )
    assert decided.status_code == 201
    assert stats(client, a)["totalRippleScore"] == 3


def test_refused_requests_leave_statistics_alone(client, make):
    a = make.admin()
    act = post_act(client, a)
    before = stats(client, a)
    assert client.post("/api/kindness", json={"description": "x"}, headers=a.headers).status_code == 400
    assert client.put(f"/api/kindness/{act['id']}", json={"category": "nope"}, headers=a.headers).status_code == 400
    assert stats(client, a) == before


def test_a_late_write_from_a_stale_reader_is_never_served(client, make, runtime):
    a = make.admin()
    post_act(client, a)
    stale = dict(stats(client, a), total=1)
    generation, _ = stored_entry(runtime.cache, a.organization_id)
    # A reader that read the database before the next act committed stores its result late.
    post_act(client, a)
    runtime.cache.set(
        f"kindness:stats:{a.organization_id}", f"{generation}:{json.dumps(stale)}", kindness_stats.STATS_TTL
    )
    assert stats(client, a)["total"] == 2


def test_cached_statistics_are_sent_as_stored(client, make, runtime):
    a = make.admin()
    post_act(client, a)
    stats(client, a)
    generation, _ = stored_entry(runtime.cache, a.organization_id)
    stored = json.dumps(dict(EMPTY, total=7), indent=1)
    runtime.cache.set(f"kindness:stats:{a.organization_id}", f"{generation}:{stored}", kindness_stats.STATS_TTL)
    response = client.get("/api/kindness/stats", headers=a.headers)
    assert response.status_code == 200 and response.headers["content-type"] == "application/json"
    assert response.text == '{"data":' + stored + "}"


def stored_entry(cache, organization_id: str) -> tuple[str, str]:
    """(generation, statistics JSON) of the organization's cached entry."""
    generation, _, stored = cache.get(f"kindness:stats:{organization_id}").partition(":")
    assert generation == cache.get(f"kindness:stats-generation:{organization_id}")
    return generation, stored


class RecordingCache:
    """A cache that remembers what it was asked to keep, and for how long."""

    def __init__(self) -> None:
        self.items: dict[str, tuple[str, int]] = {}

    def get(self, key: str) -> str | None:
        item = self.items.get(key)
        return item[0] if item else None

    def get_many(self, keys: list[str]) -> list[str | None]:
        return [self.get(key) for key in keys]

    def set(self, key: str, value: str, ttl: int) -> None:
        self.items[key] = (value, ttl)


def test_statistics_are_kept_for_five_minutes_as_json(db, make):
    a = make.admin()
    make.act(a, at=T0)
    cache = RecordingCache()
    computed = kindness_stats.get_stats(db, cache, organization_id=a.organization_id)
    entries = [(key, value, ttl) for key, (value, ttl) in cache.items.items() if key.startswith("kindness:stats:")]
    assert len(entries) == 1
    key, value, ttl = entries[0]
    assert a.organization_id in key and ttl == 300
    generation, _, stored = value.partition(":")
    assert generation == cache.get(f"kindness:stats-generation:{a.organization_id}")
    assert json.loads(stored) == computed
    assert kindness_stats.get_stats(db, cache, organization_id=a.organization_id) == computed
