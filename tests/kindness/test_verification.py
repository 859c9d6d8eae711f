"""Earned verification (docs/decisions.md §6): who decides each level, conflicts, the pending list, PUT."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from kindling.kindness.verification_models import VerificationDecision
from tests.helpers import assert_envelope
from tests.helpers.verification import ACTS, decide, get_act, make_team, pending, post_act


@pytest.fixture
def team(make):
    return make_team(make, bystander="member")


# --- what an act says about its verification ---


@pytest.mark.parametrize(
    ("level", "member_recipient", "status", "awaiting"),
    [
        (1, True, "verified", None),
        (2, True, "pending", "recipient"),
        (2, False, "pending", "external"),
        (3, True, "pending", "manager"),
        (4, False, "pending", "admin"),
        (5, True, "pending", "external"),
    ],
)
def test_create_answers_the_request_back_and_starts_at_level_one(
    client, team, level, member_recipient, status, awaiting
):
    recipient = team["recipient"].user.id if member_recipient else "someone-outside"
    act = post_act(client, team["sender"], recipient, level)
    assert (act["verificationLevel"], act["verifiedLevel"], act["rippleScore"]) == (level, 1, 1)
    assert act["verification"] == {"status": status, "requestedLevel": level, "awaiting": awaiting}


# --- level 2: the recipient ---


def test_the_recipient_confirms_level_two(client, team):
    act = post_act(client, team["sender"], team["recipient"].user.id, 2)
    response = decide(client, team["recipient"], act["id"], 2, "confirm", note="Yes, thank you")
    assert response.status_code == 201
    decision = response.json()["data"]
    assert set(decision) == {"id", "actId", "level", "decision", "decidedBy", "decidedAt", "note"}
    assert (decision["actId"], decision["level"], decision["decision"], decision["decidedBy"], decision["note"]) == (
        act["id"],
        2,
        "confirm",
        team["recipient"].user.id,
        "Yes, thank you",
    )
    after = get_act(client, team["admin"], act["id"])
    assert (after["verifiedLevel"], after["rippleScore"]) == (2, 2)
    assert after["verification"] == {"status": "verified", "requestedLevel": 2, "awaiting": None}
    listed = client.get(f"{ACTS}/{act['id']}/verifications", headers=team["bystander"].headers)
    assert listed.status_code == 200 and listed.json()["data"] == [decision]


def test_only_the_recipient_confirms_level_two(client, team):
    act = post_act(client, team["sender"], team["recipient"].user.id, 3)
    for someone in ("admin", "manager", "bystander"):
        assert_envelope(decide(client, team[someone], act["id"], 2, "confirm"), 403, "forbidden")
    assert get_act(client, team["admin"], act["id"])["verifiedLevel"] == 1


def test_a_disputed_act_says_so_and_stays_unverified(client, team):
    act = post_act(client, team["sender"], team["recipient"].user.id, 2)
    assert decide(client, team["recipient"], act["id"], 2, "dispute").status_code == 201
    after = get_act(client, team["admin"], act["id"])
    assert after["verifiedLevel"] == 1
    assert after["verification"] == {"status": "disputed", "requestedLevel": 2, "awaiting": None}


def test_a_dispute_below_the_requested_level_waits_for_an_admins_level_four(client, team):
    act = post_act(client, team["sender"], team["recipient"].user.id, 3)
    assert decide(client, team["recipient"], act["id"], 2, "dispute").status_code == 201
    assert get_act(client, team["admin"], act["id"])["verification"] == {
        "status": "disputed",
        "requestedLevel": 3,
        "awaiting": "admin",
    }
    assert act["id"] in pending(client, team["admin"])
    # A later approval does not override the dispute.
    assert decide(client, team["manager"], act["id"], 3, "approve").status_code == 201
    after = get_act(client, team["admin"], act["id"])
    assert (after["verifiedLevel"], after["verification"]["status"]) == (1, "disputed")
    # An admin's level-4 decision resolves it, though only level 3 was asked for.
    assert decide(client, team["admin"], act["id"], 4, "approve", reference="HR-9").status_code == 201
    after = get_act(client, team["admin"], act["id"])
    assert (after["verifiedLevel"], after["verification"]["status"]) == (4, "verified")


# --- levels 3 and 4: managers and admins ---


def test_a_manager_or_admin_approves_level_three(client, team):
    for approver in ("manager", "admin"):
        act = post_act(client, team["sender"], level=3)
        assert decide(client, team[approver], act["id"], 3, "approve").status_code == 201
        assert get_act(client, team["sender"], act["id"])["verifiedLevel"] == 3


def test_members_may_not_approve_and_level_four_is_for_admins(client, team):
    act = post_act(client, team["sender"], team["recipient"].user.id, 4)
    for someone in ("bystander", "recipient"):
        assert_envelope(decide(client, team[someone], act["id"], 3, "approve"), 403, "forbidden")
    assert_envelope(decide(client, team["manager"], act["id"], 4, "approve", reference="HR-1"), 403, "forbidden")
    response = decide(client, team["admin"], act["id"], 4, "approve", reference="HR-2026-0042")
    assert response.status_code == 201 and response.json()["data"]["reference"] == "HR-2026-0042"
    # The highest level whose evidence is recorded: levels 2 and 3 were never decided.
    after = get_act(client, team["admin"], act["id"])
    assert (after["verifiedLevel"], after["rippleScore"], after["verification"]["status"]) == (4, 4, "verified")


def test_approving_level_four_needs_its_reference(client, team):
    act = post_act(client, team["sender"], level=4)
    assert_envelope(decide(client, team["admin"], act["id"], 4, "approve"), 400, "validation_error")
    assert decide(client, team["admin"], act["id"], 4, "reject", note="No HR record").status_code == 201
    after = get_act(client, team["admin"], act["id"])
    assert after["verification"] == {"status": "rejected", "requestedLevel": 4, "awaiting": None}
    assert after["verifiedLevel"] == 1


def test_nobody_verifies_an_act_they_sent(client, make):
    admin = make.admin()
    manager = make.manager(admin)
    recipient = make.member(admin)
    for sender in (admin, manager):
        act = post_act(client, sender, recipient.user.id, 4)
        for level, decision in ((2, "confirm"), (3, "approve"), (4, "approve")):
            assert_envelope(
                decide(client, sender, act["id"], level, decision, reference="HR-1"), 403, "conflict_of_interest"
            )
        assert get_act(client, sender, act["id"])["verifiedLevel"] == 1


def test_a_level_above_the_request_or_decided_twice_is_a_conflict(client, team, db):
    act = post_act(client, team["sender"], team["recipient"].user.id, 3)
    assert_envelope(
        decide(client, team["admin"], act["id"], 4, "approve", reference="HR-1"), 409, "above_requested_level"
    )
    assert decide(client, team["manager"], act["id"], 3, "reject").status_code == 201
    assert_envelope(decide(client, team["admin"], act["id"], 3, "approve"), 409, "already_decided")
    assert decide(client, team["recipient"], act["id"], 2, "confirm").status_code == 201
    assert_envelope(decide(client, team["recipient"], act["id"], 2, "dispute"), 409, "already_decided")
    stored = db.scalars(select(VerificationDecision.decision).where(VerificationDecision.act_id == act["id"])).all()
    assert sorted(stored) == ["confirm", "reject"]
    after = get_act(client, team["admin"], act["id"])
    assert after["verifiedLevel"] == 2
    assert after["verification"] == {"status": "rejected", "requestedLevel": 3, "awaiting": None}


@pytest.mark.parametrize(("level", "decision"), [(2, "approve"), (3, "confirm"), (4, "dispute")])
def test_a_decision_that_does_not_fit_its_level_is_refused(client, team, level, decision):
    act = post_act(client, team["sender"], team["recipient"].user.id, 4)
    assert_envelope(
        decide(client, team["admin"], act["id"], level, decision, reference="HR-1"), 400, "validation_error"
    )


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"level": 3},
        {"decision": "approve"},
        {"level": 5, "decision": "approve"},
        {"level": 1, "decision": "approve"},
        {"level": "3", "decision": "approve"},
        {"level": 3, "decision": "maybe"},
        {"level": 3, "decision": "approve", "note": ""},
        {"level": 3, "decision": "approve", "note": "x" * 1001},
        {"level": 4, "decision": "approve", "reference": "x" * 201},
        {"level": 3, "decision": "approve", "decidedBy": "someone"},
        [],
        "approve",
    ],
)
def test_malformed_decisions_are_refused(client, team, body):
    act = post_act(client, team["sender"], level=4)
    response = client.post(f"{ACTS}/{act['id']}/verifications", json=body, headers=team["admin"].headers)
    assert_envelope(response, 400, "validation_error")
    assert get_act(client, team["admin"], act["id"])["verifiedLevel"] == 1


def test_another_organizations_act_is_not_found(client, team, make):
    theirs = make.admin()
    act = post_act(client, make.member(theirs), level=3)
    missing = "00000000-0000-0000-0000-000000000000"
    for path in (f"{ACTS}/{act['id']}", f"{ACTS}/{missing}"):
        foreign = decide(client, team["admin"], path.rsplit("/", 1)[1], 3, "approve")
        assert_envelope(foreign, 404, "not_found")
        assert_envelope(client.get(f"{path}/verifications", headers=team["admin"].headers), 404, "not_found")
        attestation = {
            "level": 5,
            "attesterName": "Ada",
            "attesterOrganization": "Food Bank",
            "attesterEmail": "ada@bank.test",
        }
        assert_envelope(
            client.post(f"{path}/attestations", json=attestation, headers=team["admin"].headers), 404, "not_found"
        )
    assert get_act(client, theirs, act["id"])["verifiedLevel"] == 1


def test_consultants_and_anonymous_callers_are_refused(client, team, make):
    act = post_act(client, team["sender"], level=3)
    consultant = make.consultant()
    assert_envelope(decide(client, consultant, act["id"], 3, "approve"), 403, "forbidden")
    assert_envelope(client.get("/api/verifications/pending", headers=consultant.headers), 403, "forbidden")
    assert_envelope(
        client.post(f"{ACTS}/{act['id']}/verifications", json={"level": 3, "decision": "approve"}),
        401,
        "unauthenticated",
    )
    assert_envelope(client.get("/api/verifications/pending"), 401, "unauthenticated")


# --- the pending list ---


def test_each_caller_sees_what_waits_for_them(client, team):
    to_confirm = post_act(client, team["sender"], team["recipient"].user.id, 2)
    to_approve = post_act(client, team["sender"], team["recipient"].user.id, 3)
    for_hr = post_act(client, team["sender"], level=4)
    own = post_act(client, team["manager"], level=3)
    post_act(client, team["sender"], level=5)  # awaits an external attester: nobody's list
    post_act(client, team["sender"], level=1)
    assert pending(client, team["recipient"]) == [to_confirm["id"]]
    assert pending(client, team["manager"]) == [to_approve["id"]]
    assert pending(client, team["admin"]) == [own["id"], for_hr["id"], to_approve["id"]]
    assert pending(client, team["sender"]) == pending(client, team["bystander"]) == []
    assert decide(client, team["manager"], to_approve["id"], 3, "approve").status_code == 201
    assert pending(client, team["admin"]) == [own["id"], for_hr["id"]]


def test_pending_pages_with_a_cursor(client, team):
    made = [post_act(client, team["sender"], level=3)["id"] for _ in range(5)]
    first = client.get("/api/verifications/pending", params={"limit": 2}, headers=team["manager"].headers).json()
    second = client.get(
        "/api/verifications/pending",
        params={"limit": 10, "cursor": first["nextCursor"]},
        headers=team["manager"].headers,
    ).json()
    assert [a["id"] for a in first["data"] + second["data"]] == made[::-1]
    assert second["nextCursor"] is None
    bad = client.get("/api/verifications/pending", params={"cursor": "nope"}, headers=team["manager"].headers)
    assert_envelope(bad, 400, "invalid_cursor")


# --- an admin's PUT changes the request, never the verified level ---


def test_an_admins_put_is_a_new_request(client, team):
    act = post_act(client, team["sender"], team["recipient"].user.id, 3)
    assert decide(client, team["manager"], act["id"], 3, "approve").status_code == 201
    raised = client.put(f"{ACTS}/{act['id']}", json={"verificationLevel": 4}, headers=team["admin"].headers).json()[
        "data"
    ]
    assert (raised["verificationLevel"], raised["verifiedLevel"], raised["rippleScore"]) == (4, 3, 3)
    assert raised["verification"] == {"status": "pending", "requestedLevel": 4, "awaiting": "admin"}
    lowered = client.put(f"{ACTS}/{act['id']}", json={"verificationLevel": 2}, headers=team["admin"].headers).json()[
        "data"
    ]
    assert (lowered["verificationLevel"], lowered["verifiedLevel"]) == (2, 3)
    assert lowered["verification"] == {"status": "verified", "requestedLevel": 2, "awaiting": None}
    for field in ({"verifiedLevel": 5}, {"verification": {"status": "verified"}}):
        assert_envelope(
            client.put(f"{ACTS}/{act['id']}", json=field, headers=team["admin"].headers), 400, "validation_error"
        )
        assert_envelope(
            client.post(
                ACTS,
                json={"description": "x", "category": "community", "verificationLevel": 1, "recipientId": "r", **field},
                headers=team["sender"].headers,
            ),
            400,
            "validation_error",
        )


# --- what weighs an act counts its verified level ---


def test_compliance_counts_only_evidenced_acts(client, team):
    post_act(client, team["sender"], level=5, category="wellbeing")
    approved = post_act(client, team["sender"], level=3, category="wellbeing")
    assert decide(client, team["manager"], approved["id"], 3, "approve").status_code == 201
    report = client.get("/api/compliance/b-corp", headers=team["admin"].headers)
    assert report.status_code == 200, report.text
    data = report.json()["data"]
    assert data["complianceRate"] == 50.0
    evidence = {line["code"]: line["evidence"] for line in data["indicators"]}
    # The level 5 act asked for more, but only the approved level 3 is evidence.
    assert evidence["Workers: Health, Wellness, & Safety"] == {"verified": 1, "total": 2}
