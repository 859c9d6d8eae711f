"""API6 Unrestricted Access to Sensitive Business Flows: sign-up, invitations, bulk invites and
theme generation cannot be driven in bulk, and the kindness and volunteering tallies cannot be
padded by repetition."""

from __future__ import annotations

from sqlalchemy import func, select

from kindling.accounts.models import User
from kindling.consulting.models import Invitation
from tests.factories import PASSWORD
from tests.factories.volunteering import CENTRE
from tests.helpers import assert_envelope
from tests.owasp.operations import CSV


def sign_up(client, n: int, **fields):
    body = {
        "email": f"farmed-{n}@example.test",
        "password": PASSWORD,
        "name": f"Farmed {n}",
        "organizationName": f"Farm {n}",
        **fields,
    }
    response = client.post("/api/auth/sign-up", json=body)
    client.cookies.clear()
    return response


def test_account_farming_from_one_client_is_throttled(rate_window, client, db):
    before = db.scalar(select(func.count()).select_from(User))
    created = [sign_up(client, n).status_code for n in range(5)]
    refused = [sign_up(client, n, password="short").status_code for n in range(5, 60)]  # every try counts
    assert created == [201] * 5 and set(refused) == {400}
    blocked = sign_up(client, 60)
    assert_envelope(blocked, 429, "rate_limited")
    assert db.scalar(select(func.count()).select_from(User)) == before + 5
    assert db.scalar(select(User).where(User.email == "farmed-60@example.test")) is None


def test_repeating_an_invitation_sends_it_once_and_is_throttled(rate_window, client, make, db):
    consultant, admin = make.consultant(), make.admin()
    body = {"organizationId": admin.organization_id, "message": "Work with us"}
    answers = [client.post("/api/invitations/send", json=body, headers=consultant.headers) for _ in range(100)]
    assert {a.status_code for a in answers} == {200}
    assert len({a.json()["data"]["id"] for a in answers}) == 1
    assert (
        db.scalar(select(func.count()).select_from(Invitation).where(Invitation.consultant_id == consultant.user.id))
        == 1
    )
    assert_envelope(client.post("/api/invitations/send", json=body, headers=consultant.headers), 429, "rate_limited")


def test_bulk_invites_are_limited_to_ten_a_minute(rate_window, client, make):
    consultant = make.consultant()
    statuses = [
        client.post("/api/bulk/invite", files={"file": CSV}, headers=consultant.headers).status_code for _ in range(11)
    ]
    assert statuses[:10] == [200] * 10 and statuses[10] == 429


def test_theme_generation_is_limited_to_five_a_minute(rate_window, client, make):
    consultant = make.consultant()
    statuses = [
        client.post("/api/theme/generate", json={"primaryColor": "#336699"}, headers=consultant.headers).status_code
        for _ in range(6)
    ]
    assert statuses == [503] * 5 + [429]  # no provider configured: the first five are 503


def test_recognising_yourself_is_refused(client, make):
    member = make.member(make.admin())
    body = {
        "description": "I was great",
        "category": "peer_recognition",
        "verificationLevel": 1,
        "recipientId": member.user.id,
    }
    assert_envelope(client.post("/api/kindness", json=body, headers=member.headers), 400, "self_recognition")
    assert client.get("/api/kindness/stats", headers=member.headers).json()["data"]["total"] == 0


def test_volunteer_hours_are_counted_once_per_person(client, make, db):
    admin = make.admin()
    member = make.member(admin)
    opportunity = make.opportunity(admin)
    position = {"latitude": CENTRE[0], "longitude": CENTRE[1]}
    first = client.post(f"/api/volunteer/{opportunity.id}/check-in", json=position, headers=member.headers)
    assert first.status_code == 201
    assert_envelope(
        client.post(f"/api/volunteer/{opportunity.id}/check-in", json=position, headers=member.headers), 409
    )
    assert (
        client.get(f"/api/volunteer/{opportunity.id}", headers=admin.headers).json()["data"]["checkIns"]["total"] == 1
    )
