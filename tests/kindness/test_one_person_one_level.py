"""One person, one level (docs/decisions.md §6): canonical ids, the recipient decides level 2 only,
and a standing dispute counts as level 1 everywhere until an admin's level-4 decision."""

from __future__ import annotations

import pytest

from kindling.compliance import metrics
from kindling.platform import periods
from tests.helpers import assert_envelope
from tests.helpers.verification import decide, get_act, make_team, post_act


@pytest.fixture
def team(make):
    return make_team(make, recipient_manager="manager")


def stats(client, account) -> dict:
    response = client.get("/api/kindness/stats", headers=account.headers)
    assert response.status_code == 200, response.text
    return response.json()["data"]


def verified_acts(db, account) -> int:
    window = periods.window()
    return metrics.activity(db, organization_ids=[account.organization_id], window=window)[
        account.organization_id
    ].kindness.verified


# --- canonical ids ---


@pytest.mark.parametrize("spelling", [str.upper, lambda id_: "{" + id_ + "}", lambda id_: id_.replace("-", "").upper()])
def test_a_sender_cannot_recognise_themselves_by_spelling_their_id_differently(client, team, spelling):
    body = {
        "description": "Did my own job",
        "category": "community",
        "verificationLevel": 2,
        "recipientId": spelling(team["sender"].user.id),
    }
    response = client.post("/api/kindness", json=body, headers=team["sender"].headers)
    assert_envelope(response, 400, "self_recognition")


def test_a_member_named_in_capitals_is_the_member(client, team):
    recipient = team["recipient"]
    act = post_act(client, team["sender"], recipient.user.id.upper(), 2)
    assert act["recipientId"] == recipient.user.id
    assert act["verification"] == {"status": "pending", "requestedLevel": 2, "awaiting": "recipient"}
    ask = {"level": 2, "attesterName": "Me again", "attesterEmail": "me@elsewhere.test"}
    refused = client.post(f"/api/kindness/{act['id']}/attestations", json=ask, headers=team["sender"].headers)
    assert_envelope(refused, 409, "recipient_is_member")
    assert decide(client, recipient, act["id"], 2, "confirm").status_code == 201
    assert get_act(client, team["admin"], act["id"])["verifiedLevel"] == 2


def test_top_recipients_count_one_person_once(client, team):
    recipient_id = team["recipient"].user.id
    post_act(client, team["sender"], recipient_id)
    post_act(client, team["manager"], recipient_id.upper())
    assert stats(client, team["admin"])["topRecipients"] == [{"userId": recipient_id, "count": 2}]


def test_filtering_by_sender_reads_the_id_in_any_case(client, team):
    act = post_act(client, team["sender"], team["recipient"].user.id)
    listed = client.get(
        "/api/kindness", params={"userId": team["sender"].user.id.upper()}, headers=team["admin"].headers
    )
    assert [found["id"] for found in listed.json()["data"]] == [act["id"]]


# --- the recipient decides level 2 only ---


def test_a_recipient_who_manages_cannot_also_approve_level_three(client, team):
    recipient = team["recipient_manager"]
    act = post_act(client, team["sender"], recipient.user.id, 3)
    assert decide(client, recipient, act["id"], 2, "confirm").status_code == 201
    assert_envelope(decide(client, recipient, act["id"], 3, "approve"), 403, "conflict_of_interest")
    assert get_act(client, team["admin"], act["id"])["verifiedLevel"] == 2


def test_a_recipient_who_administers_cannot_decide_level_three_or_four(client, make, team):
    other_admin = make.member(team["admin"])
    other_admin.user.role = "admin"
    make.db.flush()
    act = post_act(client, other_admin, team["admin"].user.id.upper(), 4)
    assert_envelope(decide(client, team["admin"], act["id"], 3, "approve"), 403, "conflict_of_interest")
    assert_envelope(
        decide(client, team["admin"], act["id"], 4, "approve", reference="HR-1"), 403, "conflict_of_interest"
    )


def test_one_person_gives_one_level_of_an_act(client, make, team):
    act = post_act(client, team["sender"], team["recipient"].user.id, 4)
    assert decide(client, team["admin"], act["id"], 3, "approve").status_code == 201
    assert_envelope(
        decide(client, team["admin"], act["id"], 4, "approve", reference="HR-1"), 403, "conflict_of_interest"
    )
    second_admin = make.member(team["admin"])
    second_admin.user.role = "admin"
    make.db.flush()
    assert decide(client, second_admin, act["id"], 4, "approve", reference="HR-1").status_code == 201
    assert get_act(client, team["admin"], act["id"])["verifiedLevel"] == 4


# --- a standing dispute counts as level 1 ---


@pytest.mark.parametrize("dispute_first", [True, False], ids=["dispute then approval", "approval then dispute"])
def test_a_standing_dispute_counts_as_level_one_everywhere(client, db, team, dispute_first):
    act = post_act(client, team["sender"], team["recipient"].user.id, 4, category="community")
    steps = [(team["recipient"], 2, "dispute"), (team["manager"], 3, "approve")]
    for decider, level, decision in steps if dispute_first else reversed(steps):
        assert decide(client, decider, act["id"], level, decision).status_code == 201
    after = get_act(client, team["admin"], act["id"])
    assert (after["verifiedLevel"], after["rippleScore"]) == (1, 1)
    assert after["verification"] == {"status": "disputed", "requestedLevel": 4, "awaiting": "admin"}
    assert stats(client, team["admin"])["totalRippleScore"] == 1
    assert verified_acts(db, team["admin"]) == 0

    # HR looked into it: an admin's level-4 approval resolves the dispute.
    assert decide(client, team["admin"], act["id"], 4, "approve", reference="HR-7").status_code == 201
    after = get_act(client, team["admin"], act["id"])
    assert (after["verifiedLevel"], after["verification"]["status"]) == (4, "verified")
    assert stats(client, team["admin"])["totalRippleScore"] == 4
    assert verified_acts(db, team["admin"]) == 1


def test_a_level_four_rejection_upholds_the_dispute(client, db, team):
    act = post_act(client, team["sender"], team["recipient"].user.id, 4)
    assert decide(client, team["manager"], act["id"], 3, "approve").status_code == 201
    assert decide(client, team["recipient"], act["id"], 2, "dispute").status_code == 201
    assert decide(client, team["admin"], act["id"], 4, "reject", note="Not what happened").status_code == 201
    after = get_act(client, team["admin"], act["id"])
    assert (after["verifiedLevel"], after["verification"]["status"]) == (1, "rejected")
    assert verified_acts(db, team["admin"]) == 0
