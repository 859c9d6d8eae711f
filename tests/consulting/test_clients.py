"""Client relationships: lists from both sides, ending them, starting again (docs/decisions.md §4)."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from kindling.consulting import clients
from kindling.consulting.models import ClientRelationship

RELATIONSHIP_FIELDS = {
    "id",
    "consultantId",
    "organizationId",
    "invitationId",
    "status",
    "acceptedAt",
    "endedAt",
    "organization",
    "consultant",
}


def test_consultant_lists_active_clients_by_name(client, make, db):
    consultant = make.consultant()
    zeta, alpha, ended = make.admin("Zeta Works"), make.admin("alpha care"), make.admin("Gone Ltd")
    for admin in (zeta, alpha, ended):
        make.client(consultant, admin)
    clients.end_relationship(
        db, consultant_id=consultant.user.id, organization_id=ended.organization_id, ended_by="consultant"
    )
    make.invitation(consultant, make.admin("Only Invited"))
    make.client(make.consultant(), make.admin("Someone Else's"))
    response = client.get("/api/clients", headers=consultant.headers)
    assert response.status_code == 200
    data = response.json()["data"]
    assert all(set(item) == RELATIONSHIP_FIELDS for item in data)
    assert [(c["organization"]["name"], c["organization"]["slug"], c["status"]) for c in data] == [
        ("alpha care", "alpha-care", "active"),
        ("Zeta Works", "zeta-works", "active"),
    ]


def test_admin_lists_the_organizations_consultants(client, make, db):
    admin = make.admin()
    first, second = make.consultant(name="Bea", firm_name="B Firm"), make.consultant(name="Abe")
    make.client(first, admin)
    make.client(second, admin)
    make.client(make.consultant(), make.admin())
    data = client.get("/api/consultants", headers=admin.headers).json()["data"]
    assert [c["consultant"] for c in data] == [
        {"id": second.user.id, "name": "Abe", "firmName": None},
        {"id": first.user.id, "name": "Bea", "firmName": "B Firm"},
    ]
    assert client.get("/api/consultants", headers=make.member(admin).headers).status_code == 403


def test_consultant_ends_a_relationship(client, make, db):
    consultant, admin = make.consultant(), make.admin()
    started = make.client(consultant, admin)
    response = client.delete(f"/api/clients/{admin.organization_id}", headers=consultant.headers)
    assert response.status_code == 200
    ended = response.json()["data"]
    assert response.json()["success"] is True
    assert ended["id"] == started.id and ended["status"] == "ended"
    assert abs(dt.datetime.fromisoformat(ended["endedAt"]) - dt.datetime.now(dt.UTC)) < dt.timedelta(minutes=1)
    assert client.get("/api/clients", headers=consultant.headers).json()["data"] == []
    again = client.delete(f"/api/clients/{admin.organization_id}", headers=consultant.headers)
    assert again.status_code == 404 and again.json()["code"] == "not_found"


def test_admin_ends_a_relationship(client, make, db):
    consultant, admin = make.consultant(), make.admin()
    make.client(consultant, admin)
    response = client.delete(f"/api/consultants/{consultant.user.id}", headers=admin.headers)
    assert response.status_code == 200
    assert response.json()["data"]["status"] == "ended"
    assert client.get("/api/consultants", headers=admin.headers).json()["data"] == []


def test_nobody_else_ends_a_relationship(client, make, db):
    consultant, admin = make.consultant(), make.admin()
    make.client(consultant, admin)
    outsiders = [
        (make.consultant(), f"/api/clients/{admin.organization_id}"),
        (make.admin(), f"/api/consultants/{consultant.user.id}"),
    ]
    for account, path in outsiders:
        assert client.delete(path, headers=account.headers).status_code == 404
    assert (
        client.delete(f"/api/consultants/{consultant.user.id}", headers=make.member(admin).headers).status_code == 403
    )
    assert client.delete(f"/api/consultants/{consultant.user.id}", headers=consultant.headers).status_code == 403
    assert client.delete(f"/api/clients/{admin.organization_id}", headers=admin.headers).status_code == 403
    assert [c["status"] for c in client.get("/api/clients", headers=consultant.headers).json()["data"]] == ["active"]


def test_an_ended_relationship_can_start_again(client, make, db):
    consultant, admin = make.consultant(), make.admin()
    first = make.client(consultant, admin)
    client.delete(f"/api/clients/{admin.organization_id}", headers=consultant.headers)
    sent = client.post(
        "/api/invitations/send", json={"organizationId": admin.organization_id}, headers=consultant.headers
    )
    assert sent.status_code == 200
    accepted = client.post(
        "/api/invitations/accept", json={"invitationId": sent.json()["data"]["id"]}, headers=admin.headers
    )
    assert accepted.status_code == 200
    second = accepted.json()["data"]
    assert second["status"] == "active" and second["id"] != first.id
    db.expire_all()  # the requests changed rows this session holds
    history = db.scalars(
        select(ClientRelationship)
        .where(ClientRelationship.consultant_id == consultant.user.id)
        .order_by(ClientRelationship.accepted_at)
    ).all()
    assert [(r.id, r.status) for r in history] == [(first.id, "ended"), (second["id"], "active")]
    assert (
        client.post(
            "/api/invitations/send", json={"organizationId": admin.organization_id}, headers=consultant.headers
        ).json()["code"]
        == "already_client"
    )


def test_one_active_relationship_per_pair_is_enforced_by_the_database(make, db):
    consultant, admin = make.consultant(), make.admin()
    first = make.client(consultant, admin)
    second_invitation = make.invitation(consultant, make.admin())
    with pytest.raises(IntegrityError), db.begin_nested():
        db.add(
            ClientRelationship(
                consultant_id=consultant.user.id,
                organization_id=admin.organization_id,
                invitation_id=second_invitation.id,
            )
        )
        db.flush()
    # Ended relationships are history, any number of them.
    first.status = "ended"
    db.add(
        ClientRelationship(
            consultant_id=consultant.user.id, organization_id=admin.organization_id, invitation_id=second_invitation.id
        )
    )
    db.flush()
