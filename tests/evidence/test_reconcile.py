"""Verify replays the log into the facts it implies and finds every record that says otherwise."""

from __future__ import annotations

import pytest
from sqlalchemy import select, text

from kindling.accounts.events import MEMBER_REACTIVATED
from kindling.evidence import log as evidence
from kindling.evidence import reconcile
from kindling.evidence.chain import GENESIS_HASH
from kindling.evidence.models import EvidenceHead
from kindling.kindness.models import KindnessAct
from kindling.platform.base import new_id, utcnow
from tests.helpers.evidence import only_mismatch, refused, verify


@pytest.fixture
def reported(make):
    """An organization with an act verified at level 3, one at level 1, a check-in of 3 hours and a pending donation."""
    admin = make.admin()
    member = make.member(admin)
    make.activity.act(member, level=3)
    make.activity.act(member)
    make.activity.check_in(member, admin, hours=3)
    make.activity.donation(member, status="pending")
    return admin


def test_a_consistent_log_and_its_reports(client, reported):
    result = verify(client, reported)
    assert (result["intact"], result["consistent"], result["mismatches"], result["mismatchCount"]) == (
        True,
        True,
        [],
        0,
    )
    assert client.get("/api/compliance/gri", headers=reported.headers).status_code == 200
    assert client.post("/api/evidence/export", json={}, headers=reported.headers).status_code == 200


def test_a_raised_verified_level_is_caught_and_named(client, db, reported, tamper):
    act_id = db.scalar(
        select(KindnessAct.id).where(
            KindnessAct.organization_id == reported.organization_id, KindnessAct.verified_level == 1
        )
    )
    tamper("UPDATE kindness_acts SET verified_level = 4, verification_status = 'verified' WHERE id = :id", id=act_id)
    result = verify(client, reported)
    assert result["mismatchCount"] == 1
    assert result["mismatches"] == [
        {"subject": {"kind": "act", "id": act_id}, "field": "verifiedLevel", "log": 1, "table": 4}
    ]
    refused(client, reported)


def test_a_check_ins_hours_set_to_1000_are_caught_and_named(client, reported, tamper):
    tamper("UPDATE volunteer_check_ins SET hours = 1000 WHERE organization_id = :org", org=reported.organization_id)
    mismatch = only_mismatch(client, reported)
    assert (mismatch["subject"]["kind"], mismatch["field"], mismatch["log"], mismatch["table"]) == (
        "check_in",
        "hours",
        3.0,
        1000,
    )
    refused(client, reported)


def test_a_donation_marked_succeeded_without_an_event_is_caught_and_named(client, reported, tamper):
    tamper("UPDATE donations SET status = 'succeeded' WHERE organization_id = :org", org=reported.organization_id)
    mismatch = only_mismatch(client, reported)
    assert (mismatch["subject"]["kind"], mismatch["field"], mismatch["log"], mismatch["table"]) == (
        "donation",
        "status",
        "pending",
        "succeeded",
    )
    refused(client, reported)


def test_an_act_row_with_no_event_is_caught_and_named(client, db, reported):
    sender = db.scalar(select(KindnessAct.user_id).where(KindnessAct.organization_id == reported.organization_id))
    forged = KindnessAct(
        id=new_id(),
        organization_id=reported.organization_id,
        user_id=sender,
        recipient_id="someone",
        description="Forged",
        category="community",
        verification_level=3,
        verified_level=3,
        verification_status="verified",
        media=[],
        created_at=utcnow(),
        updated_at=utcnow(),
    )
    db.add(forged)
    db.flush()
    mismatch = only_mismatch(client, reported)
    assert mismatch["subject"] == {"kind": "act", "id": forged.id}
    assert mismatch["field"] == "record" and mismatch["log"] is None and mismatch["table"]["verifiedLevel"] == 3
    refused(client, reported)


def test_events_of_a_record_that_is_gone_are_a_mismatch(client, db, reported, tamper):
    donation_id = db.scalar(
        text("SELECT id FROM donations WHERE organization_id = :org"), {"org": reported.organization_id}
    )
    tamper("DELETE FROM donations WHERE id = :id", id=donation_id)
    mismatch = only_mismatch(client, reported)
    assert mismatch["subject"] == {"kind": "donation", "id": donation_id} and mismatch["table"] is None


def test_at_most_100_are_listed_and_all_are_counted(client, reported, tamper, monkeypatch):
    monkeypatch.setattr(reconcile, "MISMATCHES_LISTED", 2)
    monkeypatch.setattr(reconcile, "_RECONCILE_BATCH", 1)  # and batches meet where they should
    tamper("UPDATE kindness_acts SET category = 'wellbeing' WHERE organization_id = :org", org=reported.organization_id)
    tamper("UPDATE volunteer_check_ins SET verified = false WHERE organization_id = :org", org=reported.organization_id)
    result = verify(client, reported)
    assert result["mismatchCount"] == 3 and len(result["mismatches"]) == 2
    assert {m["field"] for m in result["mismatches"]} == {"category"}


def test_a_head_row_moved_back_is_found(client, db, reported, tamper):
    head = verify(client, reported)["head"]
    tamper(
        "UPDATE evidence_heads SET seq = 3, hash = (SELECT hash FROM evidence_events WHERE organization_id = :org AND seq = 3) "
        "WHERE organization_id = :org",
        org=reported.organization_id,
    )
    result = verify(client, reported)
    assert result["intact"] is False and result["firstBrokenSeq"] == head["seq"]
    assert result["head"] == head  # the log's last event, not the head row
    refused(client, reported)


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE evidence_heads SET seq = 3, hash = :genesis WHERE organization_id = :org",
        "UPDATE evidence_heads SET seq = seq + 1 WHERE organization_id = :org",
        "DELETE FROM evidence_heads WHERE organization_id = :org",
        "TRUNCATE evidence_heads CASCADE",
    ],
)
def test_postgresql_refuses_any_change_of_a_head_row_but_an_advance(db, reported, statement):
    if db.get_bind().dialect.name != "postgresql":
        pytest.skip("the trigger exists on PostgreSQL; test_a_head_row_moved_back_is_found covers SQLite")
    savepoint = db.begin_nested()
    with pytest.raises(Exception) as refused_change:
        db.execute(text(statement), {"org": reported.organization_id, "genesis": GENESIS_HASH})
    savepoint.rollback()
    assert "refused" in str(refused_change.value)
    assert getattr(refused_change.value.orig, "pgcode", None) == "42501"
    assert (
        db.get(EvidenceHead, reported.organization_id).seq
        == evidence.last_event(db, organization_id=reported.organization_id)["seq"]
    )


def test_one_append_of_several_events_advances_the_head_over_them(db, reported):
    organization_id = reported.organization_id
    before = evidence.last_event(db, organization_id=organization_id)
    entries = [evidence.Entry(MEMBER_REACTIVATED, ("member", reported.user.id), None, {"source": "hand"})] * 3
    evidence.append_all(db, organization_id=organization_id, entries=entries)
    appended = evidence.list_events(db, organization_id=organization_id, limit=1000)[0][-3:]
    assert [event["seq"] for event in appended] == [before["seq"] + 1, before["seq"] + 2, before["seq"] + 3]
    assert [event["prevHash"] for event in appended] == [before["hash"], appended[0]["hash"], appended[1]["hash"]]
    head = db.get(EvidenceHead, organization_id)
    assert (head.seq, head.hash) == (appended[-1]["seq"], appended[-1]["hash"])


@pytest.mark.parametrize(
    "links",
    [
        # A run whose second event does not chain to its first.
        [None, "f" * 64],
        # One event that does not chain to the head (the trigger's check of a single step).
        ["f" * 64],
    ],
)
def test_postgresql_refuses_an_advance_to_events_with_a_broken_link(db, reported, links):
    if db.get_bind().dialect.name != "postgresql":
        pytest.skip("the trigger exists on PostgreSQL")
    organization_id = reported.organization_id
    head = evidence.last_event(db, organization_id=organization_id)
    savepoint = db.begin_nested()
    last = head["seq"] + len(links)
    for seq, prev_hash in zip(range(head["seq"] + 1, last + 1), links, strict=True):
        prev_hash = prev_hash or head["hash"]
        db.execute(
            text(
                "INSERT INTO evidence_events (organization_id, seq, type, subject_kind, subject_id, data, occurred_at, "
                "prev_hash, hash) VALUES (:org, :seq, 'imported', 'act', 'x', '{}', now(), :prev, :hash)"
            ),
            {"org": organization_id, "seq": seq, "prev": prev_hash, "hash": f"{seq:064x}"},
        )
    with pytest.raises(Exception) as refused_change:
        db.execute(
            text("UPDATE evidence_heads SET seq = :seq, hash = :hash WHERE organization_id = :org"),
            {"org": organization_id, "seq": last, "hash": f"{last:064x}"},
        )
    savepoint.rollback()
    assert getattr(refused_change.value.orig, "pgcode", None) == "42501"
    assert db.get(EvidenceHead, organization_id).seq == head["seq"]


def test_a_standing_dispute_counts_as_level_1_in_the_log_as_in_the_tables(client, make):
    """The replay derives an act's level by the rule the service applies: a dispute outweighs
    every approval until an admin's level-4 decision."""
    admin = make.admin()
    recipient = make.member(admin)
    act = make.act(admin, recipient, verification_level=4)
    make.verify(act, 3)
    make.verify(act, 2, confirm=False)
    assert make.db.get(KindnessAct, act.id).verified_level == 1
    result = verify(client, admin)
    assert result["consistent"], result["mismatches"]
    make.verify(act, 4)
    assert make.db.get(KindnessAct, act.id).verified_level == 4
    assert verify(client, admin)["consistent"]
