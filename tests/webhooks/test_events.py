"""Each change a consultant can subscribe to puts its event in the outbox, in the same transaction."""

from __future__ import annotations

import datetime as dt
import io
import json

from sqlalchemy import select

from kindling.kindness import acts as kindness
from kindling.outbox.models import WebhookEvent
from kindling.themes import generate_theme
from kindling.volunteering.models import CheckIn
from tests.factories.principals import principal

URL = "http://127.0.0.1:9/hooks"


def events(db, consultant, type_: str) -> list[dict]:
    rows = db.scalars(
        select(WebhookEvent)
        .where(WebhookEvent.consultant_id == consultant.user.id, WebhookEvent.type == type_)
        .order_by(WebhookEvent.created_at)
    )
    return [json.loads(row.body)["data"] for row in rows]


def test_invitation_sent_once_and_each_bulk_row(client, db, make):
    consultant, first, second = make.consultant(), make.admin(), make.admin()
    make.endpoint(consultant, URL)
    for _ in range(2):  # sending again returns the open invitation: no second event
        sent = client.post(
            "/api/invitations/send", json={"organizationId": first.organization_id}, headers=consultant.headers
        )
        assert sent.status_code == 200
    csv = f"organizationId,message\n{second.organization_id},hello\n".encode()
    bulk = client.post(
        "/api/bulk/invite", files={"file": ("c.csv", io.BytesIO(csv), "text/csv")}, headers=consultant.headers
    )
    assert bulk.json()["invited"] == 1
    invited = events(db, consultant, "client.invited")
    assert [(e["organizationId"], e["source"]) for e in invited] == [
        (first.organization_id, "single"),
        (second.organization_id, "bulk"),
    ]
    assert invited[0]["invitationId"] == sent.json()["data"]["id"] and invited[1]["message"] == "hello"


def test_accepted_cancelled_and_ended(client, db, make):
    consultant, admin, other = make.consultant(), make.admin(), make.admin()
    make.endpoint(consultant, URL)
    invitation = make.invitation(consultant, admin)
    accepted = client.post("/api/invitations/accept", json={"invitationId": invitation.id}, headers=admin.headers)
    assert accepted.status_code == 200
    (event,) = events(db, consultant, "client.accepted")
    assert event["relationshipId"] == accepted.json()["data"]["id"] and event["organizationId"] == admin.organization_id

    withdrawn = make.invitation(consultant, other)
    client.post("/api/invitations/cancel", json={"invitationId": withdrawn.id}, headers=consultant.headers)
    client.delete(f"/api/consultants/{consultant.user.id}", headers=admin.headers)
    cancelled = events(db, consultant, "client.cancelled")
    assert [(e["reason"], e["endedBy"], e["organizationId"]) for e in cancelled] == [
        ("invitation_cancelled", "consultant", other.organization_id),
        ("relationship_ended", "organization", admin.organization_id),
    ]


def test_nothing_is_written_without_a_subscription(client, db, make):
    consultant, admin = make.consultant(), make.admin()
    make.endpoint(consultant, URL, events=("theme.updated",))
    client.post("/api/invitations/send", json={"organizationId": admin.organization_id}, headers=consultant.headers)
    assert events(db, consultant, "client.invited") == []


def record_acts(db, runtime, account, count: int) -> None:
    caller = principal(account)
    for n in range(count):
        kindness.create_act(
            db,
            runtime.cache,
            caller=caller,
            description=f"act {n}",
            category="community",
            verification_level=3,
            recipient_id=f"outsider-{n}",
        )


def test_a_client_crossing_100_acts_is_a_milestone_once(db, make, runtime):
    consultant, admin = make.consultant(), make.admin()
    make.client(consultant, admin)
    make.endpoint(consultant, URL)
    record_acts(db, runtime, admin, 101)
    (milestone,) = events(db, consultant, "portfolio.milestone")
    assert (milestone["metric"], milestone["threshold"], milestone["value"]) == ("kindness_acts", 100, 100)


def test_a_create_through_the_api_tells_the_milestone_after_its_commit_or_the_next_one_does(
    client, db, make, runtime, monkeypatch
):
    """A create that commits itself (docs/decisions.md §1) tells a milestone once it has
    committed: the first create to find a threshold reached and not on record tells it, so one
    whose process stopped in between leaves it to the next."""
    consultant, admin = make.consultant(), make.admin()
    make.client(consultant, admin)
    make.endpoint(consultant, URL)
    member = make.member(admin)
    record_acts(db, runtime, admin, 98)
    act = {"description": "Covered a shift", "category": "community", "verificationLevel": 1}
    assert client.post("/api/kindness", json={**act, "recipientId": "x-1"}, headers=member.headers).status_code == 201
    assert events(db, consultant, "portfolio.milestone") == []
    # The 100th act's process stops after its commit, before it tells the milestone.
    with monkeypatch.context() as stopped:
        stopped.setattr(kindness.milestones, "record_milestones", lambda *args, **kwargs: [])
        created = client.post("/api/kindness", json={**act, "recipientId": "x-2"}, headers=member.headers)
    assert created.status_code == 201 and events(db, consultant, "portfolio.milestone") == []
    for recipient in ("x-3", "x-4"):
        assert (
            client.post("/api/kindness", json={**act, "recipientId": recipient}, headers=member.headers).status_code
            == 201
        )
    (milestone,) = events(db, consultant, "portfolio.milestone")
    assert (milestone["metric"], milestone["threshold"], milestone["value"]) == ("kindness_acts", 100, 101)


def test_verified_volunteer_hours_crossing_100_is_a_milestone(db, make):
    consultant, admin = make.consultant(), make.admin()
    make.client(consultant, admin)
    make.endpoint(consultant, URL)
    start = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=10)
    # Ten-hour opportunities, each volunteered from start to end: the tenth reaches 100 hours.
    for n in range(10):
        member = make.member(admin)
        place = make.opportunity(admin, starts_at=start, ends_at=start + dt.timedelta(hours=10))
        make.volunteered(member, place)
        assert len(events(db, consultant, "portfolio.milestone")) == (1 if n == 9 else 0)
    assert db.scalar(select(CheckIn).limit(1)).verified
    (milestone,) = events(db, consultant, "portfolio.milestone")
    assert (milestone["metric"], milestone["threshold"]) == ("volunteer_hours", 100)


def test_a_saved_theme_is_announced_to_every_consultant_of_the_organization(client, db, make):
    saver, other, outsider, admin = make.consultant(), make.consultant(), make.consultant(), make.admin()
    for consultant in (saver, other):
        make.client(consultant, admin)
    for consultant in (saver, other, outsider):
        make.endpoint(consultant, URL)
    theme = generate_theme("#3366cc")
    response = client.post(
        "/api/theme/save", json={"organizationId": admin.organization_id, "theme": theme}, headers=saver.headers
    )
    assert response.status_code == 200
    for consultant in (saver, other):
        (event,) = events(db, consultant, "theme.updated")
        assert event["organizationId"] == admin.organization_id and event["theme"] == theme
    assert events(db, outsider, "theme.updated") == []
