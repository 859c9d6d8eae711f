"""Donations (docs/decisions.md §7): any ISO 4217 currency in its minor units, who sees what."""

from __future__ import annotations

import base64

DONATION_FIELDS = {
    "id",
    "organizationId",
    "userId",
    "amount",
    "currency",
    "recipient",
    "note",
    "status",
    "createdAt",
    "updatedAt",
    "succeededAt",
}


def donation_body(**fields) -> dict:
    return {"amount": 2500, "currency": "USD", "recipient": {"name": "Shelter Trust"}, **fields}


def test_member_pledges_a_pending_donation(client, make):
    member = make.member(make.admin())
    body = donation_body(
        recipient={"name": " Shelter Trust ", "registrationNumber": "1234567"}, note="For the winter appeal"
    )
    response = client.post("/api/donations", json=body, headers=member.headers)
    assert response.status_code == 201
    data = response.json()["data"]
    assert set(data) == DONATION_FIELDS
    assert data["status"] == "pending" and data["succeededAt"] is None
    assert data["amount"] == 2500 and data["currency"] == "USD"
    assert data["recipient"] == {"name": "Shelter Trust", "registrationNumber": "1234567"}
    assert data["userId"] == member.user.id and data["organizationId"] == member.organization_id
    assert client.get(f"/api/donations/{data['id']}", headers=member.headers).json()["data"] == data


def test_donations_are_in_any_iso_4217_currency_in_its_minor_units(client, make):
    admin = make.admin()
    for currency, amount in (("EUR", 2500), ("JPY", 2500), ("KWD", 2510), ("CLF", 12345), ("ISK", 7), ("TWD", 99)):
        response = client.post(
            "/api/donations", json=donation_body(currency=currency, amount=amount), headers=admin.headers
        )
        assert response.status_code == 201, currency
        assert (response.json()["data"]["currency"], response.json()["data"]["amount"]) == (currency, amount)
    assert len(client.get("/api/donations", headers=admin.headers).json()["data"]) == 6


def test_unknown_codes_and_amounts_the_provider_cannot_charge_are_400(client, make):
    admin = make.admin()
    for code in ("ABC", "XAU", "XXX", "EEK"):  # unknown; no minor unit (gold, none); withdrawn
        response = client.post("/api/donations", json=donation_body(currency=code), headers=admin.headers)
        assert response.status_code == 400, code
        assert response.json()["code"] == "unknown_currency"
        assert response.json()["details"]["errors"][0]["field"] == "currency"
    # Stripe charges KWD in tens of fils and MGA in whole ariary.
    for currency, amount, step in (("KWD", 2505, "10"), ("MGA", 150, "100")):
        response = client.post(
            "/api/donations", json=donation_body(currency=currency, amount=amount), headers=admin.headers
        )
        assert response.status_code == 400 and response.json()["code"] == "amount_not_payable"
        assert f"multiple of {step} in {currency}" in response.json()["error"]
    assert client.get("/api/donations", headers=admin.headers).json()["data"] == []


def test_donation_rules(client, make):
    admin = make.admin()
    cases = [
        {"amount": 0},
        {"amount": 100_000_001},
        {"amount": 10.5},
        {"amount": "2500"},
        {"currency": "usd"},
        {"currency": "US"},
        {"recipient": {}},
        {"recipient": {"name": ""}},
        {"recipient": {"name": "   "}},
        {"recipient": {"name": "x" * 201}},
        {"recipient": {"name": "A", "registrationNumber": "x" * 65}},
        {"recipient": {"name": "A", "iban": "GB00"}},
        {"note": "x" * 1001},
        {"status": "succeeded"},
    ]
    for fields in cases:
        response = client.post("/api/donations", json=donation_body(**fields), headers=admin.headers)
        assert response.status_code == 400, fields
    assert (
        client.post("/api/donations", json=donation_body(amount=100_000_000), headers=admin.headers).status_code == 201
    )
    assert client.post("/api/donations", json=donation_body(amount=1), headers=admin.headers).status_code == 201


def test_members_see_their_own_admins_the_organizations(client, make, db):
    admin = make.admin()
    alice, bob = make.member(admin), make.member(admin)
    alices = make.donation(alice)
    bobs = make.donation(bob)
    outsider = make.donation(make.admin())

    def listed(account):
        return {d["id"] for d in client.get("/api/donations", headers=account.headers).json()["data"]}

    assert listed(alice) == {alices.id}
    assert listed(bob) == {bobs.id}
    assert listed(admin) == {alices.id, bobs.id}
    assert client.get(f"/api/donations/{bobs.id}", headers=alice.headers).status_code == 404
    assert client.get(f"/api/donations/{bobs.id}", headers=admin.headers).status_code == 200
    assert client.get(f"/api/donations/{outsider.id}", headers=admin.headers).status_code == 404
    assert client.get("/api/donations/no-such-id", headers=admin.headers).status_code == 404


def test_consultants_are_refused(client, make, db):
    consultant = make.consultant()
    donation = make.donation(make.admin())
    assert client.get("/api/donations", headers=consultant.headers).status_code == 403
    assert client.post("/api/donations", json=donation_body(), headers=consultant.headers).status_code == 403
    assert client.get(f"/api/donations/{donation.id}", headers=consultant.headers).status_code == 403
    assert client.get("/api/donations").status_code == 401


def test_list_filters_and_pages(client, make, db):
    admin = make.admin()
    created = [make.donation(admin, amount=100 + i) for i in range(5)]
    created[1].status = "succeeded"
    db.flush()
    succeeded = client.get("/api/donations", params={"status": "succeeded"}, headers=admin.headers).json()["data"]
    assert [d["id"] for d in succeeded] == [created[1].id]
    seen, cursor = [], None
    while True:
        params = {"limit": 2} | ({"cursor": cursor} if cursor else {})
        page = client.get("/api/donations", params=params, headers=admin.headers).json()
        seen += [d["id"] for d in page["data"]]
        cursor = page["nextCursor"]
        if cursor is None:
            break
    assert sorted(seen) == sorted(d.id for d in created) and len(seen) == 5
    nul_id = base64.urlsafe_b64encode(b"2026-01-01T00:00:00+00:00|\x00").decode()
    for params in ({"status": "paid"}, {"limit": 0}, {"limit": 201}, {"cursor": "%%%"}, {"cursor": nul_id}):
        assert client.get("/api/donations", params=params, headers=admin.headers).status_code == 400, params
