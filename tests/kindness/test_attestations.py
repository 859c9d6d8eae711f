"""Attestations (docs/decisions.md §6): single-use tokens, hashed at rest, 14 days, a page without names."""

from __future__ import annotations

import datetime as dt
import hashlib

import pytest
from sqlalchemy import select

from kindling.kindness.verification_models import Attestation
from kindling.platform.base import utcnow
from tests.helpers import assert_envelope
from tests.helpers.verification import get_act, pending, post_act

ASK = {"level": 5, "attesterName": "Ada Lovelace", "attesterOrganization": "Town Food Bank", "attesterEmail": "ada@foodbank.test"}
CONFIRM = {"decision": "confirm", "name": "Ada Lovelace", "organization": "Town Food Bank", "statement": "She ran our Saturday shift."}


def ask(client, account, act_id: str, body: dict = ASK):
    return client.post(f"/api/kindness/{act_id}/attestations", json=body, headers=account.headers)


@pytest.fixture
def people(make):
    admin = make.admin("Riverside Cooperative")
    return {"admin": admin, "sender": make.member(admin, name="Sam Sender"), "member": make.member(admin)}


def test_a_third_party_attests_level_five(client, people, db):
    act = post_act(client, people["sender"], "recipient-outside", 5, description="Cooked for the shelter")
    before = dt.datetime.now(dt.UTC)
    response = ask(client, people["sender"], act["id"])
    assert response.status_code == 201, response.text
    created = response.json()["data"]
    assert set(created) == {"id", "level", "url", "token", "expiresAt"}
    token = created["token"]
    assert created["level"] == 5 and created["url"] == f"/api/attestations/{token}"
    assert len(token) >= 43  # 32 random bytes, base64url
    expires = dt.datetime.fromisoformat(created["expiresAt"])
    assert dt.timedelta(days=14) <= expires - before < dt.timedelta(days=14, minutes=1)
    stored = db.scalar(select(Attestation).where(Attestation.id == created["id"]))
    assert stored.token_hash == hashlib.sha256(token.encode()).hexdigest()
    assert token not in {str(value) for value in stored.__dict__.values()}

    page = client.get(created["url"])  # no session: the attester has no account
    assert page.status_code == 200, page.text
    data = page.json()["data"]
    assert data == {
        "level": 5,
        "organizationName": "Riverside Cooperative",
        "category": "community",
        "description": "Cooked for the shelter",
        "date": act["createdAt"][:10],
        "expiresAt": created["expiresAt"],
    }
    for secret in (people["sender"].user.id, people["sender"].user.name, "recipient-outside", "Ada Lovelace", act["id"]):
        assert secret not in page.text

    answered = client.post(created["url"], json=CONFIRM)
    assert answered.status_code == 200, answered.text
    assert answered.json()["data"]["level"] == 5 and answered.json()["data"]["decision"] == "confirm"
    after = get_act(client, people["admin"], act["id"])
    assert (after["verifiedLevel"], after["rippleScore"]) == (5, 5)
    assert after["verification"] == {"status": "verified", "requestedLevel": 5, "awaiting": None}
    decisions = client.get(f"/api/kindness/{act['id']}/verifications", headers=people["member"].headers).json()["data"]
    assert [(d["level"], d["decision"], d["decidedBy"], d["attester"]) for d in decisions] == [
        (5, "confirm", None, {"name": "Ada Lovelace", "organization": "Town Food Bank", "statement": "She ran our Saturday shift."})
    ]


def test_a_token_is_single_use_and_unknown_used_expired_look_alike(client, people, db):
    act = post_act(client, people["sender"], level=5)
    used = ask(client, people["sender"], act["id"]).json()["data"]
    assert client.post(used["url"], json=CONFIRM).status_code == 200
    other = post_act(client, people["sender"], level=5)
    expired = ask(client, people["admin"], other["id"]).json()["data"]
    db.get(Attestation, expired["id"]).expires_at = utcnow() - dt.timedelta(seconds=1)
    db.flush()
    answers = []
    for url in (used["url"], expired["url"], "/api/attestations/" + "A" * 43):
        for response in (client.get(url), client.post(url, json=CONFIRM)):
            assert_envelope(response, 404, "not_found")
            answers.append(response.json())
    assert all(answer == answers[0] for answer in answers)
    assert get_act(client, people["admin"], other["id"])["verifiedLevel"] == 1


def test_an_external_recipient_confirms_or_declines_level_two(client, people):
    confirmed = post_act(client, people["sender"], "neighbour-42", 2)
    token = ask(client, people["sender"], confirmed["id"], {"level": 2, "attesterName": "Neighbour"}).json()["data"]["token"]
    assert client.post(f"/api/attestations/{token}", json={"decision": "confirm", "name": "Nia"}).status_code == 200
    assert get_act(client, people["admin"], confirmed["id"])["verifiedLevel"] == 2

    declined = post_act(client, people["sender"], "neighbour-43", 2)
    token = ask(client, people["sender"], declined["id"], {"level": 2, "attesterName": "Neighbour"}).json()["data"]["token"]
    assert client.post(f"/api/attestations/{token}", json={"decision": "decline", "name": "Ned"}).status_code == 200
    after = get_act(client, people["admin"], declined["id"])
    assert after["verifiedLevel"] == 1
    assert after["verification"] == {"status": "disputed", "requestedLevel": 2, "awaiting": None}


def test_who_may_ask_and_for_what(client, people):
    act = post_act(client, people["sender"], people["member"].user.id, 5)
    assert_envelope(ask(client, people["member"], act["id"]), 403, "forbidden")
    assert_envelope(ask(client, people["sender"], act["id"], {"level": 2, "attesterName": "X"}), 409, "recipient_is_member")
    assert_envelope(ask(client, people["sender"], act["id"], {"level": 5, "attesterName": "X"}), 400, "validation_error")
    low = post_act(client, people["sender"], level=4)
    assert_envelope(ask(client, people["sender"], low["id"]), 409, "above_requested_level")
    assert ask(client, people["admin"], act["id"]).status_code == 201
    # An answered level cannot be asked for again, nor answered through a second token.
    first, second = (ask(client, people["sender"], act["id"]).json()["data"]["url"] for _ in range(2))
    assert client.post(first, json=CONFIRM).status_code == 200
    assert_envelope(ask(client, people["sender"], act["id"]), 409, "already_decided")
    assert_envelope(client.post(second, json=CONFIRM), 409, "already_decided")


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"level": 3, "attesterName": "X", "attesterOrganization": "Y"},
        {"level": 5, "attesterName": "", "attesterOrganization": "Y"},
        {"level": 5, "attesterName": "X" * 201, "attesterOrganization": "Y"},
        {"level": 5, "attesterName": "X", "attesterOrganization": "Y", "attesterEmail": "not-an-email"},
        {"level": 5, "attesterName": "X", "attesterOrganization": "Y", "token": "mine"},
        ["level", 5],
    ],
)
def test_malformed_attestation_requests_are_refused(client, people, body):
    act = post_act(client, people["sender"], level=5)
    assert_envelope(ask(client, people["sender"], act["id"], body), 400, "validation_error")


@pytest.mark.parametrize(
    "body",
    [{}, {"decision": "confirm"}, {"decision": "yes", "name": "X"}, {"decision": "confirm", "name": ""},
     {"decision": "confirm", "name": "X", "statement": "s" * 2001}, {"decision": "confirm", "name": "X", "level": 5}, "confirm"],
)
def test_malformed_answers_are_refused_and_keep_the_token(client, people, body):
    act = post_act(client, people["sender"], level=5)
    url = ask(client, people["sender"], act["id"]).json()["data"]["url"]
    assert_envelope(client.post(url, json=body), 400, "validation_error")
    assert client.get(url).status_code == 200


def test_external_requests_wait_on_nobodys_list(client, people):
    post_act(client, people["sender"], level=5)
    assert pending(client, people["admin"]) == []
