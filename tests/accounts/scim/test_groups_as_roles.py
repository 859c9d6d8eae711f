"""Groups as roles: a person's role is the highest of the hand-set one and their groups' (docs/decisions.md §13)."""

from __future__ import annotations

from tests.helpers import assert_envelope
from tests.helpers.scim import GROUP, ok, patch, user

GROUPS = "/api/organization/groups"


def _setup(client, make):
    admin = make.admin()
    scim = make.scim_token(admin)
    member = make.member(admin)
    member_id = ok(client.post("/scim/v2/Users", headers=scim, json=user(member.user.email)), 201)["id"]
    group = ok(
        client.post("/scim/v2/Groups", headers=scim, json={"schemas": [GROUP], "displayName": "Team Leads"}), 201
    )
    return admin, scim, member, member_id, group


def _role(client, admin, user_id):
    people = client.get("/api/organization/members", headers=admin.headers).json()["data"]
    return next(person for person in people if person["id"] == user_id)["role"]


def test_admins_and_managers_list_groups_with_member_counts(client, make):
    admin, scim, member, member_id, group = _setup(client, make)
    ok(
        client.patch(
            f"/scim/v2/Groups/{group['id']}",
            headers=scim,
            json=patch({"op": "add", "path": "members", "value": [{"value": member_id}]}),
        )
    )
    listed = client.get(GROUPS, headers=admin.headers).json()
    assert listed == {
        "data": [{"id": group["id"], "displayName": "Team Leads", "externalId": None, "role": None, "memberCount": 1}],
        "nextCursor": None,
    }
    assert_envelope(client.get(GROUPS, headers=member.headers), 403, "forbidden")
    assert_envelope(
        client.patch(f"{GROUPS}/{group['id']}", headers=make.manager(admin).headers, json={"role": "admin"}),
        403,
        "forbidden",
    )
    assert_envelope(
        client.patch(f"{GROUPS}/{group['id']}", headers=make.admin().headers, json={"role": "admin"}), 404, "not_found"
    )
    people = client.get("/api/organization/members", headers=admin.headers).json()["data"]
    assert next(p for p in people if p["id"] == member_id)["groups"] == [
        {"id": group["id"], "displayName": "Team Leads"}
    ]


def test_mapping_promotes_and_demotes_the_members(client, make):
    admin, scim, member, member_id, group = _setup(client, make)
    ok(
        client.patch(
            f"/scim/v2/Groups/{group['id']}",
            headers=scim,
            json=patch({"op": "add", "path": "members", "value": [{"value": member_id}]}),
        )
    )
    assert _role(client, admin, member_id) == "member"
    assert (
        client.patch(f"{GROUPS}/{group['id']}", headers=admin.headers, json={"role": "manager"}).json()["data"]["role"]
        == "manager"
    )
    assert _role(client, admin, member_id) == "manager"
    assert client.get("/api/auth/session", headers=member.headers).json()["data"]["user"]["role"] == "manager"
    assert client.patch(f"{GROUPS}/{group['id']}", headers=admin.headers, json={"role": None}).status_code == 200
    assert _role(client, admin, member_id) == "member"


def test_membership_promotes_and_demotes_and_the_hand_set_role_stays_the_floor(client, make):
    admin, scim, member, member_id, group = _setup(client, make)
    client.patch(f"{GROUPS}/{group['id']}", headers=admin.headers, json={"role": "admin"})
    ok(
        client.put(
            f"/scim/v2/Groups/{group['id']}",
            headers=scim,
            json={"schemas": [GROUP], "displayName": "Team Leads", "members": [{"value": member_id}]},
        )
    )
    assert _role(client, admin, member_id) == "admin"
    client.patch(f"/api/organization/members/{member_id}", headers=admin.headers, json={"role": "manager"})
    assert _role(client, admin, member_id) == "admin"
    ok(
        client.patch(
            f"/scim/v2/Groups/{group['id']}",
            headers=scim,
            json=patch({"op": "replace", "path": "members", "value": []}),
        )
    )
    assert _role(client, admin, member_id) == "manager"
    ok(
        client.patch(
            f"/scim/v2/Groups/{group['id']}",
            headers=scim,
            json=patch({"op": "add", "path": "members", "value": [{"value": member_id}]}),
        )
    )
    assert _role(client, admin, member_id) == "admin"
    assert client.delete(f"/scim/v2/Groups/{group['id']}", headers=scim).status_code == 204
    assert _role(client, admin, member_id) == "manager"
    events = client.get("/api/evidence", headers=admin.headers, params={"type": "member.role_changed"}).json()["data"]
    assert [(e["data"]["from"], e["data"]["to"], e["data"]["source"]) for e in events] == [
        ("member", "admin", "group"),
        ("admin", "manager", "group"),
        ("manager", "admin", "group"),
        ("admin", "manager", "group"),
    ]


def _listed(client, admin, user_id) -> dict:
    people = client.get("/api/organization/members", headers=admin.headers).json()["data"]
    return next(person for person in people if person["id"] == user_id)


def test_a_group_mapped_to_auditor_gives_the_grant_beside_the_role(client, make):
    admin, scim, member, member_id, group = _setup(client, make)
    mapped = client.patch(f"{GROUPS}/{group['id']}", headers=admin.headers, json={"role": "auditor"})
    assert mapped.status_code == 200 and mapped.json()["data"]["role"] == "auditor"
    assert client.get("/api/evidence/verify", headers=member.headers).status_code == 403
    ok(
        client.patch(
            f"/scim/v2/Groups/{group['id']}",
            headers=scim,
            json=patch({"op": "add", "path": "members", "value": [{"value": member_id}]}),
        )
    )
    assert {k: _listed(client, admin, member_id)[k] for k in ("role", "auditor")} == {"role": "member", "auditor": True}
    assert client.get("/api/evidence/verify", headers=member.headers).status_code == 200
    # Given by hand as well, taking it by hand leaves the group's; leaving the group ends it.
    hand = f"/api/organization/members/{member_id}"
    assert client.patch(hand, headers=admin.headers, json={"auditor": True}).json()["data"]["auditor"] is True
    assert client.patch(hand, headers=admin.headers, json={"auditor": False}).json()["data"]["auditor"] is True
    ok(
        client.patch(
            f"/scim/v2/Groups/{group['id']}",
            headers=scim,
            json=patch({"op": "remove", "path": f'members[value eq "{member_id}"]'}),
        )
    )
    assert _listed(client, admin, member_id)["auditor"] is False
    assert client.get("/api/evidence/verify", headers=member.headers).status_code == 403
    events = client.get(f"/api/evidence?subjectId={member_id}&type=member.auditor_set", headers=admin.headers).json()
    assert [(e["data"], e["actorId"]) for e in events["data"]] == [
        ({"auditor": True, "source": "group"}, None),
        ({"auditor": False, "source": "group"}, None),
    ]
