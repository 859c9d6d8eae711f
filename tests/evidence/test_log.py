"""The evidence log: what is appended, in the same transaction as its change, and how it is read."""

from __future__ import annotations

import hashlib
import json
import re

import pytest
from sqlalchemy import event, select, text

from kindling.accounts import service as accounts
from kindling.accounts.events import SCIM_TOKEN_REVOKED
from kindling.donations import service as donations
from kindling.evidence import log as evidence
from kindling.evidence import replay
from kindling.evidence.chain import GENESIS_HASH, event_hash, timestamp
from kindling.evidence.models import EvidenceEvent
from kindling.kindness import acts as kindness
from kindling.kindness.models import KindnessAct
from kindling.volunteering.models import CheckIn
from tests.factories import donations as payments
from tests.factories.principals import principal
from tests.factories.volunteering import CENTRE, north_of
from tests.helpers import rfc9162
from tests.helpers.evidence import events_of
from tests.helpers.volunteering import check_in

EVENTS = "/api/evidence"


def record_events(client, admin, **params) -> list[dict]:
    """The events of the organization's records, its people's joining (seq 1, 2 … first) aside."""
    return [e for e in events_of(client, admin, **params) if e["subject"]["kind"] != "member"]


def test_recording_an_act_appends_its_requested_level(client, make):
    admin = make.admin()
    member = make.member(admin)
    body = {
        "description": "Walked Ana home",
        "category": "community",
        "verificationLevel": 3,
        "recipientId": "ana@example.test",
    }
    act = client.post("/api/kindness", json=body, headers=member.headers).json()["data"]
    joined, joined_too, recorded = events_of(client, admin)
    assert [joined["type"], joined_too["type"]] == ["member.joined"] * 2
    assert recorded["seq"] == 3 and recorded["prevHash"] == joined_too["hash"]
    assert recorded["type"] == "act.recorded"
    assert recorded["subject"] == {"kind": "act", "id": act["id"]}
    assert recorded["actorId"] == member.user.id
    assert recorded["data"] == {
        "requestedLevel": 3,
        "category": "community",
        "contentDigest": replay.content_digest("Walked Ana home", "community", []),
        "createdAt": timestamp(make.db.get(KindnessAct, act["id"]).created_at),
    }
    assert recorded["hash"] == event_hash(recorded)


def test_a_change_of_content_or_level_is_logged_and_a_change_to_nothing_is_not(client, make):
    admin = make.admin()
    body = {
        "description": "Covered a shift",
        "category": "peer_recognition",
        "verificationLevel": 2,
        "recipientId": "x-1",
    }
    act_id = client.post("/api/kindness", json=body, headers=admin.headers).json()["data"]["id"]
    for change in ({"description": "Covered two shifts"}, {"verificationLevel": 4}, {"category": "peer_recognition"}):
        assert client.put(f"/api/kindness/{act_id}", json=change, headers=admin.headers).status_code == 200
    events = events_of(client, admin, subjectId=act_id)
    assert [e["type"] for e in events] == ["act.recorded", "act.changed", "act.changed"]
    two_shifts = replay.content_digest("Covered two shifts", "peer_recognition", [])
    assert events[1]["data"] == {
        "changed": ["description"],
        "requestedLevel": 2,
        "category": "peer_recognition",
        "contentDigest": two_shifts,
    }
    assert events[2]["data"] == {
        "changed": ["requestedLevel"],
        "requestedLevel": 4,
        "category": "peer_recognition",
        "contentDigest": two_shifts,
    }


def test_a_check_in_logs_its_distance_and_verdict(client, make, db):
    admin = make.admin()
    member = make.member(admin)
    opportunity = make.opportunity(admin)
    far = north_of(CENTRE, 350)
    response = client.post(
        f"/api/volunteer/{opportunity.id}/check-in",
        json={"latitude": far[0], "longitude": far[1]},
        headers=member.headers,
    )
    assert response.status_code == 201
    [logged] = record_events(client, admin)
    assert logged["type"] == "check_in.recorded" and logged["subject"] == {
        "kind": "check_in",
        "id": response.json()["id"],
    }
    assert logged["data"] == {
        "opportunityId": opportunity.id,
        "distanceMeters": 350.0,
        "code": None,
        "verified": False,
        "hours": 0,
        "checkedInAt": timestamp(db.get(CheckIn, response.json()["id"]).checked_in_at),
        "startsAt": timestamp(opportunity.starts_at),
        "endsAt": timestamp(opportunity.ends_at),
    }


def test_an_organisers_approval_of_a_check_in_is_logged(client, make, db):
    admin = make.admin()
    member = make.member(admin)
    opportunity = make.opportunity(admin)
    far = north_of(CENTRE, 350)
    checked_in = check_in(client, member, opportunity, far).json()
    approve = f"/api/volunteer/{opportunity.id}/check-ins/{checked_in['id']}/approve"
    assert client.post(approve, json={"note": "Seen at the door"}, headers=admin.headers).status_code == 200
    approved = events_of(client, admin, subjectId=checked_in["id"])[-1]
    assert approved["type"] == "check_in.approved" and approved["actorId"] == admin.user.id
    assert approved["data"] == {"opportunityId": opportunity.id, "verified": True, "hours": 0}


def test_verification_decisions_and_attestation_answers_are_logged(client, make, mailbox):
    admin = make.admin()
    manager, sender = make.manager(admin), make.member(admin)
    body = {
        "description": "Mentored an intern",
        "category": "peer_recognition",
        "verificationLevel": 5,
        "recipientId": "intern-1",
    }
    act_id = client.post("/api/kindness", json=body, headers=sender.headers).json()["data"]["id"]
    decided = client.post(
        f"/api/kindness/{act_id}/verifications", json={"level": 3, "decision": "approve"}, headers=manager.headers
    )
    assert decided.status_code == 201, decided.text
    ask = {
        "level": 5,
        "attesterName": "Priya Attester",
        "attesterOrganization": "Mentoring Trust",
        "attesterEmail": "priya@trust.test",
    }
    attestation = client.post(f"/api/kindness/{act_id}/attestations", json=ask, headers=sender.headers).json()["data"]
    token = mailbox.token_for("priya@trust.test")
    answer = {
        "token": token,
        "decision": "confirm",
        "name": "Priya Attester",
        "organization": "Mentoring Trust",
        "statement": "A private statement",
    }
    assert client.post("/api/attestations/answer", json=answer).status_code == 200
    events = events_of(client, admin, subjectId=act_id)
    assert [e["type"] for e in events] == ["act.recorded", "verification.decided", "attestation.answered"]
    assert events[1]["actorId"] == manager.user.id
    assert events[1]["data"] == {"level": 3, "decision": "approve", "authority": "manager"}
    assert events[2]["actorId"] is None
    assert events[2]["data"] == {
        "attestationId": attestation["id"],
        "level": 5,
        "decision": "confirm",
        "requestedBy": sender.user.id,
        "attesterDomain": "trust.test",
        "attesterKey": hashlib.sha256(f"{admin.organization_id}\npriya@trust.test".encode()).hexdigest(),
    }
    for private in ("Priya", "priya@", "private statement", token):
        assert private not in json.dumps(events)


def test_a_payment_event_logs_the_status_with_the_providers_event_id(client, make, db, payment_secret):
    admin = make.admin()
    donation = make.donation(make.member(admin), amount=4200)
    payload, headers = payments.signed(
        payments.payment_event("payment_intent.succeeded", donation, event_id="evt_evidence_1")
    )
    assert client.post("/webhooks/payments", content=payload, headers=headers).status_code == 200
    # A replay changes nothing, so it logs nothing.
    assert client.post("/webhooks/payments", content=payload, headers=headers).status_code == 200
    recorded, logged = record_events(client, admin)
    assert recorded["type"] == "donation.recorded"
    assert logged["type"] == "donation.status_set" and logged["actorId"] is None
    assert logged["data"] == {
        "status": "succeeded",
        "previousStatus": "pending",
        "amount": 4200,
        "currency": "USD",
        "providerEventId": "evt_evidence_1",
        "providerEventType": "payment_intent.succeeded",
    }


def test_events_hold_no_personal_data(client, make, db):
    admin = make.admin(name="Zelda Quartermain", email="zelda@private.example")
    make.act(admin, description="Secret description of a kind deed", recipient="recipient@private.example")
    donations.create_donation(
        db, caller=principal(admin), amount=100, currency="USD", recipient_name="Private Shelter", note="a private note"
    )
    make.activity.check_in(admin, admin)
    stored = json.dumps(events_of(client, admin))
    for personal in ("Zelda", "zelda@", "Secret description", "recipient@private", "Private Shelter", "private note"):
        assert personal not in stored


def test_the_chain_links_every_event_to_the_one_before(client, logged):
    events = events_of(client, logged)
    assert [e["seq"] for e in events] == [1, 2, 3, 4, 5, 6, 7]
    assert events[0]["prevHash"] == GENESIS_HASH
    for before, after in zip(events[:-1], events[1:], strict=True):
        assert after["prevHash"] == before["hash"]
    assert all(e["hash"] == event_hash(e) for e in events)
    verified = client.get("/api/evidence/verify", headers=logged.headers).json()
    assert verified == {
        "intact": True,
        "consistent": True,
        "checkpointsConsistent": True,
        "events": 7,
        "head": {"seq": 7, "hash": events[-1]["hash"]},
        "tree": {"size": 7, "rootHash": rfc9162.b64(rfc9162.mth(rfc9162.event_leaves(events)))},
        "firstBrokenSeq": None,
        "firstInconsistentCheckpoint": None,
        "witnessFork": None,
        "mismatches": [],
        "mismatchCount": 0,
    }


def test_an_organization_without_events_verifies_empty(db):
    # Everyone's joining is logged: only an organization nobody has joined yet has an empty log.
    organization = accounts.create_organization(db, name="Nobody yet")
    assert evidence.verify(db, organization_id=organization.id) == {
        "intact": True,
        "consistent": True,
        "checkpointsConsistent": True,
        "events": 0,
        "head": {"seq": 0, "hash": GENESIS_HASH},
        "tree": {"size": 0, "rootHash": rfc9162.b64(hashlib.sha256(b"").digest())},
        "firstBrokenSeq": None,
        "firstInconsistentCheckpoint": None,
        "witnessFork": None,
        "mismatches": [],
        "mismatchCount": 0,
    }


def test_each_organization_has_its_own_chain(client, make, logged):
    other = make.admin()
    make.activity.act(other)
    joined, act = events_of(client, other)
    assert joined["seq"] == 1 and joined["subject"] == {"kind": "member", "id": other.user.id}
    assert act["seq"] == 2 and act["organizationId"] == other.organization_id
    assert len(events_of(client, logged)) == 7


def test_pages_follow_seq_with_a_cursor(client, logged):
    seen, cursor = [], None
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = client.get(EVENTS, params=params, headers=logged.headers).json()
        seen += [e["seq"] for e in page["data"]]
        cursor = page["nextCursor"]
        if cursor is None:
            break
    assert seen == [1, 2, 3, 4, 5, 6, 7]


def test_filters_by_time_and_subject(client, logged):
    events = events_of(client, logged)
    middle = events[4]["occurredAt"]
    assert [e["seq"] for e in events_of(client, logged, **{"from": middle})] == [5, 6, 7]
    assert [e["seq"] for e in events_of(client, logged, to=middle)] == [1, 2, 3, 4, 5]
    act_id = events[3]["subject"]["id"]
    assert [e["seq"] for e in events_of(client, logged, subjectId=act_id)] == [4, 7]


@pytest.mark.parametrize(
    "params, code",
    [
        ({"from": "2026-02-01T00:00:00Z", "to": "2026-01-01T00:00:00Z"}, "validation_error"),
        ({"from": "yesterday"}, "validation_error"),
        ({"cursor": "not-a-cursor"}, "invalid_cursor"),
        ({"limit": 0}, "validation_error"),
        ({"subjectId": "bad id!"}, "validation_error"),
    ],
)
def test_bad_queries_are_refused(client, make, params, code):
    response = client.get(EVENTS, params=params, headers=make.admin().headers)
    assert response.status_code == 400
    assert response.json()["code"] in (code, "bad_request")


@pytest.mark.parametrize("path", [EVENTS, "/api/evidence/verify"])
def test_only_organization_admins_read_the_log(client, make, path):
    admin = make.admin()
    assert client.get(path).status_code == 401
    assert client.get(path, headers=make.member(admin).headers).status_code == 403
    assert client.get(path, headers=make.consultant().headers).status_code == 403
    assert client.post("/api/evidence/export", json={}, headers=make.member(admin).headers).status_code == 403


def test_an_event_is_rolled_back_with_its_change(db, make):
    admin = make.admin()
    joined = evidence.last_event(db, organization_id=admin.organization_id)
    savepoint = db.begin_nested()
    make.activity.act(admin)
    savepoint.rollback()
    assert evidence.last_event(db, organization_id=admin.organization_id) == joined
    make.activity.act(admin)
    assert evidence.last_event(db, organization_id=admin.organization_id)["seq"] == joined["seq"] + 1 == 2


def test_unknown_event_types_are_refused(db, make):
    with pytest.raises(ValueError, match="unknown evidence event type"):
        evidence.append(
            db,
            organization_id=make.admin().organization_id,
            type="act.deleted",
            subject=("act", "x"),
            actor_id=None,
            data={},
        )


# --- tampering ---


def verify(client, admin) -> dict:
    return client.get("/api/evidence/verify", headers=admin.headers).json()


def test_an_edited_event_is_found(client, logged, tamper):
    tamper(
        "UPDATE evidence_events SET data = :data WHERE organization_id = :org AND seq = 5",
        data=json.dumps({"opportunityId": "x", "distanceMeters": 1.0, "verified": True}),
        org=logged.organization_id,
    )
    result = verify(client, logged)
    assert result["intact"] is False and result["firstBrokenSeq"] == 5 and result["events"] == 7


def test_an_edited_event_with_a_recomputed_hash_is_found_by_the_next_link(client, logged, tamper, db):
    events, _ = evidence.list_events(db, organization_id=logged.organization_id)
    forged = events[3] | {"data": {"requestedLevel": 5, "category": "community"}}
    tamper(
        "UPDATE evidence_events SET data = :data, hash = :hash WHERE organization_id = :org AND seq = 4",
        data=json.dumps(forged["data"]),
        hash=event_hash(forged),
        org=logged.organization_id,
    )
    assert verify(client, logged)["firstBrokenSeq"] == 5


def test_a_deleted_event_is_found(client, logged, tamper):
    tamper("DELETE FROM evidence_events WHERE organization_id = :org AND seq = 4", org=logged.organization_id)
    result = verify(client, logged)
    assert result["intact"] is False and result["firstBrokenSeq"] == 4 and result["events"] == 6


def test_a_deleted_run_of_events_is_found_where_it_starts(client, logged, tamper):
    tamper(
        "DELETE FROM evidence_events WHERE organization_id = :org AND seq BETWEEN 4 AND 6", org=logged.organization_id
    )
    result = verify(client, logged)
    assert result["intact"] is False and result["firstBrokenSeq"] == 4 and result["events"] == 4


def test_an_edited_event_of_no_record_is_found(client, logged, tamper, db, monkeypatch):
    # Events of no record are read in windows of seqs: (6, 9] holds this one.
    monkeypatch.setattr(evidence, "_SEQ_WINDOW", 3)
    evidence.append(
        db,
        organization_id=logged.organization_id,
        type=SCIM_TOKEN_REVOKED,
        subject=("scim_token", "token-1"),
        actor_id=None,
        data={},
    )
    db.commit()
    assert verify(client, logged)["intact"] is True
    tamper(
        "UPDATE evidence_events SET data = :data WHERE organization_id = :org AND seq = 8",
        data=json.dumps({"source": "scim"}),
        org=logged.organization_id,
    )
    result = verify(client, logged)
    assert result["intact"] is False and result["firstBrokenSeq"] == 8


def test_a_deleted_last_event_is_found(client, logged, tamper):
    tamper("DELETE FROM evidence_events WHERE organization_id = :org AND seq = 7", org=logged.organization_id)
    result = verify(client, logged)
    assert result["intact"] is False and result["firstBrokenSeq"] == 7


@pytest.mark.parametrize("deleted", [1, 2, 4, 6, 7])
def test_a_deleted_event_is_found_wherever_it_lies(client, logged, tamper, deleted):
    tamper(
        "DELETE FROM evidence_events WHERE organization_id = :org AND seq = :seq",
        org=logged.organization_id,
        seq=deleted,
    )
    result = verify(client, logged)
    assert (result["intact"], result["firstBrokenSeq"], result["events"]) == (False, deleted, 6)


def test_a_hash_that_is_not_hex_breaks_the_chain_there(client, logged, tamper):
    tamper(
        "UPDATE evidence_events SET hash = :hash WHERE organization_id = :org AND seq = 3",
        hash="z" * 64,
        org=logged.organization_id,
    )
    result = verify(client, logged)
    assert (result["intact"], result["firstBrokenSeq"]) == (False, 3)


# --- append-only ---


def test_the_service_only_ever_inserts_into_the_log(client, make, db, runtime):
    statements, tree_statements, sequenced = [], [], []

    def record(_conn, _cursor, statement, _params, _context, _executemany):
        # A string may carry several statements (kindling/platform/write_behind.py).
        for one in filter(str.strip, statement.split(";\n")):
            if "evidence_append(" in one:
                sequenced.append(one)
            elif "evidence_events" in one:
                statements.append(one.split(None, 1)[0].upper())
            elif "evidence_tree_nodes" in one:
                tree_statements.append(one.split(None, 1)[0].upper())

    connection = db.connection()
    event.listen(connection.engine, "before_cursor_execute", record)
    try:
        admin = make.admin()
        member = make.member(admin)
        act = make.activity.act(member, level=2)
        kindness.update_act(db, runtime.cache, caller=principal(member), act_id=act.id, description="Changed")
        make.activity.check_in(member, admin)
        assert client.get("/api/evidence/verify", headers=admin.headers).json()["intact"]
        assert client.post("/api/evidence/export", json={}, headers=admin.headers).status_code == 200
        client.get(EVENTS, headers=admin.headers)
    finally:
        event.remove(connection.engine, "before_cursor_execute", record)
    # The two people's joining, the act, its level-2 confirmation, its change, the check-in, its check-out.
    if db.get_bind().dialect.name == "postgresql":
        # Each appended by the database's function, which writes the log and the tree by INSERT alone.
        assert len(sequenced) == 7 and set(statements) == set(tree_statements) == {"SELECT"}
        source = db.execute(text("SELECT prosrc FROM pg_proc WHERE proname = 'evidence_append'")).scalar_one()
        writes = set(re.findall(r"\b(INSERT INTO|UPDATE|DELETE FROM) (\w+)", source))
        assert writes == {
            ("INSERT INTO", "evidence_events"),
            ("INSERT INTO", "evidence_tree_nodes"),
            ("INSERT INTO", "evidence_heads"),
            ("UPDATE", "evidence_heads"),
        }
        return
    assert statements.count("INSERT") == 7 and not sequenced
    assert set(statements) == {"INSERT", "SELECT"}
    # The tree too: one insert per append (the frontier it extends is the head row's).
    assert tree_statements.count("INSERT") == statements.count("INSERT")
    assert set(tree_statements) == {"INSERT", "SELECT"}


def postgresql_only(db):
    if db.get_bind().dialect.name != "postgresql":
        pytest.skip("the trigger exists on PostgreSQL; test_the_service_only_ever_inserts_into_the_log covers SQLite")


def assert_append_only(db, statement: str, organization_id: str) -> None:
    """PostgreSQL's trigger refuses `statement` as an append-only table's refusal."""
    postgresql_only(db)
    savepoint = db.begin_nested()
    with pytest.raises(Exception) as refused:
        db.execute(text(statement), {"org": organization_id})
    savepoint.rollback()
    assert "the evidence log is append-only" in str(refused.value)
    assert getattr(refused.value.orig, "pgcode", None) == "42501"


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE evidence_events SET type = 'imported' WHERE organization_id = :org",
        "DELETE FROM evidence_events WHERE organization_id = :org",
        "TRUNCATE evidence_events",
    ],
)
def test_postgresql_refuses_to_change_or_remove_events(db, logged, statement):
    assert_append_only(db, statement, logged.organization_id)
    assert (
        db.scalar(
            select(EvidenceEvent.seq)
            .where(EvidenceEvent.organization_id == logged.organization_id)
            .order_by(EvidenceEvent.seq.desc())
            .limit(1)
        )
        == 7
    )


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE evidence_tree_nodes SET hash = hash WHERE organization_id = :org",
        "DELETE FROM evidence_tree_nodes WHERE organization_id = :org",
        "TRUNCATE evidence_tree_nodes",
    ],
)
def test_postgresql_refuses_to_change_or_remove_tree_nodes(db, logged, statement):
    assert_append_only(db, statement, logged.organization_id)
