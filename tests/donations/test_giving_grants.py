"""Volunteer grants from verified, unclaimed check-in hours (docs/decisions.md §14)."""

from __future__ import annotations

from sqlalchemy import func, select

from kindling.donations.models import GivingClaim, GivingRequest
from kindling.evidence.models import EvidenceEvent
from tests.factories.volunteering import CENTRE, north_of
from tests.helpers import assert_envelope

RECIPIENT = {"name": "River Trust", "registrationNumber": "1100"}


def volunteer(make, admin, account, opportunities: int = 3, *, verified: bool = True) -> list:
    """`account`'s check-ins at new two-hour opportunities, verified (inside the fence) or not."""
    where = CENTRE if verified else north_of(CENTRE, 5000)
    return [make.volunteered(account, make.opportunity(admin), where) for _ in range(opportunities)]


def ask(client, account, program, hours, **fields):
    return client.post(
        "/api/giving/grants",
        json={"programId": program.id, "recipient": RECIPIENT, "hours": hours, **fields},
        headers=account.headers,
    )


def stored(db, organization_id: str) -> tuple[int, int]:
    requests = db.scalar(
        select(func.count()).select_from(GivingRequest).where(GivingRequest.organization_id == organization_id)
    )
    claims = db.scalar(
        select(func.count())
        .select_from(GivingClaim)
        .join(GivingRequest)
        .where(GivingRequest.organization_id == organization_id)
    )
    return requests, claims


def test_a_grant_claims_whole_check_ins_oldest_first_and_never_twice(client, make, db):
    admin = make.admin()
    member = make.member(admin)
    program = make.grant_program(admin, rate_per_hour=1500, minimum_hours=4)
    first, second, third = volunteer(make, admin, member)
    response = ask(client, member, program, 3)
    assert response.status_code == 201, response.text
    grant = response.json()["data"]
    assert (grant["status"], grant["amount"], grant["computedAmount"], grant["hours"], grant["ratePerHour"]) == (
        "approved",
        4500,
        4500,
        3,
        1500,
    )
    assert grant["checkInIds"] == [first.id, second.id] and grant["donationId"] is None
    assert grant["recipient"] == RECIPIENT
    assert_envelope(ask(client, member, program, 2.5), 400, "hours_unavailable")
    again = ask(client, member, program, 2).json()["data"]
    assert again["checkInIds"] == [third.id]
    assert_envelope(ask(client, member, program, 0.5), 400, "hours_unavailable")
    assert stored(db, admin.organization_id) == (2, 3)
    events = (
        db.execute(
            select(EvidenceEvent.data)
            .where(EvidenceEvent.organization_id == admin.organization_id, EvidenceEvent.type == "giving.requested")
            .order_by(EvidenceEvent.seq)
        )
        .scalars()
        .all()
    )
    assert (
        events[0]["checkInIds"] == [first.id, second.id]
        and events[0]["ratePerHour"] == 1500
        and events[0]["hours"] == 3
    )
    assert "donationId" not in events[0]


def test_minimum_hours_and_unverified_check_ins(client, make, db):
    admin = make.admin()
    member = make.member(admin)
    program = make.grant_program(admin, minimum_hours=5)
    volunteer(make, admin, member, 2)
    volunteer(make, admin, member, 2, verified=False)  # 4 more hours that are no evidence
    assert_envelope(ask(client, member, program, 1), 400, "below_minimum_hours")
    assert stored(db, admin.organization_id) == (0, 0)
    volunteer(make, admin, member, 1)
    assert ask(client, member, program, 6).status_code == 201


def test_the_cap_limits_a_grant_and_a_declined_grant_gives_its_hours_back(client, make, db):
    admin = make.admin()
    member = make.member(admin)
    program = make.grant_program(admin, rate_per_hour=1000, per_person_cap=2500, approval="review")
    volunteer(make, admin, member, 2)
    grant = ask(client, member, program, 4).json()["data"]
    assert (grant["status"], grant["amount"], grant["capped"]) == ("requested", 2500, True)
    assert ask(client, member, program, 1).status_code == 400  # every hour is claimed
    declined = client.post(
        f"/api/giving/requests/{grant['id']}/decision",
        json={"decision": "decline", "reason": "Duplicate"},
        headers=admin.headers,
    )
    assert declined.json()["data"]["status"] == "declined" and declined.json()["data"]["checkInIds"] == []
    regrant = ask(client, member, program, 4).json()["data"]
    assert (regrant["status"], regrant["amount"], len(regrant["checkInIds"])) == ("requested", 2500, 2)
    full = ask(client, make.member(admin), program, 1)
    assert full.status_code == 400  # no hours of their own
    other = make.member(admin)
    volunteer(make, admin, other, 1)
    assert ask(client, other, program, 2).json()["data"]["amount"] == 2000


def test_a_person_at_their_cap_gets_an_ineligible_grant_that_claims_nothing(client, make, db):
    admin = make.admin()
    member = make.member(admin)
    program = make.grant_program(admin, rate_per_hour=1000, per_person_cap=2000)
    volunteer(make, admin, member, 2)
    assert ask(client, member, program, 2).json()["data"]["amount"] == 2000
    ineligible = ask(client, member, program, 2).json()["data"]
    assert (ineligible["status"], ineligible["reason"], ineligible["amount"], ineligible["checkInIds"]) == (
        "ineligible",
        "person_cap_reached",
        0,
        [],
    )


def test_wrong_program_kind_inactive_ineligible_and_foreign_programs(client, make, db):
    admin = make.admin()
    member = make.member(admin)
    volunteer(make, admin, member, 1)
    match = make.match_program(admin)
    assert_envelope(ask(client, member, match, 1), 400, "wrong_program_kind")
    managers_only = make.grant_program(admin, eligible_roles=["manager"])
    assert_envelope(ask(client, member, managers_only, 1), 403, "not_eligible")
    inactive = make.grant_program(admin, active=False)
    assert_envelope(ask(client, member, inactive, 1), 409, "program_inactive")
    stranger = make.admin()
    foreign = make.grant_program(stranger)
    assert_envelope(ask(client, member, foreign, 1), 404)
    assert_envelope(ask(client, member, make.grant_program(admin), 0), 400)
    assert_envelope(ask(client, member, make.grant_program(admin), 1, recipient={"name": " "}), 400)
    assert stored(db, admin.organization_id) == (0, 0)
