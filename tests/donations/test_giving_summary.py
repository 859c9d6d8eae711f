"""The giving summary, outbound giving events, and the compliance and portfolio figures of giving (docs/decisions.md §14)."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from kindling.outbox.models import WebhookEvent
from tests.factories.volunteering import CENTRE
from tests.helpers import assert_envelope
from tests.helpers.giving import gift, requests_of

pytestmark = pytest.mark.usefixtures("payment_secret")


def test_the_summary_adds_up_a_programs_period(client, make, db):
    admin = make.admin()
    alice, bob, carol = make.member(admin), make.member(admin), make.member(admin)
    program = make.match_program(admin, approval="review", per_person_cap=3000, budget=10_000)
    gift(client, make, alice, 2000)
    gift(client, make, alice, 2000)  # 1000 of alice's cap left: capped
    gift(client, make, bob, 1000)
    gift(client, make, bob, 1000)
    by_amount = sorted(requests_of(client, admin), key=lambda r: (r["userId"] == bob.user.id, r["createdAt"]))
    alice_first, _alice_second, bob_first, bob_second = (r["id"] for r in by_amount)
    client.post(f"/api/giving/requests/{alice_first}/decision", json={"decision": "approve"}, headers=admin.headers)
    client.post(f"/api/giving/requests/{bob_first}/decision", json={"decision": "approve"}, headers=admin.headers)
    client.post(f"/api/giving/requests/{bob_first}/payout", json={"reference": "PAY-7"}, headers=admin.headers)
    client.post(
        f"/api/giving/requests/{bob_second}/decision",
        json={"decision": "decline", "reason": "Ineligible charity"},
        headers=admin.headers,
    )
    grants = make.grant_program(admin, rate_per_hour=1000, budget=None)
    make.volunteered(carol, make.opportunity(admin), CENTRE)
    grant = client.post(
        "/api/giving/grants",
        json={"programId": grants.id, "recipient": {"name": "Parks"}, "hours": 1.5},
        headers=carol.headers,
    )
    assert grant.status_code == 201, grant.text

    response = client.get("/api/giving/summary", headers=admin.headers)
    assert response.status_code == 200, response.text
    data = response.json()["data"]
    assert data["currency"] == "USD" and data["period"] is None
    match, grant_summary = data["programs"]
    assert match["programId"] == program.id and match["periodStart"].endswith("-01-01")
    assert (match["requested"], match["approved"], match["paid"], match["outstanding"]) == (1000, 3000, 1000, 2000)
    assert match["budget"] == {"total": 10_000, "used": 4000, "left": 6000}
    assert match["peopleAtCap"] == 1
    assert match["participation"] == {"people": 2, "eligiblePeople": 4, "percent": 50.0}
    assert match["requests"] == {
        "requested": 1,
        "approved": 1,
        "paid": 1,
        "declined": 1,
        "reversed": 0,
        "ineligible": 0,
    }
    assert match["hoursGranted"] == 0
    assert (grant_summary["approved"], grant_summary["hoursGranted"], grant_summary["budget"]["left"]) == (
        1500,
        1.5,
        None,
    )

    year = match["periodStart"][:4]
    assert (
        client.get("/api/giving/summary", params={"period": year}, headers=admin.headers).json()["data"]["programs"][0][
            "approved"
        ]
        == 3000
    )
    last_year = client.get("/api/giving/summary", params={"period": str(int(year) - 1)}, headers=admin.headers).json()[
        "data"
    ]
    assert last_year["programs"][0]["approved"] == 0 and last_year["programs"][0]["budget"]["used"] == 0
    assert_envelope(client.get("/api/giving/summary", params={"period": "last"}, headers=admin.headers), 400)
    assert_envelope(client.get("/api/giving/summary", headers=make.manager(admin).headers), 403)
    assert (
        make.admin()
        and client.get("/api/giving/summary", headers=make.admin().headers).json()["data"]["programs"] == []
    )


def test_consultants_are_told_of_requests_made_approved_and_paid(client, make, db):
    admin = make.admin()
    member = make.member(admin)
    consultant = make.consultant()
    make.client(consultant, admin)
    make.endpoint(consultant, "https://hooks.example.test/kindling")
    make.match_program(admin, approval="review")
    gift(client, make, member, 1500)
    [request] = requests_of(client, admin)
    client.post(f"/api/giving/requests/{request['id']}/decision", json={"decision": "approve"}, headers=admin.headers)
    client.post(f"/api/giving/requests/{request['id']}/payout", json={"reference": "R-9"}, headers=admin.headers)
    bodies = [
        json.loads(body)
        for body in db.scalars(
            select(WebhookEvent.body)
            .where(WebhookEvent.consultant_id == consultant.user.id)
            .order_by(WebhookEvent.created_at)
        )
    ]
    giving_events = [body for body in bodies if body["type"].startswith("giving.")]
    assert [body["type"] for body in giving_events] == [
        "giving.request.created",
        "giving.request.approved",
        "giving.request.paid",
    ]
    assert giving_events[-1]["data"] == {
        "organizationId": admin.organization_id,
        "requestId": request["id"],
        "programId": request["programId"],
        "kind": "donation_match",
        "status": "paid",
        "amount": 1500,
        "currency": "USD",
    }


def test_reports_and_the_portfolio_count_the_companys_giving(client, make, db):
    admin = make.admin()
    make.organization(admin).reporting_currency = "EUR"
    db.flush()
    member = make.member(admin)
    make.match_program(admin, approval="review")
    for amount in (2000, 1000, 500):
        gift(client, make, member, amount, "EUR")
    first, second, _third = sorted(requests_of(client, admin), key=lambda r: -r["amount"])
    for request in (first, second):
        client.post(
            f"/api/giving/requests/{request['id']}/decision", json={"decision": "approve"}, headers=admin.headers
        )
    client.post(f"/api/giving/requests/{first['id']}/payout", json={"reference": "SEPA-1"}, headers=admin.headers)
    grants = make.grant_program(admin, rate_per_hour=1000)
    make.volunteered(member, make.opportunity(admin), CENTRE)
    client.post(
        "/api/giving/grants",
        json={"programId": grants.id, "recipient": {"name": "Parks"}, "hours": 2},
        headers=member.headers,
    )

    for framework, matched, granted in (
        ("gri", "201-1-a-ii (matched giving)", "201-1-a-ii (volunteer grants)"),
        (
            "b-corp",
            "Community: Civic Engagement & Giving (matched giving)",
            "Community: Civic Engagement & Giving (volunteer grants)",
        ),
        ("social-value", "NT28 (matched giving)", "NT28 (volunteer grants)"),
        ("un-sdg", "17.17 (matched giving)", "17.17 (volunteer grants)"),
    ):
        lines = {
            line["code"]: line
            for line in client.get(f"/api/compliance/{framework}", headers=admin.headers).json()["data"]["indicators"]
        }
        assert (lines[matched]["value"], lines[matched]["unit"], lines[matched]["evidence"]) == (
            30.0,
            "EUR",
            {"verified": 1, "total": 2},
        )
        assert (lines[granted]["value"], lines[granted]["evidence"]) == (20.0, {"verified": 0, "total": 1})

    consultant = make.consultant()
    make.client(consultant, admin)
    dollars = make.admin()
    make.client(consultant, dollars)
    rows = client.get("/api/bulk/export", params={"format": "json"}, headers=consultant.headers).json()["data"]
    assert sorted((row["currency"], row["matchedGiving"], row["donations"]) for row in rows) == [
        ("EUR", 30.0, 35.0),
        ("USD", 0.0, 0.0),
    ]
    csv_text = client.get("/api/bulk/export", params={"format": "csv"}, headers=consultant.headers).text
    assert csv_text.splitlines()[0] == "Client,Kindness Acts,Volunteer Hours,Donations,Compliance Rate"
    assert {len(line.split(",")) for line in csv_text.splitlines()} == {5}
