"""Volunteer opportunities and GPS-verified check-ins (docs/decisions.md §7)."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import func, select

from kindling.errors import Conflict
from kindling.platform.base import utcnow
from kindling.volunteering import service as volunteering
from kindling.volunteering.models import CheckIn
from tests.factories.principals import principal
from tests.factories.volunteering import CENTRE, north_of

CHECK_IN_FIELDS = {
    "id",
    "opportunityId",
    "userId",
    "checkedInAt",
    "checkedOutAt",
    "distanceMeters",
    "verified",
    "evidence",
    "hours",
}


def iso(moment: dt.datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def opportunity_body(**fields) -> dict:
    starts_at = utcnow() + dt.timedelta(days=1)
    body = {
        "title": "Food bank shift",
        "description": "Sorting donations",
        "startsAt": iso(starts_at),
        "endsAt": iso(starts_at + dt.timedelta(hours=3)),
        "location": {"latitude": 51.5007, "longitude": -0.1246},
    }
    body.update(fields)
    return body


def at(point: tuple[float, float], **fields) -> dict:
    return {"latitude": point[0], "longitude": point[1], **fields}


def test_admin_creates_opportunity(client, make):
    admin = make.admin()
    response = client.post("/api/volunteer", json=opportunity_body(title="  Food bank shift "), headers=admin.headers)
    assert response.status_code == 201
    data = response.json()["data"]
    assert data["title"] == "Food bank shift"
    assert data["organizationId"] == admin.organization_id
    assert data["createdBy"] == admin.user.id
    assert data["location"] == {"latitude": 51.5007, "longitude": -0.1246, "radiusMeters": 200}
    assert data["hours"] == 3
    fetched = client.get(f"/api/volunteer/{data['id']}", headers=admin.headers).json()["data"]
    assert fetched["ownCheckIn"] is None
    assert fetched["checkIns"] == {"total": 0, "verified": 0}


def test_only_admins_and_managers_create(client, make):
    admin = make.admin()
    manager = make.manager(admin)
    created = client.post("/api/volunteer", json=opportunity_body(), headers=manager.headers)
    assert created.status_code == 201
    assert created.json()["data"]["createdBy"] == manager.user.id
    for account in (make.member(admin), make.consultant()):
        assert client.post("/api/volunteer", json=opportunity_body(), headers=account.headers).status_code == 403
    assert client.post("/api/volunteer", json=opportunity_body()).status_code == 401
    listed = client.get("/api/volunteer", headers=admin.headers).json()["data"]
    assert [o["id"] for o in listed] == [created.json()["data"]["id"]]


def test_opportunity_rules(client, make):
    admin = make.admin()
    start = utcnow() + dt.timedelta(days=1)
    cases = [
        {"endsAt": iso(start - dt.timedelta(hours=1)), "startsAt": iso(start)},  # ends before start
        {"endsAt": iso(start), "startsAt": iso(start)},  # zero length
        {"startsAt": iso(start), "endsAt": iso(start + dt.timedelta(days=14, seconds=1))},
        {"startsAt": "1969-12-31T23:00:00Z", "endsAt": "1970-01-01T01:00:00Z"},
        {"startsAt": "tomorrow"},
        {"startsAt": "2030-01-01T10:00:00"},  # no offset
        {"title": ""},
        {"title": "   "},
        {"title": "x" * 201},
        {"description": "x" * 2001},
        {"location": {"latitude": 90.5, "longitude": 0}},
        {"location": {"latitude": 0, "longitude": -180.5}},
        {"location": {"latitude": 0, "longitude": 0, "radiusMeters": 9}},
        {"location": {"latitude": 0, "longitude": 0, "radiusMeters": 5001}},
        {"location": {"latitude": 0}},
        {"location": {"latitude": 0, "longitude": 0, "altitude": 3}},
        {"organizationId": admin.organization_id},
    ]
    for fields in cases:
        response = client.post("/api/volunteer", json=opportunity_body(**fields), headers=admin.headers)
        assert response.status_code == 400, fields
        assert response.json()["error"]
    assert client.get("/api/volunteer", headers=admin.headers).json()["data"] == []


def test_fourteen_days_exactly_is_allowed(client, make):
    admin = make.admin()
    start = utcnow() + dt.timedelta(days=1)
    body = opportunity_body(
        startsAt=iso(start),
        endsAt=iso(start + dt.timedelta(days=14)),
        location={"latitude": 0, "longitude": 0, "radiusMeters": 5000},
    )
    response = client.post("/api/volunteer", json=body, headers=admin.headers)
    assert response.status_code == 201
    assert response.json()["data"]["hours"] == 336


def test_check_in_inside_the_fence_is_verified(client, make, db):
    admin = make.admin()
    member = make.member(admin)
    opportunity = make.opportunity(admin)
    response = client.post(
        f"/api/volunteer/{opportunity.id}/check-in", json=at(north_of(CENTRE, 50)), headers=member.headers
    )
    assert response.status_code == 201
    body = response.json()
    assert set(body) == CHECK_IN_FIELDS
    assert body["opportunityId"] == opportunity.id and body["userId"] == member.user.id
    assert body["verified"] is True
    assert body["distanceMeters"] == pytest.approx(50, abs=0.01)
    assert body["hours"] == 0 and body["checkedOutAt"] is None
    detail = client.get(f"/api/volunteer/{opportunity.id}", headers=member.headers).json()["data"]
    assert detail["ownCheckIn"] == body
    assert "checkIns" not in detail


@pytest.mark.parametrize(
    ("accuracy", "inside", "outside"),
    [
        (None, 199.9, 200.1),  # the radius itself
        (0, 199.9, 200.1),
        (40, 239.9, 240.1),  # widened by the accuracy
        (100, 299.9, 300.1),
        (5000, 299.9, 300.1),  # but never by more than 100 m
    ],
)
def test_geofence_edge(client, make, db, accuracy, inside, outside):
    admin = make.admin()
    opportunity = make.opportunity(admin, radius_meters=200)
    extra = {} if accuracy is None else {"accuracyMeters": accuracy}
    results = {}
    for meters in (inside, outside):
        member = make.member(admin)
        response = client.post(
            f"/api/volunteer/{opportunity.id}/check-in",
            json=at(north_of(CENTRE, meters), **extra),
            headers=member.headers,
        )
        assert response.status_code == 201
        results[meters] = response.json()
    assert results[inside]["verified"] is True
    assert results[outside]["verified"] is False
    assert results[outside]["distanceMeters"] == pytest.approx(outside, abs=0.01)
    counts = client.get(f"/api/volunteer/{opportunity.id}", headers=admin.headers).json()["data"]["checkIns"]
    # The unverified check-in is kept; it just is not evidence.
    assert counts == {"total": 2, "verified": 1}


def test_unverified_check_in_far_away_is_kept(client, make, db):
    admin = make.admin()
    opportunity = make.opportunity(admin)
    response = client.post(
        f"/api/volunteer/{opportunity.id}/check-in",
        json={"latitude": 48.8566, "longitude": 2.3522},
        headers=admin.headers,
    )
    assert response.status_code == 201
    assert response.json()["verified"] is False
    assert response.json()["distanceMeters"] > 300_000
    assert db.scalar(select(func.count()).select_from(CheckIn).where(CheckIn.opportunity_id == opportunity.id)) == 1


def test_second_check_in_conflicts_and_keeps_the_first(client, make, db):
    admin = make.admin()
    member = make.member(admin)
    opportunity = make.opportunity(admin)
    url = f"/api/volunteer/{opportunity.id}/check-in"
    first = client.post(url, json=at(CENTRE), headers=member.headers)
    assert first.status_code == 201
    second = client.post(url, json=at(north_of(CENTRE, 5000)), headers=member.headers)
    assert second.status_code == 409
    assert second.json()["code"] == "already_checked_in"
    own = client.get(f"/api/volunteer/{opportunity.id}", headers=member.headers).json()["data"]["ownCheckIn"]
    assert own == first.json()


def test_check_in_window_over_http(client, make, db):
    admin = make.admin()
    member = make.member(admin)
    now = utcnow()
    cases = [
        (now + dt.timedelta(minutes=29), None, 201),  # window opened a minute ago
        (now + dt.timedelta(minutes=31), None, 409),  # opens in a minute
        (now - dt.timedelta(hours=2), now + dt.timedelta(minutes=1), 201),  # about to close
        (now - dt.timedelta(hours=2), now - dt.timedelta(seconds=1), 409),  # closed a second ago
    ]
    for starts_at, ends_at, status in cases:
        opportunity = make.opportunity(admin, starts_at=starts_at, ends_at=ends_at)
        response = client.post(f"/api/volunteer/{opportunity.id}/check-in", json=at(CENTRE), headers=member.headers)
        assert response.status_code == status, (starts_at, ends_at)
        if status == 409:
            assert response.json()["code"] == "outside_check_in_window"
            assert set(response.json()["details"]) == {"opensAt", "closesAt"}


def test_check_in_window_edges_are_inclusive(make, db):
    admin = make.admin()
    start = dt.datetime(2030, 5, 1, 9, 0, tzinfo=dt.UTC)
    end = start + dt.timedelta(hours=4)
    opportunity = make.opportunity(admin, starts_at=start, ends_at=end)
    tick = dt.timedelta(microseconds=1)
    opens = start - dt.timedelta(minutes=30)
    for now, allowed in [(opens - tick, False), (opens, True), (end, True), (end + tick, False)]:
        member = principal(make.member(admin))
        latitude, longitude = CENTRE
        if allowed:
            record = volunteering.check_in(
                db, caller=member, opportunity_id=opportunity.id, latitude=latitude, longitude=longitude, now=now
            )
            assert record.checked_in_at == now
        else:
            with pytest.raises(Conflict):
                volunteering.check_in(
                    db, caller=member, opportunity_id=opportunity.id, latitude=latitude, longitude=longitude, now=now
                )


def test_haversine():
    # One degree of latitude on the mean-radius sphere is exactly R·π/180.
    assert volunteering.haversine_meters(0, 0, 1, 0) == pytest.approx(111_195.08, abs=0.01)
    # London to Paris, about 343.6 km.
    assert volunteering.haversine_meters(51.5074, -0.1278, 48.8566, 2.3522) == pytest.approx(343_556, rel=1e-3)
    assert volunteering.haversine_meters(10, 20, 10, 20) == 0
    # Antipodes: half the circumference, without a math domain error.
    assert volunteering.haversine_meters(0, 0, 0, 180) == pytest.approx(20_015_115, rel=1e-6)


def test_other_organizations_are_invisible(client, make, db):
    admin = make.admin()
    other_admin = make.admin()
    theirs = make.opportunity(other_admin)
    mine = make.opportunity(admin)
    assert client.get(f"/api/volunteer/{theirs.id}", headers=admin.headers).status_code == 404
    assert client.get("/api/volunteer/no-such-id", headers=admin.headers).status_code == 404
    response = client.post(f"/api/volunteer/{theirs.id}/check-in", json=at(CENTRE), headers=admin.headers)
    assert response.status_code == 404
    listed = [o["id"] for o in client.get("/api/volunteer", headers=admin.headers).json()["data"]]
    assert listed == [mine.id]


def test_consultants_are_refused(client, make, db):
    opportunity = make.opportunity(make.admin())
    consultant = make.consultant()
    assert client.get("/api/volunteer", headers=consultant.headers).status_code == 403
    assert client.get(f"/api/volunteer/{opportunity.id}", headers=consultant.headers).status_code == 403
    response = client.post(f"/api/volunteer/{opportunity.id}/check-in", json=at(CENTRE), headers=consultant.headers)
    assert response.status_code == 403


def test_check_in_body_rules(client, make, db):
    admin = make.admin()
    opportunity = make.opportunity(admin)
    url = f"/api/volunteer/{opportunity.id}/check-in"
    for body in [
        {"latitude": 91, "longitude": 0},
        {"latitude": 0, "longitude": 181},
        {"latitude": 0},
        {"latitude": 0, "longitude": 0, "accuracyMeters": -1},
        {"latitude": 0, "longitude": 0, "accuracyMeters": 10001},
        {"latitude": "0", "longitude": 0},
        {"latitude": 0, "longitude": 0, "verified": True},
    ]:
        assert client.post(url, json=body, headers=admin.headers).status_code == 400, body
    assert client.get(url.removesuffix("/check-in"), headers=admin.headers).json()["data"]["checkIns"]["total"] == 0


def test_list_is_paginated_latest_start_first(client, make, db):
    admin = make.admin()
    base = utcnow()
    created = [make.opportunity(admin, starts_at=base + dt.timedelta(days=i)) for i in range(5)]
    seen, cursor = [], None
    while True:
        query = {"limit": 2} | ({"cursor": cursor} if cursor else {})
        page = client.get("/api/volunteer", params=query, headers=admin.headers).json()
        assert len(page["data"]) <= 2
        seen += [o["id"] for o in page["data"]]
        cursor = page["nextCursor"]
        if cursor is None:
            break
    assert seen == [o.id for o in reversed(created)]
    for query in ({"limit": 0}, {"limit": 201}, {"cursor": "not-a-cursor"}):
        assert client.get("/api/volunteer", params=query, headers=admin.headers).status_code == 400, query
