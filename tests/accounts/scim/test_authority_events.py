"""Authority changes are evidence: appended to the chain with ids only, and listed by type."""

from __future__ import annotations

import json

from tests.helpers import assert_envelope
from tests.helpers.scim import ENTERPRISE, ok, patch, user


def _events(client, admin, type_):
    response = client.get("/api/evidence", headers=admin.headers, params={"type": type_})
    assert response.status_code == 200, response.text
    return response.json()["data"]


def test_authority_changes_are_in_the_chain_with_ids_only(client, make):
    admin = make.admin()
    created = client.post("/api/organization/scim-tokens", headers=admin.headers, json={"description": "Okta"}).json()[
        "data"
    ]
    scim = {"Authorization": f"Bearer {created['token']}"}
    boss = ok(client.post("/scim/v2/Users", headers=scim, json=user("boss@corp.test", displayName="Boss Person")), 201)
    ada = ok(
        client.post(
            "/scim/v2/Users",
            headers=scim,
            json=user("ada@corp.test", **{ENTERPRISE: {"manager": {"value": boss["id"]}}}),
        ),
        201,
    )
    ok(
        client.patch(
            f"/scim/v2/Users/{ada['id']}", headers=scim, json=patch({"op": "replace", "value": {"active": False}})
        )
    )
    ok(
        client.patch(
            f"/scim/v2/Users/{ada['id']}", headers=scim, json=patch({"op": "replace", "value": {"active": True}})
        )
    )
    client.delete(f"/api/organization/scim-tokens/{created['id']}", headers=admin.headers)

    joined = _events(client, admin, "member.joined")
    assert [(e["subject"], e["data"]) for e in joined] == [
        ({"kind": "member", "id": admin.user.id}, {"role": "admin", "source": "sign_up"}),
        ({"kind": "member", "id": boss["id"]}, {"role": "member", "source": "scim"}),
        ({"kind": "member", "id": ada["id"]}, {"role": "member", "source": "scim"}),
    ]
    [line] = _events(client, admin, "member.manager_set")
    assert line["subject"]["id"] == ada["id"] and line["data"] == {
        "managerId": boss["id"],
        "previousManagerId": None,
        "source": "scim",
    }
    assert [e["data"] for e in _events(client, admin, "member.deactivated")] == [{"source": "scim"}]
    assert [e["data"] for e in _events(client, admin, "member.reactivated")] == [{"source": "scim"}]
    for type_ in ("scim.token_created", "scim.token_revoked"):
        [event] = _events(client, admin, type_)
        assert event["subject"] == {"kind": "scim_token", "id": created["id"]} and event["actorId"] == admin.user.id
    everything = json.dumps(client.get("/api/evidence", headers=admin.headers, params={"limit": 1000}).json())
    for personal in ("boss@corp.test", "ada@corp.test", "Boss Person", "Okta", created["token"]):
        assert personal not in everything
    assert client.get("/api/evidence/verify", headers=admin.headers).json()["intact"] is True


def test_an_admins_changes_by_hand_are_recorded_too(client, make):
    admin = make.admin()
    member, boss = make.member(admin), make.manager(admin)
    client.patch(
        f"/api/organization/members/{member.user.id}",
        headers=admin.headers,
        json={"role": "manager", "managerId": boss.user.id},
    )
    client.delete(f"/api/organization/members/{member.user.id}", headers=admin.headers)
    [changed] = _events(client, admin, "member.role_changed")
    assert changed["actorId"] == admin.user.id and changed["data"] == {
        "from": "member",
        "to": "manager",
        "source": "hand",
    }
    assert _events(client, admin, "member.manager_set")[0]["data"]["source"] == "hand"
    assert _events(client, admin, "member.deactivated")[0]["data"] == {"source": "hand"}
    assert_envelope(
        client.get("/api/evidence", headers=admin.headers, params={"type": "member.promoted"}), 400, "validation_error"
    )
