"""Hours are the time spent: from check-in to check-out, within the opportunity's window and at most 12."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest

from kindling.platform.base import utcnow
from kindling.volunteering import service as volunteering
from tests.factories.volunteering import CENTRE, north_of
from tests.helpers.evidence import events_of
from tests.helpers.volunteering import check_in


def test_one_check_in_on_the_last_day_of_a_fourteen_day_opportunity_counts_the_time_spent(client, make):
    """It counted 336 hours, the opportunity's length."""
    admin = make.admin()
    member = make.member(admin)
    now = utcnow()
    opportunity = make.opportunity(
        admin, starts_at=now - dt.timedelta(days=13, hours=22), ends_at=now + dt.timedelta(hours=2)
    )
    checked_in = check_in(client, member, opportunity)
    assert checked_in.status_code == 201 and checked_in.json()["hours"] == 0
    out = client.post(f"/api/volunteer/{opportunity.id}/check-out", headers=member.headers)
    assert out.status_code == 200, out.text
    assert out.json()["data"]["hours"] == 0 and out.json()["data"]["checkedOutAt"] is not None


def test_hours_run_from_check_in_to_check_out_within_the_window_and_at_most_twelve(db, make):
    admin = make.admin()
    start = utcnow() - dt.timedelta(days=3)
    cases = [
        # (opportunity length, check-in after start, check-out after start, hours)
        (
            dt.timedelta(hours=4),
            dt.timedelta(minutes=-30),
            dt.timedelta(hours=2, minutes=30),
            2.5,
        ),  # early: from the start
        (dt.timedelta(hours=4), dt.timedelta(hours=1), dt.timedelta(hours=6), 3.0),  # late: until the end
        (dt.timedelta(days=14), dt.timedelta(hours=1), dt.timedelta(days=2), 12.0),  # at most 12
        (dt.timedelta(hours=4), dt.timedelta(0), dt.timedelta(minutes=20), 0.33),  # to 2 decimals
    ]
    for length, check_in_at, check_out_at, hours in cases:
        member = make.member(admin)
        opportunity = make.opportunity(admin, starts_at=start, ends_at=start + length)
        make.check_in(member, opportunity, now=start + check_in_at)
        assert make.check_out(member, opportunity, now=start + check_out_at).hours == hours


def test_check_out_is_once_and_only_for_ones_own_check_in(client, make):
    admin = make.admin()
    member = make.member(admin)
    opportunity = make.opportunity(admin)
    path = f"/api/volunteer/{opportunity.id}/check-out"
    # The opportunity exists, so not 404: that is for an opportunity there is not.
    before = client.post(path, headers=member.headers)
    assert before.status_code == 409 and before.json()["code"] == "not_checked_in"
    assert client.post(f"/api/volunteer/{uuid.uuid4()}/check-out", headers=member.headers).status_code == 404
    make.check_in(member, opportunity)
    assert client.post(path, headers=member.headers).status_code == 200
    again = client.post(path, headers=member.headers)
    assert again.status_code == 409 and again.json()["code"] == "already_checked_out"
    assert client.post(path, headers=make.consultant().headers).status_code == 403
    assert client.post(path).status_code == 401


def test_an_organiser_sets_the_hours_of_a_check_in_without_a_check_out(client, make):
    admin = make.admin()
    member = make.member(admin)
    opportunity = make.opportunity(admin)  # started 10 minutes ago, lasts 2 hours
    far = north_of(CENTRE, 5000)
    checked_in = check_in(client, member, opportunity, far).json()
    approve = f"/api/volunteer/{opportunity.id}/check-ins/{checked_in['id']}/approve"
    too_many = client.post(approve, json={"note": "Seen at the door", "hours": 3}, headers=admin.headers)
    assert too_many.status_code == 400 and too_many.json()["details"]["errors"][0]["field"] == "hours"
    approved = client.post(approve, json={"note": "Seen at the door", "hours": 1.25}, headers=admin.headers)
    assert approved.status_code == 200 and approved.json()["data"]["hours"] == 1.25
    refused = client.post(f"/api/volunteer/{opportunity.id}/check-out", headers=member.headers)
    assert refused.status_code == 409 and refused.json()["code"] == "hours_already_set"
    events = events_of(client, admin, subjectId=checked_in["id"])
    assert [e["type"] for e in events] == ["check_in.recorded", "check_in.approved"]
    assert events[1]["data"]["hours"] == 1.25


def test_hours_of_a_checked_out_check_in_are_not_set_on_approval(db, make):
    admin = make.admin()
    member = make.member(admin)
    opportunity = make.opportunity(admin)
    record = make.check_in(member, opportunity, north_of(CENTRE, 5000))
    make.check_out(member, opportunity)
    from kindling.errors import Conflict
    from tests.factories.principals import principal

    with pytest.raises(Conflict):
        volunteering.approve_check_in(
            db, caller=principal(admin), opportunity_id=opportunity.id, check_in_id=record.id, note="ok", hours=1
        )


def test_the_check_in_and_check_out_events_carry_the_times_window_and_hours(client, make):
    admin = make.admin()
    member = make.member(admin)
    start = utcnow() - dt.timedelta(days=2)
    opportunity = make.opportunity(admin, starts_at=start, ends_at=start + dt.timedelta(hours=3))
    record = make.check_in(member, opportunity, now=start + dt.timedelta(minutes=15))
    make.check_out(member, opportunity, now=start + dt.timedelta(hours=2, minutes=15))
    recorded, checked_out = events_of(client, admin, subjectId=record.id)
    assert recorded["type"] == "check_in.recorded"
    assert (recorded["data"]["checkedInAt"], recorded["data"]["startsAt"], recorded["data"]["endsAt"]) == (
        volunteering.evidence.timestamp(start + dt.timedelta(minutes=15)),
        volunteering.evidence.timestamp(start),
        volunteering.evidence.timestamp(start + dt.timedelta(hours=3)),
    )
    assert checked_out["type"] == "check_in.checked_out" and checked_out["data"]["hours"] == 2.0
