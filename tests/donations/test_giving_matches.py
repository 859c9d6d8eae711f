"""Match requests made by the payment webhook, and how requests move (docs/decisions.md §14)."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from kindling.donations import ledger, programs
from kindling.donations.models import GivingLedger, GivingPeriod, GivingRequest
from kindling.evidence.chain import timestamp
from kindling.platform.base import utcnow
from tests.factories import donations as payments
from tests.helpers import assert_envelope
from tests.helpers.giving import gift, giving_events, requests_of, settle
from tests.helpers.webhooks import deliver_payment

pytestmark = pytest.mark.usefixtures("payment_secret")


def test_a_succeeded_donation_is_matched_once_however_often_it_is_replayed(client, make, db):
    admin = make.admin()
    member = make.member(admin)
    program = make.match_program(admin, ratio_percent=150)
    donation = make.donation(member, amount=2001)
    event = payments.payment_event("payment_intent.succeeded", donation, event_id="evt_match_once")
    for _ in range(3):
        assert deliver_payment(client, event).status_code == 200
    settle(client, donation)  # the same success under another event id
    [request] = requests_of(client, member)
    assert request["programId"] == program.id and request["donationId"] == donation.id
    assert (request["status"], request["amount"], request["computedAmount"], request["capped"]) == (
        "approved",
        3001,
        3001,
        False,
    )
    assert request["giftAmount"] == 2001 and request["ratioPercent"] == 150 and request["programVersion"] == 1
    assert request["recipient"] == {"name": "Shelter Trust", "registrationNumber": None} and request["checkInIds"] == []
    [(kind, data)] = giving_events(db, admin.organization_id)
    assert kind == "giving.requested"
    assert data == {
        "programId": program.id,
        "programVersion": 1,
        "kind": "donation_match",
        "status": "approved",
        "reason": None,
        "computedAmount": 3001,
        "amount": 3001,
        "capped": False,
        "currency": "USD",
        "createdAt": timestamp(db.get(GivingRequest, request["id"]).created_at),
        "donationId": donation.id,
        "ratioPercent": 150,
        "giftAmount": 2001,
    }


def test_pending_and_failed_donations_are_not_matched(client, make):
    admin = make.admin()
    member = make.member(admin)
    make.match_program(admin)
    make.donation(member)
    settle(client, make.donation(member), "payment_intent.payment_failed")
    assert requests_of(client, member) == []


def test_the_match_is_capped_by_the_gift_maximum_the_persons_cap_and_the_budget(client, make, db):
    admin = make.admin()
    alice, bob = make.member(admin), make.member(admin)
    make.match_program(admin, ratio_percent=200, maximum_match_per_gift=5000, per_person_cap=7000, budget=9000)
    gift(client, make, alice, 4000)  # 8000 -> 5000 by the per-gift maximum
    gift(client, make, alice, 1000)  # 2000 -> 2000 left of alice's cap
    gift(client, make, alice, 1000)  # alice at her cap
    gift(client, make, bob, 1500)  # 3000 -> 2000 left of the budget
    gift(client, make, bob, 1500)  # budget gone
    alice_requests = sorted(requests_of(client, alice), key=lambda r: r["createdAt"])
    bob_requests = sorted(requests_of(client, bob), key=lambda r: r["createdAt"])
    shapes = [
        (r["status"], r["reason"], r["amount"], r["computedAmount"], r["capped"]) for r in alice_requests + bob_requests
    ]
    assert shapes == [
        ("approved", None, 5000, 8000, True),
        ("approved", None, 2000, 2000, False),
        ("ineligible", "person_cap_reached", 0, 2000, False),
        ("approved", None, 2000, 3000, True),
        ("ineligible", "budget_exhausted", 0, 3000, False),
    ]
    assert reserved_by_person(db, alice, bob) == {alice.user.id: 7000, bob.user.id: 2000}


def test_a_gift_the_persons_cap_leaves_room_for_in_part_is_matched_in_part(client, make, db):
    admin = make.admin()
    alice = make.member(admin)
    make.match_program(admin, ratio_percent=100, per_person_cap=3000)
    gift(client, make, alice, 2000)
    gift(client, make, alice, 2000)  # 1000 left of her cap
    gift(client, make, alice, 2000)
    shapes = [
        (r["status"], r["amount"], r["capped"])
        for r in sorted(requests_of(client, alice), key=lambda r: r["createdAt"])
    ]
    assert shapes == [("approved", 2000, False), ("approved", 1000, True), ("ineligible", 0, False)]
    assert reserved_by_person(db, alice) == {alice.user.id: 3000}


def test_the_ledger_reserves_within_the_cap_and_budget_and_nothing_of_a_reached_cap(make, db):
    admin = make.admin()
    alice = make.member(admin)
    program = make.match_program(admin, per_person_cap=1000, budget=1500)
    period = programs.period_start(program, utcnow())

    def reserve(wanted: int) -> tuple[int, str | None]:
        return ledger.reserve(db, program=program, period=period, user_id=alice.user.id, wanted=wanted)

    assert reserve(0) == (0, None)
    assert reserve(600) == (600, None)
    assert reserve(600) == (400, None)  # what is left of the cap
    assert reserve(0) == (0, "person_cap_reached")
    assert reserve(1) == (0, "person_cap_reached")
    assert reserved_by_person(db, alice) == {alice.user.id: 1000}


def reserved_by_person(db, *accounts) -> dict[str, int]:
    """What the ledger reserves for each person, read afresh."""
    db.expire_all()
    people = [account.user.id for account in accounts]
    return dict(
        db.execute(select(GivingLedger.user_id, GivingLedger.reserved).where(GivingLedger.user_id.in_(people))).all()
    )


def test_below_minimum_and_not_eligible_say_why(client, make, db):
    admin = make.admin()
    member, manager = make.member(admin), make.manager(admin)
    make.match_program(admin, minimum_gift=1000, eligible_roles=["member"])
    gift(client, make, member, 999)
    gift(client, make, manager, 5000)
    assert [(r["status"], r["reason"], r["amount"]) for r in requests_of(client, member)] == [
        ("ineligible", "below_minimum", 0)
    ]
    managers = [r for r in requests_of(client, manager) if r["userId"] == manager.user.id]
    assert [(r["status"], r["reason"]) for r in managers] == [("ineligible", "not_eligible")]


def test_an_inactive_program_makes_no_requests_and_a_change_applies_to_later_ones(client, make, db):
    admin = make.admin()
    member = make.member(admin)
    program = make.match_program(admin)
    gift(client, make, member, 1000)
    response = client.patch(f"/api/giving/programs/{program.id}", json={"ratioPercent": 50}, headers=admin.headers)
    assert response.json()["data"]["programVersion"] == 2
    gift(client, make, member, 1000)
    client.patch(f"/api/giving/programs/{program.id}", json={"active": False}, headers=admin.headers)
    gift(client, make, member, 1000)
    shapes = sorted((r["programVersion"], r["amount"]) for r in requests_of(client, member))
    assert shapes == [(1, 1000), (2, 500)]


def reserved(db, program) -> tuple[int, int]:
    db.expire_all()
    person = sum(db.scalars(select(GivingLedger.reserved).where(GivingLedger.program_id == program.id)))
    budget = sum(db.scalars(select(GivingPeriod.reserved).where(GivingPeriod.program_id == program.id)))
    return person, budget


def test_review_decisions_payout_and_refunds(client, make, db):
    admin = make.admin()
    member, manager = make.member(admin), make.manager(admin)
    program = make.match_program(admin, approval="review", per_person_cap=10_000, budget=10_000)
    first, second, third = (gift(client, make, member, 2000) for _ in range(3))
    by_donation = {r["donationId"]: r for r in requests_of(client, member)}
    ids = [by_donation[d.id]["id"] for d in (first, second, third)]
    assert {r["status"] for r in by_donation.values()} == {"requested"}
    assert reserved(db, program) == (6000, 6000)

    decision = f"/api/giving/requests/{ids[0]}/decision"
    assert_envelope(client.post(decision, json={"decision": "approve"}, headers=member.headers), 403)
    assert_envelope(
        client.post(decision, json={"decision": "decline"}, headers=manager.headers), 400
    )  # a decline needs its reason
    approved = client.post(
        decision, json={"decision": "approve", "note": "Registered charity"}, headers=manager.headers
    )
    assert approved.status_code == 200, approved.text
    assert approved.json()["data"]["decision"]["decidedBy"] == manager.user.id
    assert_envelope(
        client.post(decision, json={"decision": "decline", "reason": "late"}, headers=manager.headers),
        409,
        "invalid_transition",
    )
    declined = client.post(
        f"/api/giving/requests/{ids[1]}/decision",
        json={"decision": "decline", "reason": "Not a charity"},
        headers=admin.headers,
    )
    assert declined.json()["data"]["status"] == "declined"
    assert reserved(db, program) == (4000, 4000)

    payout = f"/api/giving/requests/{ids[0]}/payout"
    assert_envelope(client.post(payout, json={"reference": "BACS-1"}, headers=manager.headers), 403)
    assert_envelope(
        client.post(f"/api/giving/requests/{ids[2]}/payout", json={"reference": "BACS-2"}, headers=admin.headers), 409
    )
    paid = client.post(payout, json={"reference": " BACS-1 "}, headers=admin.headers).json()["data"]
    assert (
        paid["status"] == "paid"
        and paid["payout"]["reference"] == "BACS-1"
        and paid["payout"]["paidBy"] == admin.user.id
    )
    assert_envelope(client.post(payout, json={"reference": "BACS-1"}, headers=admin.headers), 409)

    settle(client, first, "charge.refunded")  # paid: reversed with a clawback, nothing released
    settle(client, third, "charge.refunded")  # requested: reversed, released
    settle(client, second, "charge.refunded")  # declined: stays declined
    after = {r["id"]: r for r in requests_of(client, member)}
    assert (after[ids[0]]["status"], after[ids[0]]["clawback"]) == ("reversed", True)
    assert (after[ids[2]]["status"], after[ids[2]]["clawback"]) == ("reversed", False)
    assert after[ids[1]]["status"] == "declined"
    assert reserved(db, program) == (2000, 2000)
    types = [kind for kind, _ in giving_events(db, admin.organization_id)]
    assert types == ["giving.requested"] * 3 + [
        "giving.decided",
        "giving.decided",
        "giving.paid",
        "giving.reversed",
        "giving.reversed",
    ]
    assert_envelope(
        client.post(f"/api/giving/requests/{ids[2]}/decision", json={"decision": "approve"}, headers=admin.headers), 409
    )


def test_nobody_decides_or_pays_their_own_request(client, make, db):
    admin = make.admin()
    other_admin = make.member(admin)
    other_admin.user.role = "admin"
    db.flush()
    make.match_program(admin, approval="review")
    gift(client, make, admin, 1000)
    [request] = requests_of(client, admin)
    url = f"/api/giving/requests/{request['id']}"
    assert_envelope(
        client.post(url + "/decision", json={"decision": "approve"}, headers=admin.headers), 403, "conflict_of_interest"
    )
    assert client.post(url + "/decision", json={"decision": "approve"}, headers=other_admin.headers).status_code == 200
    assert_envelope(
        client.post(url + "/payout", json={"reference": "R-1"}, headers=admin.headers), 403, "conflict_of_interest"
    )
    assert client.get(url, headers=admin.headers).json()["data"]["status"] == "approved"


def test_who_sees_which_requests(client, make):
    admin = make.admin()
    alice, bob, manager = make.member(admin), make.member(admin), make.manager(admin)
    program = make.match_program(admin)
    gift(client, make, alice, 1000)
    gift(client, make, bob, 1000)
    [alices] = requests_of(client, alice)
    assert len(requests_of(client, manager)) == 2 and len(requests_of(client, admin, programId=program.id)) == 2
    assert requests_of(client, admin, status="paid") == []
    assert_envelope(client.get(f"/api/giving/requests/{alices['id']}", headers=bob.headers), 404)
    stranger = make.admin()
    assert_envelope(client.get(f"/api/giving/requests/{alices['id']}", headers=stranger.headers), 404)
    assert_envelope(
        client.post(f"/api/giving/requests/{alices['id']}/payout", json={"reference": "X"}, headers=stranger.headers),
        404,
    )
    assert requests_of(client, stranger) == []
    page = client.get("/api/giving/requests", params={"limit": 1}, headers=admin.headers).json()
    rest = client.get(
        "/api/giving/requests", params={"limit": 1, "cursor": page["nextCursor"]}, headers=admin.headers
    ).json()
    assert {page["data"][0]["id"], rest["data"][0]["id"]} == {r["id"] for r in requests_of(client, admin)} and rest[
        "nextCursor"
    ] is None


def test_a_second_program_matches_the_same_gift_independently(client, make, db):
    admin = make.admin()
    member = make.member(admin)
    make.match_program(admin)
    make.match_program(admin, ratio_percent=50)
    gift(client, make, member, 1000)
    assert sorted(r["amount"] for r in requests_of(client, member)) == [500, 1000]
    assert db.scalar(select(GivingRequest.id).where(GivingRequest.amount == 500)) is not None


def test_a_program_limited_to_departments_matches_the_directorys_departments(client, make, db):
    admin = make.admin()
    engineer, seller, unplaced = make.member(admin), make.member(admin), make.member(admin)
    engineer.user.department, seller.user.department = "Engineering", "Sales"
    db.flush()
    make.match_program(admin, eligible_departments=["Engineering"])
    for person in (engineer, seller, unplaced):
        gift(client, make, person, 1000)
    by_person = {r["userId"]: (r["status"], r["reason"]) for r in requests_of(client, admin)}
    assert by_person == {
        engineer.user.id: ("approved", None),
        seller.user.id: ("ineligible", "not_eligible"),
        unplaced.user.id: ("ineligible", "not_eligible"),
    }
    summary = client.get("/api/giving/summary", headers=admin.headers).json()["data"]["programs"][0]
    assert summary["participation"] == {"people": 1, "eligiblePeople": 1, "percent": 100.0}


def test_the_program_filter_lists_one_programs_requests(client, make):
    admin = make.admin()
    member = make.member(admin)
    full, half = make.match_program(admin), make.match_program(admin, ratio_percent=50)
    gift(client, make, member, 1000)
    assert sorted(r["programId"] for r in requests_of(client, admin)) == sorted([full.id, half.id])
    for account in (admin, member):
        assert [(r["programId"], r["amount"]) for r in requests_of(client, account, programId=half.id)] == [
            (half.id, 500)
        ]
    # The id in any spelling of the UUID, as everywhere; another organization's program finds nothing.
    assert [r["programId"] for r in requests_of(client, admin, programId=full.id.upper())] == [full.id]
    assert requests_of(client, admin, programId=make.match_program(make.admin()).id) == []
    assert requests_of(client, admin, programId=half.id, status="paid") == []
