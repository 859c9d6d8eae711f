"""Wellbeing responses, sentiment and aggregates that move in steps of five people (docs/decisions.md §7)."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from sqlalchemy import select

from kindling.platform import periods
from kindling.platform.base import utcnow
from kindling.wellbeing import service as wellbeing
from kindling.wellbeing.models import WellbeingWeek

RESPONSE_FIELDS = {"id", "mood", "stress", "energy", "comment", "anonymous", "sentiment", "createdAt"}
SUPPRESSED = {"data": None, "suppressed": True, "minimumGroupSize": 5}


def last_week() -> dt.datetime:
    """A moment of the last closed week: a period is made of closed weeks only."""
    return utcnow() - dt.timedelta(weeks=1)


def aggregates(client, admin, **params):
    response = client.get("/api/wellbeing", params={"scope": "organization", **params}, headers=admin.headers)
    assert response.status_code == 200
    return response.json()


def test_response_gets_a_sentiment(client, make):
    member = make.member(make.admin())
    response = client.post(
        "/api/wellbeing",
        json={"mood": 5, "stress": 1, "energy": 4, "comment": "I love this team, great week!"},
        headers=member.headers,
    )
    assert response.status_code == 201
    data = response.json()["data"]
    assert set(data) == RESPONSE_FIELDS
    assert data["sentiment"]["label"] == "positive" and data["sentiment"]["compound"] >= 0.05
    assert data["anonymous"] is False
    assert client.get(f"/api/wellbeing/{data['id']}", headers=member.headers).json()["data"] == data


@pytest.mark.parametrize(
    ("comment", "label"),
    [
        ("Awful week, I am exhausted and miserable.", "negative"),
        ("The meeting is on Tuesday.", "neutral"),
        ("Pretty good, thanks", "positive"),
        (None, "neutral"),
        ("   ", "neutral"),
    ],
)
def test_sentiment_labels(client, make, comment, label):
    member = make.member(make.admin())
    body = {"mood": 3, "stress": 3} | ({"comment": comment} if comment is not None else {})
    data = client.post("/api/wellbeing", json=body, headers=member.headers).json()["data"]
    assert data["sentiment"]["label"] == label
    if comment is None or not comment.strip():
        assert data["comment"] is None and data["sentiment"]["compound"] == 0


def test_thresholds():
    assert wellbeing.sentiment_of(None) == wellbeing.Sentiment("neutral", 0.0)
    for text in ("good", "bad", "table"):
        result = wellbeing.sentiment_of(text)
        expected = "positive" if result.compound >= 0.05 else "negative" if result.compound <= -0.05 else "neutral"
        assert result.label == expected


def test_response_rules(client, make):
    member = make.member(make.admin())
    for body in [
        {"mood": 0, "stress": 3},
        {"mood": 6, "stress": 3},
        {"mood": 3},
        {"mood": 3, "stress": 3, "energy": 0},
        {"mood": 3, "stress": 3, "comment": "x" * 2001},
        {"mood": 3, "stress": 3, "anonymous": "yes"},
        {"mood": 3.5, "stress": 3},
        {"mood": 3, "stress": 3, "userId": member.user.id},
    ]:
        assert client.post("/api/wellbeing", json=body, headers=member.headers).status_code == 400, body
    assert client.get("/api/wellbeing", headers=member.headers).json()["data"] == []


def test_nobody_reads_another_persons_responses(client, make, db):
    admin = make.admin()
    alice, bob = make.member(admin), make.member(admin)
    secret = make.response(alice, comment="I am thinking of leaving", anonymous=True)
    named = make.response(alice, comment="Fine")
    for reader in (bob, admin, make.admin()):
        for record in (secret, named):
            assert client.get(f"/api/wellbeing/{record.id}", headers=reader.headers).status_code == 404
        listed = client.get("/api/wellbeing", headers=reader.headers).json()["data"]
        assert listed == []
    own = client.get("/api/wellbeing", headers=alice.headers).json()["data"]
    assert {r["id"] for r in own} == {secret.id, named.id}
    assert client.get(f"/api/wellbeing/{secret.id}", headers=alice.headers).json()["data"]["anonymous"] is True


def test_only_admins_get_aggregates(client, make):
    admin = make.admin()
    member = make.member(admin)
    assert client.get("/api/wellbeing", params={"scope": "organization"}, headers=member.headers).status_code == 403
    consultant = make.consultant()
    for params in ({}, {"scope": "organization"}):
        assert client.get("/api/wellbeing", params=params, headers=consultant.headers).status_code == 403
    assert client.post("/api/wellbeing", json={"mood": 3, "stress": 3}, headers=consultant.headers).status_code == 403


def test_group_of_four_is_suppressed(client, make, db):
    admin = make.admin()
    people = [make.member(admin) for _ in range(4)]
    for person in people:
        # Many responses from few people still do not make a group.
        for _ in range(3):
            make.response(person, mood=1, comment="Terrible, I hate it here", created_at=last_week())
    assert aggregates(client, admin) == SUPPRESSED
    for period in ("week", "month", "quarter", "year"):
        assert aggregates(client, admin, period=period) == SUPPRESSED


def test_group_of_five_gets_aggregates_without_comments_or_identities(client, make, db):
    admin = make.admin()
    people = [make.member(admin) for _ in range(5)]
    comments = [
        "Great week, wonderful team",
        "Awful, exhausted and sad",
        "The meeting is on Tuesday.",
        "Happy and proud",
        None,
    ]
    for person, (mood, comment) in zip(people, enumerate(comments, start=1), strict=True):
        make.response(
            person, mood=mood, stress=3, energy=2, comment=comment, anonymous=mood == 2, created_at=last_week()
        )
    body = aggregates(client, admin)
    assert body["suppressed"] is False and body["minimumGroupSize"] == 5
    data = body["data"]
    assert data["period"] == "month"
    week = db.scalars(select(WellbeingWeek).where(WellbeingWeek.organization_id == admin.organization_id)).one()
    # Served exactly as published, noise included (tests/wellbeing/test_privacy.py measures the noise).
    assert (data["respondents"], data["responses"]) == (week.respondents, week.responses)
    assert 5 <= data["respondents"] <= data["responses"] <= 3 * data["respondents"]
    assert data["averages"] == {
        "mood": week.mood_average,
        "stress": week.stress_average,
        "energy": week.energy_average,
        "energySuppressed": False,
    }
    assert all(1 <= data["averages"][figure] <= 5 for figure in ("mood", "stress", "energy"))
    # Four people commented: the split rests on fewer than five and is not published.
    assert data["sentiment"] == {"positive": None, "neutral": None, "negative": None, "suppressed": True}
    assert data["privacy"] == {"epsilon": 1.0, "mechanism": "laplace", "epsilonSpent": 1.0}
    assert [week["epsilonSpent"] for week in data["byWeek"]] == [None, None, None, 1.0]
    # Answering again, now, counts to the open week: what was published stays as it was.
    for person in people:
        make.response(person, mood=5, stress=1)
    assert aggregates(client, admin) == body
    text = json.dumps(body)
    for person in people:
        assert person.user.id not in text and person.user.email not in text and person.user.name not in text
    for comment in filter(None, comments):
        assert comment not in text


def monday_of(moment: dt.datetime) -> str:
    return periods.week_of(moment).isoformat()


def test_periods_are_calendar_weeks(client, make, db):
    admin = make.admin()
    now = utcnow()
    people = [make.member(admin) for _ in range(5)]
    for person in people:
        make.response(person, created_at=last_week())
        # The open week is never part of a period, however many answered in it.
        make.response(person, created_at=now)
    # Two people answered two months ago: outside the month, inside the quarter, too few for their week.
    for person in people[:2]:
        make.response(person, mood=1, created_at=now - dt.timedelta(days=60))
    current = periods.week_of(now)
    closed = periods.week_of(last_week())
    for period, weeks in (("week", 1), ("month", 4), ("quarter", 13), ("year", 52)):
        data = aggregates(client, admin, period=period)["data"]
        starts = [dt.date.fromisoformat(w["weekStart"]) for w in data["byWeek"]]
        assert starts == [current - dt.timedelta(weeks=n) for n in reversed(range(1, weeks + 1))]
        assert data["from"] == f"{starts[0].isoformat()}T00:00:00+00:00"
        assert data["to"] == f"{current.isoformat()}T00:00:00+00:00"
        by_start = {w["weekStart"]: w for w in data["byWeek"]}
        assert by_start[closed.isoformat()]["suppressed"] is False
        assert data["respondents"] == by_start[closed.isoformat()]["respondents"] >= 5
        # Every other week is suppressed: the one with two answers and those without any.
        assert sum(1 for w in data["byWeek"] if w["suppressed"]) == weeks - 1
    old = {w["weekStart"]: w for w in aggregates(client, admin, period="quarter")["data"]["byWeek"]}[
        monday_of(now - dt.timedelta(days=60))
    ]
    assert old == {
        "weekStart": old["weekStart"],
        "suppressed": True,
        "respondents": None,
        "responses": None,
        "averages": None,
        "sentiment": None,
        "epsilonSpent": None,
    }


def test_other_organizations_do_not_count(client, make, db):
    admin, other_admin = make.admin(), make.admin()
    for person in [make.member(other_admin) for _ in range(5)]:
        make.response(person, created_at=last_week())
    for person in [make.member(admin) for _ in range(4)]:
        make.response(person, created_at=last_week())
    assert aggregates(client, admin) == SUPPRESSED
    assert aggregates(client, other_admin)["data"]["respondents"] >= 5


def test_own_list_pages(client, make, db):
    member = make.member(make.admin())
    now = utcnow()
    created = [make.response(member, created_at=now - dt.timedelta(hours=i)) for i in range(5)]
    seen, cursor = [], None
    while True:
        params = {"limit": 2} | ({"cursor": cursor} if cursor else {})
        page = client.get("/api/wellbeing", params=params, headers=member.headers).json()
        seen += [r["id"] for r in page["data"]]
        cursor = page["nextCursor"]
        if cursor is None:
            break
    assert seen == [r.id for r in created]
    assert client.get("/api/wellbeing", params={"cursor": "bm9wZQ"}, headers=member.headers).status_code == 400
