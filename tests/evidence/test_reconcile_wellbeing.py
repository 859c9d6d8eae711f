"""Verify compares every figure of a published wellbeing week with its `wellbeing.published` event."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest
from sqlalchemy import select

from kindling.platform.base import utcnow
from kindling.platform.periods import week_of
from kindling.wellbeing.models import WellbeingWeek
from tests.helpers.evidence import only_mismatch, refused, verify


@dataclasses.dataclass
class Published:
    admin: object
    monday: str  # the published week's id: its Monday
    week: WellbeingWeek


@pytest.fixture
def published(client, make, db) -> Published:
    """Five people's answers in the last closed week, published by the first read, and answers in the open week."""
    admin = make.admin()
    for n, person in enumerate([make.member(admin) for _ in range(5)]):
        make.response(person, mood=1 + n % 5, stress=3, created_at=utcnow() - dt.timedelta(weeks=1))
        make.response(person, mood=5, stress=1)
    read = client.get("/api/wellbeing", params={"scope": "organization", "period": "week"}, headers=admin.headers)
    assert read.json()["suppressed"] is False
    monday = week_of(utcnow() - dt.timedelta(weeks=1))
    week = db.scalars(
        select(WellbeingWeek).where(
            WellbeingWeek.organization_id == admin.organization_id, WellbeingWeek.week_start == monday
        )
    ).one()
    return Published(admin, monday.isoformat(), week)


def test_a_published_week_and_the_open_one_are_consistent(client, published):
    result = verify(client, published.admin)
    assert (result["intact"], result["consistent"], result["mismatchCount"]) == (True, True, 0)


def test_a_published_mood_edited_is_refused_until_it_is_undone(client, db, published, tamper):
    admin, mood = published.admin, published.week.mood_average
    edited = 4.9 if mood != 4.9 else 2.55
    tamper(
        "UPDATE wellbeing_weeks SET mood_average = :mood WHERE organization_id = :org AND revision > 0",
        mood=edited,
        org=admin.organization_id,
    )
    assert only_mismatch(client, admin) == {
        "subject": {"kind": "wellbeing_week", "id": published.monday},
        "field": "averages.mood",
        "log": mood,
        "table": edited,
    }
    refused(client, admin)

    tamper(
        "UPDATE wellbeing_weeks SET mood_average = :mood WHERE organization_id = :org AND revision > 0",
        mood=mood,
        org=admin.organization_id,
    )
    assert verify(client, admin)["consistent"] is True
    report = client.get("/api/compliance/un-sdg", params={"period": "week"}, headers=admin.headers)
    assert report.status_code == 200
    assert {i["code"]: i["value"] for i in report.json()["data"]["indicators"]}["3.4"] == mood


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ("stress_average = 1.01", "averages.stress"),
        ("respondents = respondents + 20", "respondents"),
        ("responses = responses + 20", "responses"),
        ("energy_average = 4.5, energy_respondents = 5", "averages.energy"),
        ("positive = 5, neutral = 0, negative = 0", "sentiment.positive"),
        ("revision = 2", "revision"),
        ("epsilon = 0.1", "privacy.epsilon"),
        ("epsilon_spent = 0.5", "privacy.epsilonSpent"),
    ],
)
def test_every_published_figure_is_compared(client, published, tamper, change, field):
    tamper(
        f"UPDATE wellbeing_weeks SET {change} WHERE organization_id = :org AND revision > 0",
        org=published.admin.organization_id,
    )
    mismatch = only_mismatch(client, published.admin)
    assert (mismatch["subject"], mismatch["field"]) == ({"kind": "wellbeing_week", "id": published.monday}, field)
    refused(client, published.admin)


def test_a_published_week_hidden_or_forged_is_a_mismatch(client, db, published, tamper):
    organization_id = published.admin.organization_id
    closed = dt.date.fromisoformat(published.monday)
    tamper(
        "UPDATE wellbeing_weeks SET revision = 0 WHERE organization_id = :org AND week_start = :monday",
        org=organization_id,
        monday=closed,
    )
    hidden = only_mismatch(client, published.admin)
    assert (hidden["subject"]["id"], hidden["field"], hidden["table"]) == (published.monday, "record", None)
    assert hidden["log"]["averages.mood"] == published.week.mood_average
    tamper(
        "UPDATE wellbeing_weeks SET revision = 1 WHERE organization_id = :org AND week_start = :monday",
        org=organization_id,
        monday=closed,
    )
    assert verify(client, published.admin)["consistent"] is True

    # A week two weeks back, published with no event.
    forged = closed - dt.timedelta(weeks=1)
    tamper(
        "INSERT INTO wellbeing_weeks (organization_id, week_start, revision, respondents, responses, mood_average, "
        "stress_average, epsilon, epsilon_spent) VALUES (:org, :monday, 1, 50, 60, 4.9, 1.2, 1.0, 1.0)",
        org=organization_id,
        monday=forged,
    )
    mismatch = only_mismatch(client, published.admin)
    assert (mismatch["subject"], mismatch["field"], mismatch["log"]) == (
        {"kind": "wellbeing_week", "id": forged.isoformat()},
        "record",
        None,
    )
    assert mismatch["table"]["averages.mood"] == 4.9
    refused(client, published.admin)
