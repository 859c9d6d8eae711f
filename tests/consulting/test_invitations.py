"""Invitations: send, accept, decline, cancel, expiry and lists (docs/decisions.md §3, §4)."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from kindling.consulting import clients
from kindling.consulting.models import ClientRelationship, Invitation

INVITATION_FIELDS = {
    "id",
    "organizationId",
    "consultantId",
    "status",
    "message",
    "createdAt",
    "expiresAt",
    "respondedAt",
    "organization",
    "consultant",
}


def send(client, consultant, organization_id, **fields):
    return client.post(
        "/api/invitations/send", json={"organizationId": organization_id, **fields}, headers=consultant.headers
    )


def answer(client, account, action, invitation_id):
    return client.post(f"/api/invitations/{action}", json={"invitationId": invitation_id}, headers=account.headers)


def expire(db, invitation_id):
    invitation = db.get(Invitation, invitation_id)
    invitation.expires_at = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1)
    db.flush()


def count(db, model, consultant):
    """Rows of `model` for one consultant (the database may hold other rows)."""
    return db.scalar(select(func.count()).select_from(model).where(model.consultant_id == consultant.user.id))


def test_send_creates_a_pending_invitation(client, make, db):
    consultant = make.consultant(firm_name="Northwind Advisory")
    admin = make.admin("Acme Care")
    response = send(client, consultant, admin.organization_id, message="  Let us work together  ")
    assert response.status_code == 200
    body = response.json()
    assert body["success"] is True
    invitation = body["data"]
    assert set(invitation) == INVITATION_FIELDS
    assert invitation["organizationId"] == admin.organization_id
    assert invitation["consultantId"] == consultant.user.id
    assert invitation["status"] == "pending"
    assert invitation["message"] == "Let us work together"
    assert invitation["respondedAt"] is None
    created = dt.datetime.fromisoformat(invitation["createdAt"])
    assert dt.datetime.fromisoformat(invitation["expiresAt"]) - created == dt.timedelta(days=14)
    assert invitation["organization"] == {"id": admin.organization_id, "name": "Acme Care", "slug": "acme-care"}
    assert invitation["consultant"] == {
        "id": consultant.user.id,
        "name": consultant.user.name,
        "firmName": "Northwind Advisory",
    }


def test_send_without_message_stores_none(client, make):
    response = send(client, make.consultant(), make.admin().organization_id, message="   ")
    assert response.json()["data"]["message"] is None


def test_send_to_unknown_organization_is_404(client, make, db):
    consultant = make.consultant()
    response = send(client, consultant, "no-such-organization")
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
    assert count(db, Invitation, consultant) == 0


def test_send_refuses_bad_bodies(client, make, db):
    consultant = make.consultant()
    organization_id = make.admin().organization_id
    for body in (
        {},
        {"organizationId": ""},
        {"organizationId": organization_id, "message": "x" * 1001},
        {"organizationId": organization_id, "extra": True},
        {"organizationId": 7},
    ):
        response = client.post("/api/invitations/send", json=body, headers=consultant.headers)
        assert response.status_code == 400, body
        assert response.json()["error"]
    assert count(db, Invitation, consultant) == 0
    assert send(client, consultant, organization_id, message="x" * 1000).status_code == 200


def test_accept_starts_an_active_relationship(client, make, db):
    consultant, admin = make.consultant(), make.admin("Beacon")
    invitation = make.invitation(consultant, admin)
    response = answer(client, admin, "accept", invitation.id)
    assert response.status_code == 200
    relationship = response.json()["data"]
    assert response.json()["success"] is True
    assert relationship["status"] == "active"
    assert relationship["consultantId"] == consultant.user.id
    assert relationship["organizationId"] == admin.organization_id
    assert relationship["invitationId"] == invitation.id
    assert relationship["endedAt"] is None
    accepted_at = dt.datetime.fromisoformat(relationship["acceptedAt"])
    assert abs(accepted_at - dt.datetime.now(dt.UTC)) < dt.timedelta(minutes=1)
    assert relationship["organization"]["name"] == "Beacon"
    listed = client.get("/api/invitations", headers=admin.headers).json()["data"][0]
    assert listed["status"] == "accepted" and listed["respondedAt"] is not None


def test_only_an_admin_of_the_invited_organization_answers(client, make, db):
    consultant, admin = make.consultant(), make.admin()
    invitation = make.invitation(consultant, admin)
    member = make.member(admin)
    other_admin = make.admin()
    for action in ("accept", "decline"):
        assert answer(client, consultant, action, invitation.id).status_code == 403
        assert answer(client, member, action, invitation.id).status_code == 403
        # Another organization's invitation looks exactly like one that does not exist.
        foreign = answer(client, other_admin, action, invitation.id)
        missing = answer(client, admin, action, "no-such-invitation")
        assert foreign.status_code == missing.status_code == 404
        assert foreign.json() == missing.json()
    assert db.get(Invitation, invitation.id).status == "pending"
    assert count(db, ClientRelationship, consultant) == 0


def test_only_the_sending_consultant_cancels(client, make, db):
    consultant, admin = make.consultant(), make.admin()
    invitation = make.invitation(consultant, admin)
    assert answer(client, admin, "cancel", invitation.id).status_code == 403
    assert answer(client, make.consultant(), "cancel", invitation.id).status_code == 404
    response = answer(client, consultant, "cancel", invitation.id)
    assert response.status_code == 200
    assert response.json()["data"]["status"] == "cancelled"
    assert response.json()["data"]["respondedAt"] is not None


def test_answers_refuse_bad_bodies(client, make):
    admin = make.admin()
    for body in ({}, {"invitationId": ""}, {"invitationId": "x", "extra": 1}, {"invitationId": None}):
        response = client.post("/api/invitations/accept", json=body, headers=admin.headers)
        assert response.status_code == 400, body


# The state table: every move from every invitation state.
def _state(make, consultant, admin, state):
    db = make.db
    invitation = make.invitation(consultant, admin)
    if state == "expired":
        expire(db, invitation.id)
    elif state == "accepted":
        clients.accept_invitation(db, organization_id=admin.organization_id, invitation_id=invitation.id)
    elif state == "declined":
        clients.decline_invitation(db, organization_id=admin.organization_id, invitation_id=invitation.id)
    elif state == "cancelled":
        clients.cancel_invitation(db, consultant_id=consultant.user.id, invitation_id=invitation.id)
    db.flush()
    return invitation.id


ANSWER_MOVES = [
    ("pending", "accept", 200, None, "accepted"),
    ("pending", "decline", 200, None, "declined"),
    ("pending", "cancel", 200, None, "cancelled"),
    ("expired", "accept", 409, "invitation_expired", "expired"),
    ("expired", "decline", 409, "invitation_expired", "expired"),
    ("expired", "cancel", 409, "invitation_expired", "expired"),
    ("accepted", "accept", 409, "invitation_not_pending", "accepted"),
    ("accepted", "decline", 409, "invitation_not_pending", "accepted"),
    ("accepted", "cancel", 409, "invitation_not_pending", "accepted"),
    ("declined", "accept", 409, "invitation_not_pending", "declined"),
    ("declined", "decline", 409, "invitation_not_pending", "declined"),
    ("declined", "cancel", 409, "invitation_not_pending", "declined"),
    ("cancelled", "accept", 409, "invitation_not_pending", "cancelled"),
    ("cancelled", "decline", 409, "invitation_not_pending", "cancelled"),
    ("cancelled", "cancel", 409, "invitation_not_pending", "cancelled"),
]


@pytest.mark.parametrize(("state", "action", "status", "code", "after"), ANSWER_MOVES)
def test_answer_moves(client, make, db, state, action, status, code, after):
    consultant, admin = make.consultant(), make.admin()
    invitation_id = _state(make, consultant, admin, state)
    relationships_before = count(db, ClientRelationship, consultant)
    response = answer(client, consultant if action == "cancel" else admin, action, invitation_id)
    assert response.status_code == status
    assert response.json().get("code") == code
    listed = client.get("/api/invitations", headers=consultant.headers).json()["data"]
    assert [(i["id"], i["status"]) for i in listed] == [(invitation_id, after)]
    expected_relationships = relationships_before + (1 if (state, action) == ("pending", "accept") else 0)
    assert count(db, ClientRelationship, consultant) == expected_relationships


SEND_MOVES = [
    # state before, status, code, whether the pending invitation of the answer is the earlier one
    ("none", 200, None, False),
    ("pending", 200, None, True),
    ("expired", 200, None, False),
    ("accepted", 409, "already_client", None),
    ("declined", 200, None, False),
    ("cancelled", 200, None, False),
]


@pytest.mark.parametrize(("state", "status", "code", "same"), SEND_MOVES)
def test_send_moves(client, make, db, state, status, code, same):
    consultant, admin = make.consultant(), make.admin()
    earlier = None if state == "none" else _state(make, consultant, admin, state)
    before = count(db, Invitation, consultant)
    response = send(client, consultant, admin.organization_id, message="again")
    assert response.status_code == status
    assert response.json().get("code") == code
    if status != 200:
        assert count(db, Invitation, consultant) == before
        return
    invitation = response.json()["data"]
    assert invitation["status"] == "pending"
    assert (invitation["id"] == earlier) is same
    assert count(db, Invitation, consultant) == before + (0 if same else 1)
    if state == "expired":
        statuses = {
            i["id"]: i["status"] for i in client.get("/api/invitations", headers=consultant.headers).json()["data"]
        }
        assert statuses == {earlier: "expired", invitation["id"]: "pending"}


def test_send_is_idempotent_while_pending(client, make, db):
    consultant, admin = make.consultant(), make.admin()
    first = send(client, consultant, admin.organization_id, message="first").json()["data"]
    second = send(client, consultant, admin.organization_id, message="second").json()["data"]
    assert second == first
    assert count(db, Invitation, consultant) == 1
    # Another consultant's invitation to the same organization is its own.
    assert send(client, make.consultant(), admin.organization_id).json()["data"]["id"] != first["id"]


def test_one_pending_invitation_per_pair_is_enforced_by_the_database(make, db):
    consultant, admin = make.consultant(), make.admin()
    first = make.invitation(consultant, admin)
    with pytest.raises(IntegrityError), db.begin_nested():
        db.add(
            Invitation(
                consultant_id=consultant.user.id, organization_id=admin.organization_id, expires_at=first.expires_at
            )
        )
        db.flush()


def test_losing_a_race_returns_the_winners_invitation(make, db, monkeypatch):
    """Two requests may both find no open invitation; the one whose insert is refused looks again."""
    consultant, admin = make.consultant(), make.admin()
    winner = make.invitation(consultant, admin)
    real = clients._invite_many
    attempts = []

    def first_attempt_loses(session, consultant_id, requests, source):
        attempts.append(requests)
        if len(attempts) == 1:
            # As if it had looked before the winner committed: its own insert is refused.
            session.add(
                Invitation(
                    consultant_id=consultant_id, organization_id=admin.organization_id, expires_at=winner.expires_at
                )
            )
            session.flush()
        return real(session, consultant_id, requests, source)

    monkeypatch.setattr(clients, "_invite_many", first_attempt_loses)
    again = clients.send_invitation(db, consultant_id=consultant.user.id, organization_id=admin.organization_id)
    assert again.id == winner.id
    assert len(attempts) == 2
    assert count(db, Invitation, consultant) == 1


def test_lists_show_each_side_its_own_invitations(client, make, db):
    consultant, admin = make.consultant(), make.admin()
    mine = make.invitation(consultant, admin)
    to_other = make.invitation(consultant, make.admin())
    from_other = make.invitation(make.consultant(), admin)
    make.invitation(make.consultant(), make.admin())
    sent = client.get("/api/invitations", headers=consultant.headers).json()
    assert {i["id"] for i in sent["data"]} == {mine.id, to_other.id}
    assert sent["nextCursor"] is None
    received = client.get("/api/invitations", headers=admin.headers).json()["data"]
    assert {i["id"] for i in received} == {mine.id, from_other.id}
    assert all(set(i) == INVITATION_FIELDS for i in received)
    assert client.get("/api/invitations", headers=make.member(admin).headers).status_code == 403


def test_list_filters_by_the_status_shown(client, make, db):
    consultant = make.consultant()
    ids = {
        state: _state(make, consultant, make.admin(), state)
        for state in ("pending", "expired", "accepted", "declined", "cancelled")
    }
    for state, invitation_id in ids.items():
        response = client.get("/api/invitations", params={"status": state}, headers=consultant.headers)
        assert [(i["id"], i["status"]) for i in response.json()["data"]] == [(invitation_id, state)], state
    assert client.get("/api/invitations", params={"status": "active"}, headers=consultant.headers).status_code == 400


def test_list_pages_newest_first(client, make, db):
    consultant = make.consultant()
    created = [make.invitation(consultant, make.admin()) for _ in range(5)]
    base = dt.datetime.now(dt.UTC)
    for minutes, invitation in enumerate(created):
        invitation.created_at = base - dt.timedelta(minutes=10 - minutes)
    created[4].created_at = created[3].created_at  # a tie is broken by id
    db.flush()
    expected = [i.id for i in sorted(created, key=lambda i: (i.created_at, i.id), reverse=True)]
    seen, cursor = [], None
    while True:
        params = {"limit": 2} | ({"cursor": cursor} if cursor else {})
        page = client.get("/api/invitations", params=params, headers=consultant.headers).json()
        seen += [i["id"] for i in page["data"]]
        cursor = page["nextCursor"]
        if cursor is None:
            break
    assert seen == expected
    # Not base64; "nope"; a time without zone; an id with NUL in it.
    for bad in ("not-a-cursor", "bm9wZQ==", "MjAyNi0wMS0wMVQwMDowMDowMHwgeA==", "MjAyNi0wMS0wMVQwMDowMDowMCswMDowMHwA"):
        response = client.get("/api/invitations", params={"cursor": bad}, headers=consultant.headers)
        assert response.status_code == 400, bad
        assert response.json()["code"] == "invalid_cursor"
    for limit in (0, 501):
        assert client.get("/api/invitations", params={"limit": limit}, headers=consultant.headers).status_code == 400


def test_an_accepted_invitation_joins_no_one_and_leaves_the_log_consistent(client, make):
    """A consultant reads a client's figures but holds no authority in it: accepting their
    invitation is no way into the organization's membership, whose every way in is logged."""
    consultant, admin = make.consultant(), make.admin()
    assert answer(client, admin, "accept", make.invitation(consultant, admin).id).status_code == 200
    events = client.get("/api/evidence", params={"limit": 1000}, headers=admin.headers).json()["data"]
    assert [(e["type"], e["subject"]["id"]) for e in events if e["subject"]["kind"] == "member"] == [
        ("member.joined", admin.user.id)
    ]
    assert client.get("/api/evidence/verify", headers=admin.headers).json()["consistent"] is True
