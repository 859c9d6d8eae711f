"""Attestations (docs/decisions.md §6): mailed by Kindling to an independent address, answered with
the token from the mail, single use, hashed at rest, 14 days, one open request per act and level."""

from __future__ import annotations

import datetime as dt
import hashlib
import time

import pytest
from sqlalchemy import select

from kindling.accounts.models import SsoDomain
from kindling.config import Settings
from kindling.evidence.models import EvidenceEvent
from kindling.kindness.verification_models import Attestation
from kindling.platform.base import utcnow
from kindling.platform.mail import Mailer
from tests.helpers import assert_envelope
from tests.helpers.verification import ASK, ATTESTER, CONFIRM, answer, ask, get_act, pending, post_act
from tests.servers.mail import USER


def lookup(client, token: str):
    return client.post("/api/attestations/lookup", json={"token": token})


@pytest.fixture
def people(make):
    admin = make.admin("Riverside Cooperative")
    return {"admin": admin, "sender": make.member(admin, name="Sam Sender"), "member": make.member(admin)}


def test_a_third_party_attests_level_five_from_the_mail(client, people, db, mailbox):
    act = post_act(client, people["sender"], "recipient-outside", 5, description="Cooked for the shelter")
    before = dt.datetime.now(dt.UTC)
    response = ask(client, people["sender"], act["id"])
    assert response.status_code == 201, response.text
    created = response.json()["data"]
    # Nothing in the answer lets the requester answer for the attester.
    assert set(created) == {"id", "level", "attesterDomain", "expiresAt", "deliveredAt"}
    assert (created["level"], created["attesterDomain"]) == (5, "foodbank.test")
    expires = dt.datetime.fromisoformat(created["expiresAt"])
    assert dt.timedelta(days=14) <= expires - before < dt.timedelta(days=14, minutes=1)
    assert before <= dt.datetime.fromisoformat(created["deliveredAt"]) <= dt.datetime.now(dt.UTC)

    [mail] = mailbox.to(ATTESTER)
    assert (mail["From"], mail["Subject"]) == (
        "Kindling <attest@kindling.test>",
        "Riverside Cooperative asks you to confirm an act of kindness",
    )
    assert mailbox.logins == [USER]  # SMTP_URL's user and password were used
    text = mail.get_content()
    token = mailbox.token_for(ATTESTER)
    assert f"https://kindling.test/attest#{token}" in text and "Cooked for the shelter" in text
    assert len(token) == 43 and token not in response.text
    for secret in (people["sender"].user.id, "Sam Sender", "recipient-outside"):
        assert secret not in text
    stored = db.scalar(select(Attestation).where(Attestation.id == created["id"]))
    assert stored.token_hash == hashlib.sha256(token.encode()).hexdigest()
    assert token not in {str(value) for value in stored.__dict__.values()}

    page = lookup(client, token)  # no session: the attester has no account
    assert page.status_code == 200, page.text
    assert page.json()["data"] == {
        "level": 5,
        "organizationName": "Riverside Cooperative",
        "category": "community",
        "description": "Cooked for the shelter",
        "date": act["createdAt"][:10],
        "expiresAt": created["expiresAt"],
    }
    for secret in (people["sender"].user.id, "Sam Sender", "recipient-outside", "Ada Lovelace", act["id"]):
        assert secret not in page.text

    answered = answer(client, token)
    assert answered.status_code == 200, answered.text
    assert answered.json()["data"]["level"] == 5 and answered.json()["data"]["decision"] == "confirm"
    after = get_act(client, people["admin"], act["id"])
    assert (after["verifiedLevel"], after["rippleScore"]) == (5, 5)
    assert after["verification"] == {"status": "verified", "requestedLevel": 5, "awaiting": None}
    decisions = client.get(f"/api/kindness/{act['id']}/verifications", headers=people["member"].headers).json()["data"]
    assert [(d["level"], d["decision"], d["decidedBy"], d["attester"]) for d in decisions] == [
        (
            5,
            "confirm",
            None,
            {"name": "Ada Lovelace", "organization": "Town Food Bank", "statement": "She ran our Saturday shift."},
        )
    ]


def test_the_answer_is_logged_with_the_attesters_key_and_the_requester(client, people, db, mailbox):
    act = post_act(client, people["sender"], level=5)
    created = ask(client, people["sender"], act["id"], {**ASK, "attesterEmail": "Ada@FoodBank.test"}).json()["data"]
    assert answer(client, mailbox.token_for("ada@foodbank.test")).status_code == 200
    event = db.scalar(
        select(EvidenceEvent).where(EvidenceEvent.type == "attestation.answered", EvidenceEvent.subject_id == act["id"])
    )
    organization_id = people["admin"].organization_id
    key = hashlib.sha256(f"{organization_id}\nada@foodbank.test".encode()).hexdigest()
    assert event.actor_id is None
    assert event.data == {
        "attestationId": created["id"],
        "level": 5,
        "decision": "confirm",
        "requestedBy": people["sender"].user.id,
        "attesterDomain": "foodbank.test",
        "attesterKey": key,
    }


def test_a_token_is_single_use_and_unknown_used_replaced_expired_look_alike(client, people, db, mailbox):
    act = post_act(client, people["sender"], level=5)
    ask(client, people["sender"], act["id"])
    used = mailbox.token_for(ATTESTER)
    assert answer(client, used).status_code == 200
    other = post_act(client, people["sender"], level=5)
    expired_id = ask(client, people["admin"], other["id"], {**ASK, "attesterEmail": "old@foodbank.test"}).json()[
        "data"
    ]["id"]
    expired = mailbox.token_for("old@foodbank.test")
    db.get(Attestation, expired_id).expires_at = utcnow() - dt.timedelta(seconds=1)
    db.flush()
    third = post_act(client, people["sender"], level=5)
    ask(client, people["sender"], third["id"], {**ASK, "attesterEmail": "first@foodbank.test"})
    replaced = mailbox.token_for("first@foodbank.test")
    ask(client, people["sender"], third["id"], {**ASK, "attesterEmail": "second@foodbank.test"})
    answers = []
    for token in (used, expired, replaced, "A" * 43):
        for response in (lookup(client, token), answer(client, token)):
            assert_envelope(response, 404, "not_found")
            answers.append(response.json())
    assert all(found == answers[0] for found in answers)
    assert get_act(client, people["admin"], other["id"])["verifiedLevel"] == 1


def test_a_new_request_replaces_the_open_one_of_its_level(client, people, db, mailbox):
    act = post_act(client, people["sender"], level=5)
    first = ask(client, people["sender"], act["id"], {**ASK, "attesterEmail": "first@foodbank.test"}).json()["data"]
    second = ask(client, people["admin"], act["id"], {**ASK, "attesterEmail": "second@foodbank.test"}).json()["data"]
    rows = {row.id: row for row in db.scalars(select(Attestation).where(Attestation.act_id == act["id"]))}
    assert rows[first["id"]].cancelled_at is not None and rows[second["id"]].cancelled_at is None
    assert_envelope(lookup(client, mailbox.token_for("first@foodbank.test")), 404, "not_found")
    assert answer(client, mailbox.token_for("second@foodbank.test")).status_code == 200


def test_the_attester_must_be_independent_of_the_organization(client, people, make, mailbox):
    act = post_act(client, people["sender"], "neighbour-7", 5)
    dependent = [
        people["member"].user.email.upper(),  # a member's, in any case
        people["sender"].user.email,  # the requester's
        people["admin"].user.email,
    ]
    for address in dependent:
        response = ask(client, people["sender"], act["id"], {**ASK, "attesterEmail": address})
        assert_envelope(response, 409, "attester_not_independent")
    removed = make.member(people["admin"])
    removed.user.active = False
    make.db.flush()
    assert_envelope(
        ask(client, people["sender"], act["id"], {**ASK, "attesterEmail": removed.user.email}),
        409,
        "attester_not_independent",
    )
    assert mailbox.messages == []
    # Someone of another organization is independent of this one.
    outsider = make.admin()
    assert ask(client, people["sender"], act["id"], {**ASK, "attesterEmail": outsider.user.email}).status_code == 201


def test_an_address_in_the_organizations_sso_domains_is_not_independent(client, people, db, mailbox):
    # A claim, not verified: it counts all the same.
    db.add(
        SsoDomain(
            domain="riverside.example", organization_id=people["admin"].organization_id, verification_token="0" * 32
        )
    )
    db.flush()
    act = post_act(client, people["sender"], "neighbour-9", 5)
    for address in ("ada@riverside.example", "Ada@EU.Riverside.example"):
        response = ask(client, people["sender"], act["id"], {**ASK, "attesterEmail": address})
        assert_envelope(response, 409, "attester_not_independent")
    assert (
        ask(client, people["sender"], act["id"], {**ASK, "attesterEmail": "ada@notriverside.example"}).status_code
        == 201
    )


def test_one_address_attests_one_level_of_an_act(client, people, mailbox):
    act = post_act(client, people["sender"], "neighbour-8", 5)
    assert (
        ask(
            client, people["sender"], act["id"], {"level": 2, "attesterName": "Nia", "attesterEmail": "nia@home.test"}
        ).status_code
        == 201
    )
    response = ask(client, people["sender"], act["id"], {**ASK, "attesterEmail": "NIA@home.test"})
    assert_envelope(response, 409, "attester_already_answered")


def test_without_a_mail_server_requests_are_503_and_nothing_is_left_open(client, people, db, runtime, monkeypatch):
    monkeypatch.setattr(runtime, "mailer", None)
    act = post_act(client, people["sender"], level=5)
    assert_envelope(ask(client, people["sender"], act["id"]), 503, "mail_unavailable")
    assert db.scalars(select(Attestation).where(Attestation.act_id == act["id"])).all() == []


def test_a_refusing_mail_server_is_503_and_changes_nothing(client, people, db, mailbox):
    act = post_act(client, people["sender"], level=5)
    kept = ask(client, people["sender"], act["id"], {**ASK, "attesterEmail": "kept@foodbank.test"}).json()["data"]
    mailbox.refuse = True
    assert_envelope(ask(client, people["sender"], act["id"]), 503, "mail_unavailable")
    stored = db.scalars(select(Attestation).where(Attestation.act_id == act["id"])).all()
    assert [(row.id, row.cancelled_at) for row in stored] == [(kept["id"], None)]
    mailbox.refuse = False
    assert answer(client, mailbox.token_for("kept@foodbank.test")).status_code == 200


def test_a_silent_mail_server_is_503_after_the_timeout(client, people, db, runtime, monkeypatch, silent_server):
    monkeypatch.setattr(
        runtime, "mailer", Mailer(url=silent_server.url("smtp"), sender="attest@kindling.test", timeout=0.5)
    )
    act = post_act(client, people["sender"], level=5)
    started = time.monotonic()
    assert_envelope(ask(client, people["sender"], act["id"]), 503, "mail_unavailable")
    assert 0.5 <= time.monotonic() - started < 3
    assert db.scalars(select(Attestation).where(Attestation.act_id == act["id"])).all() == []


def test_the_mail_server_gets_ten_seconds_by_default(runtime):
    assert Settings().mail_timeout == 10
    assert runtime.mailer.timeout == 10


def test_the_old_token_in_path_routes_are_gone(client, people, mailbox):
    act = post_act(client, people["sender"], level=5)
    ask(client, people["sender"], act["id"])
    token = mailbox.token_for(ATTESTER)
    assert_envelope(client.get(f"/api/attestations/{token}"), 404, "not_found")
    assert_envelope(client.post(f"/api/attestations/{token}", json=CONFIRM), 404, "not_found")
    assert lookup(client, token).status_code == 200


def test_an_external_recipient_confirms_or_declines_level_two(client, people, mailbox):
    confirmed = post_act(client, people["sender"], "neighbour-42", 2)
    ask(
        client,
        people["sender"],
        confirmed["id"],
        {"level": 2, "attesterName": "Neighbour", "attesterEmail": "nia@home.test"},
    )
    assert answer(client, mailbox.token_for("nia@home.test"), {"decision": "confirm", "name": "Nia"}).status_code == 200
    assert get_act(client, people["admin"], confirmed["id"])["verifiedLevel"] == 2

    declined = post_act(client, people["sender"], "neighbour-43", 2)
    ask(
        client,
        people["sender"],
        declined["id"],
        {"level": 2, "attesterName": "Neighbour", "attesterEmail": "ned@home.test"},
    )
    assert answer(client, mailbox.token_for("ned@home.test"), {"decision": "decline", "name": "Ned"}).status_code == 200
    after = get_act(client, people["admin"], declined["id"])
    assert after["verifiedLevel"] == 1
    assert after["verification"] == {"status": "disputed", "requestedLevel": 2, "awaiting": None}


def test_who_may_ask_and_for_what(client, people, mailbox):
    act = post_act(client, people["sender"], people["member"].user.id, 5)
    assert_envelope(ask(client, people["member"], act["id"]), 403, "forbidden")
    level_two = {"level": 2, "attesterName": "X", "attesterEmail": "x@home.test"}
    assert_envelope(ask(client, people["sender"], act["id"], level_two), 409, "recipient_is_member")
    no_organization = {key: value for key, value in ASK.items() if key != "attesterOrganization"}
    assert_envelope(ask(client, people["sender"], act["id"], no_organization), 400, "validation_error")
    low = post_act(client, people["sender"], level=4)
    assert_envelope(ask(client, people["sender"], low["id"]), 409, "above_requested_level")
    assert ask(client, people["admin"], act["id"]).status_code == 201
    assert answer(client, mailbox.token_for(ATTESTER)).status_code == 200
    assert_envelope(ask(client, people["sender"], act["id"]), 409, "already_decided")
    assert len(mailbox.to(ATTESTER)) == 1


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"level": 5, "attesterName": "X", "attesterOrganization": "Y"},
        {"level": 3, "attesterName": "X", "attesterOrganization": "Y", "attesterEmail": ATTESTER},
        {"level": 5, "attesterName": "", "attesterOrganization": "Y", "attesterEmail": ATTESTER},
        {"level": 5, "attesterName": "X" * 201, "attesterOrganization": "Y", "attesterEmail": ATTESTER},
        {"level": 5, "attesterName": "X", "attesterOrganization": "Y", "attesterEmail": "not-an-email"},
        {"level": 5, "attesterName": "X", "attesterOrganization": "Y", "attesterEmail": ATTESTER, "token": "mine"},
        ["level", 5],
    ],
)
def test_malformed_attestation_requests_are_refused(client, people, body, mailbox):
    act = post_act(client, people["sender"], level=5)
    assert_envelope(ask(client, people["sender"], act["id"], body), 400, "validation_error")
    assert mailbox.messages == []


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"decision": "confirm"},
        {"decision": "yes", "name": "X"},
        {"decision": "confirm", "name": ""},
        {"decision": "confirm", "name": "X", "statement": "s" * 2001},
        {"decision": "confirm", "name": "X", "level": 5},
    ],
)
def test_malformed_answers_are_refused_and_keep_the_token(client, people, body, mailbox):
    act = post_act(client, people["sender"], level=5)
    ask(client, people["sender"], act["id"])
    token = mailbox.token_for(ATTESTER)
    assert_envelope(answer(client, token, body), 400, "validation_error")
    assert_envelope(client.post("/api/attestations/answer", json="confirm"), 400, "validation_error")
    assert_envelope(client.post("/api/attestations/lookup", json={}), 400, "validation_error")
    assert lookup(client, token).status_code == 200


def test_external_requests_wait_on_nobodys_list(client, people):
    post_act(client, people["sender"], level=5)
    assert pending(client, people["admin"]) == []


def test_the_attest_page_is_self_contained(client):
    page = client.get("/attest")
    assert page.status_code == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    policy = page.headers["content-security-policy"]
    assert policy.startswith("default-src 'none'; script-src 'sha256-") and "connect-src 'self'" in policy
    assert page.headers["referrer-policy"] == "no-referrer" and page.headers["cache-control"] == "no-store"
    for outside in ("src=", "href=", "http://", "https://", "@import", "url("):
        assert outside not in page.text
    assert 'aria-live="polite"' in page.text and "location.hash" in page.text
