"""Joining by code (docs/decisions.md §2): admins turn it off and on, and rotate the code."""

from __future__ import annotations

import types

import pytest

from tests.factories import PASSWORD
from tests.helpers import assert_envelope

JOIN_CODE = "/api/organization/join-code"


def join(client, code: str, email: str):
    body = {"email": email, "password": PASSWORD, "name": "New Person", "joinCode": code}
    return client.post("/api/auth/sign-up", json=body)


def set_join_code(client, account, body):
    return client.post(JOIN_CODE, json=body, headers=account.headers)


def test_an_admin_turns_joining_by_code_off_and_on(client, make):
    admin = make.admin()
    code = make.organization(admin).join_code
    response = set_join_code(client, admin, {"enabled": False})
    assert response.status_code == 200, response.text
    assert response.json()["data"] == {"joinCode": code, "joinCodeEnabled": False}
    assert_envelope(join(client, code, "off@example.test"), 400, "unknown_join_code")

    assert set_join_code(client, admin, {"enabled": True}).json()["data"] == {"joinCode": code, "joinCodeEnabled": True}
    assert join(client, code, "on@example.test").status_code == 201


def test_rotating_the_code_retires_the_old_one(client, make):
    admin = make.admin()
    old = make.organization(admin).join_code
    response = set_join_code(client, admin, {"rotate": True})
    assert response.status_code == 200, response.text
    new = response.json()["data"]["joinCode"]
    assert new != old and len(new) >= 12 and response.json()["data"]["joinCodeEnabled"] is True
    assert_envelope(join(client, old, "old@example.test"), 400, "unknown_join_code")
    assert join(client, new, "new@example.test").status_code == 201
    client.cookies.clear()  # the sign-up above signed the client in as the new member
    response = client.get("/api/auth/session", headers=admin.headers)
    assert response.status_code == 200, response.text
    session = response.json()["data"]
    assert (session["organization"]["joinCode"], session["organization"]["joinCodeEnabled"]) == (new, True)


def test_only_admins_set_the_join_code(client, make):
    admin = make.admin()
    for someone in (make.manager(admin), make.member(admin), make.consultant()):
        assert_envelope(set_join_code(client, someone, {"rotate": True}), 403, "forbidden")
    assert_envelope(client.post(JOIN_CODE, json={"rotate": True}), 401, "unauthenticated")


@pytest.mark.parametrize("body", [{}, {"rotate": False}, {"enabled": "no"}, {"enabled": True, "code": "mine"}, []])
def test_malformed_join_code_changes_are_400(client, make, body):
    assert_envelope(set_join_code(client, make.admin(), body), 400, "validation_error")


def member_events(client, admin, user_id: str) -> list[tuple[str, dict, str | None]]:
    events = client.get("/api/evidence", params={"subjectId": user_id}, headers=admin.headers).json()["data"]
    return [(e["type"], e["data"], e["actorId"]) for e in events if e["subject"] == {"kind": "member", "id": user_id}]


def test_founding_an_organization_and_joining_by_code_are_logged(client):
    """Only SCIM logged member.joined, so nothing showed that the founding admin held authority."""
    body = {
        "email": "founder@example.test",
        "password": PASSWORD,
        "name": "Founder",
        "organizationName": "Founded",
        "returnToken": True,
    }
    founded = client.post("/api/auth/sign-up", json=body)
    assert founded.status_code == 201, founded.text
    founder = founded.json()["data"]
    client.cookies.clear()
    admin = types.SimpleNamespace(headers={"Authorization": f"Bearer {founder['session']['token']}"})
    session = client.get("/api/auth/session", headers=admin.headers).json()["data"]
    assert member_events(client, admin, founder["user"]["id"]) == [
        ("member.joined", {"role": "admin", "source": "sign_up"}, founder["user"]["id"])
    ]
    joined = join(client, session["organization"]["joinCode"], "joiner@example.test")
    assert joined.status_code == 201, joined.text
    client.cookies.clear()
    joiner = joined.json()["data"]["user"]["id"]
    assert member_events(client, admin, joiner) == [
        ("member.joined", {"role": "member", "source": "join_code"}, joiner)
    ]
    verified = client.get("/api/evidence/verify", headers=admin.headers).json()
    assert verified["consistent"] and verified["head"]["seq"] == 2
