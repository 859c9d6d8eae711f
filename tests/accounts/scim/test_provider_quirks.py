"""What Okta and Microsoft Entra ID really send, replayed literally (docs/decisions.md §13)."""

from __future__ import annotations

import urllib.parse

from sqlalchemy import select

from kindling.accounts.models import User
from tests.helpers.scim import ENTERPRISE, GROUP, PATCH, USER, ok, scim_error

OKTA_CREATE = {
    "schemas": [USER],
    "userName": "test.user@okta.local",
    "name": {"givenName": "Test", "familyName": "User"},
    "emails": [{"primary": True, "value": "test.user@okta.local", "type": "work"}],
    "displayName": "Test User",
    "locale": "en-US",
    "externalId": "00ujl29u0le5T6Aj10h7",
    "groups": [],
    "password": "1mz050nq",
    "active": True,
}


def _okta_user(client, scim) -> dict:
    return ok(client.post("/scim/v2/Users", headers=scim, json=OKTA_CREATE), 201)


def test_okta_looks_users_up_by_user_name_without_case(client, make):
    scim = make.scim_token(make.admin())
    empty = ok(
        client.get(
            "/scim/v2/Users?filter=userName%20eq%20%22test.user%40okta.local%22&startIndex=1&count=100", headers=scim
        )
    )
    assert empty == {
        "schemas": ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
        "totalResults": 0,
        "startIndex": 1,
        "itemsPerPage": 0,
        "Resources": [],
    }
    created = _okta_user(client, scim)
    caps = urllib.parse.quote('userName eq "TEST.USER@OKTA.LOCAL"')
    found = ok(client.get(f"/scim/v2/Users?filter={caps}&startIndex=1&count=100", headers=scim))
    assert found["totalResults"] == 1 and found["Resources"][0]["id"] == created["id"]
    assert isinstance(found["startIndex"], int) and isinstance(found["itemsPerPage"], int)


def test_okta_create_then_duplicate_is_409_uniqueness(client, make):
    scim = make.scim_token(make.admin())
    created = _okta_user(client, scim)
    assert created["userName"] == "test.user@okta.local" and created["externalId"] == "00ujl29u0le5T6Aj10h7"
    assert "password" not in created and "locale" not in created
    scim_error(client.post("/scim/v2/Users", headers=scim, json=OKTA_CREATE), 409, "uniqueness")


def test_okta_deactivates_with_a_pathless_replace(client, make, db):
    admin = make.admin()
    scim = make.scim_token(admin)
    created = _okta_user(client, scim)
    body = {"schemas": [PATCH], "Operations": [{"op": "replace", "value": {"active": False}}]}
    patched = ok(client.patch(f"/scim/v2/Users/{created['id']}", headers=scim, json=body))
    assert patched["active"] is False
    db.expire_all()
    assert db.get(User, created["id"]).active is False
    assert ok(client.get(f"/scim/v2/Users/{created['id']}", headers=scim))["active"] is False
    body["Operations"][0]["value"]["active"] = True
    assert ok(client.patch(f"/scim/v2/Users/{created['id']}", headers=scim, json=body))["active"] is True


def test_entra_capitalised_replace_with_the_string_false(client, make, db):
    scim = make.scim_token(make.admin())
    created = _okta_user(client, scim)
    body = {"schemas": [PATCH], "Operations": [{"op": "Replace", "path": "active", "value": "False"}]}
    assert ok(client.patch(f"/scim/v2/Users/{created['id']}", headers=scim, json=body))["active"] is False
    body = {"schemas": [PATCH], "Operations": [{"op": "Replace", "path": "active", "value": "True"}]}
    assert ok(client.patch(f"/scim/v2/Users/{created['id']}", headers=scim, json=body))["active"] is True


def test_entra_replace_of_the_work_email_creates_the_entry(client, make, db):
    scim = make.scim_token(make.admin())
    created = ok(
        client.post(
            "/scim/v2/Users", headers=scim, json={"schemas": [USER], "userName": "Test_User_dfeef4c5", "active": True}
        ),
        201,
    )
    body = {
        "schemas": [PATCH],
        "Operations": [
            {"op": "Replace", "path": 'emails[type eq "work"].value', "value": "updatedEmail@microsoft.com"},
            {"op": "Replace", "path": "name.familyName", "value": "updatedFamilyName"},
        ],
    }
    patched = ok(client.patch(f"/scim/v2/Users/{created['id']}", headers=scim, json=body))
    assert patched["emails"] == [{"type": "work", "value": "updatedEmail@microsoft.com"}]
    assert patched["name"] == {"familyName": "updatedFamilyName"}
    db.expire_all()
    assert db.get(User, created["id"]).email == "updatedemail@microsoft.com"
    found = ok(
        client.get(
            "/scim/v2/Users",
            headers=scim,
            params={"filter": 'emails[type eq "work"].value eq "updatedEmail@microsoft.com"'},
        )
    )
    assert [r["id"] for r in found["Resources"]] == [created["id"]]


def test_entra_pathless_replace_with_dotted_and_urn_keys(client, make, db):
    scim = make.scim_token(make.admin())
    created = _okta_user(client, scim)
    body = {
        "schemas": [PATCH],
        "Operations": [
            {
                "op": "replace",
                "value": {
                    "displayName": "Kkom",
                    "name.givenName": "Kim",
                    f"{ENTERPRISE}:employeeNumber": "7",
                    f"{ENTERPRISE}:department": "Sales",
                },
            }
        ],
    }
    patched = ok(client.patch(f"/scim/v2/Users/{created['id']}", headers=scim, json=body))
    assert patched["displayName"] == "Kkom" and patched["name"]["givenName"] == "Kim"
    assert patched[ENTERPRISE] == {"employeeNumber": "7", "department": "Sales"}
    db.expire_all()
    person = db.get(User, created["id"])
    assert (person.name, person.employee_number, person.department) == ("Kkom", "7", "Sales")


def test_entra_sets_the_manager_by_bare_id(client, make, db):
    scim = make.scim_token(make.admin())
    created = _okta_user(client, scim)
    boss = ok(
        client.post("/scim/v2/Users", headers=scim, json={"schemas": [USER], "userName": "boss", "active": True}), 201
    )
    body = {"schemas": [PATCH], "Operations": [{"op": "Add", "path": f"{ENTERPRISE}:manager", "value": boss["id"]}]}
    patched = ok(client.patch(f"/scim/v2/Users/{created['id']}", headers=scim, json=body))
    assert patched[ENTERPRISE]["manager"]["value"] == boss["id"]


def test_entra_removes_members_by_value_list_and_okta_by_filter(client, make):
    scim = make.scim_token(make.admin())
    people = [
        ok(
            client.post("/scim/v2/Users", headers=scim, json={"schemas": [USER], "userName": f"u{n}", "active": True}),
            201,
        )["id"]
        for n in range(3)
    ]
    group = ok(
        client.post(
            "/scim/v2/Groups",
            headers=scim,
            json={"schemas": [GROUP], "displayName": "Group1DisplayName", "members": []},
        ),
        201,
    )
    add = {
        "schemas": [PATCH],
        "Operations": [{"op": "Add", "path": "members", "value": [{"value": person} for person in people]}],
    }
    added = ok(client.patch(f"/scim/v2/Groups/{group['id']}", headers=scim, json=add))
    assert sorted(m["value"] for m in added["members"]) == sorted(people)
    entra = {"schemas": [PATCH], "Operations": [{"op": "Remove", "path": "members", "value": [{"value": people[0]}]}]}
    remaining = ok(client.patch(f"/scim/v2/Groups/{group['id']}", headers=scim, json=entra))
    assert sorted(m["value"] for m in remaining["members"]) == sorted(people[1:])
    okta = {"schemas": [PATCH], "Operations": [{"op": "remove", "path": f'members[value eq "{people[1]}"]'}]}
    remaining = ok(client.patch(f"/scim/v2/Groups/{group['id']}", headers=scim, json=okta))
    assert [m["value"] for m in remaining["members"]] == [people[2]]


def test_entra_lists_groups_by_display_name_without_members(client, make):
    scim = make.scim_token(make.admin())
    person = ok(
        client.post("/scim/v2/Users", headers=scim, json={"schemas": [USER], "userName": "u", "active": True}), 201
    )["id"]
    group = ok(
        client.post(
            "/scim/v2/Groups",
            headers=scim,
            json={"schemas": [GROUP], "displayName": "Engineering", "members": [{"value": person}]},
        ),
        201,
    )
    found = ok(
        client.get(
            "/scim/v2/Groups",
            headers=scim,
            params={"filter": 'displayName eq "engineering"', "excludedAttributes": "members"},
        )
    )
    assert (
        found["totalResults"] == 1
        and found["Resources"][0]["id"] == group["id"]
        and "members" not in found["Resources"][0]
    )
    scim_error(
        client.post("/scim/v2/Groups", headers=scim, json={"schemas": [GROUP], "displayName": "ENGINEERING"}),
        409,
        "uniqueness",
    )


def test_application_json_is_accepted_too(client, make, db):
    scim = {**make.scim_token(make.admin()), "Content-Type": "application/json"}
    ok(client.post("/scim/v2/Users", headers=scim, json={"schemas": [USER], "userName": "plain", "active": True}), 201)
    assert db.scalar(select(User.id).where(User.name == "plain")) is not None


def test_okta_group_push_adds_members_with_their_display(client, make):
    """Okta's group push, as its SCIM 2.0 reference shows it: each member as `{value, display}`."""
    scim = make.scim_token(make.admin())
    leaving = _okta_user(client, scim)["id"]
    joining = ok(
        client.post(
            "/scim/v2/Users",
            headers=scim,
            json={**OKTA_CREATE, "userName": "joining@okta.local", "emails": [{"value": "joining@okta.local"}]},
        ),
        201,
    )["id"]
    pushed = {"schemas": [GROUP], "displayName": "Test SCIMv2", "members": []}
    group = ok(client.post("/scim/v2/Groups", headers=scim, json=pushed), 201)
    # The full push of the membership.
    okta_replace = {
        "schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        "Operations": [
            {
                "op": "replace",
                "path": "members",
                "value": [{"value": leaving, "display": "test.user@okta.local"}],
            }
        ],
    }
    replaced = ok(client.patch(f"/scim/v2/Groups/{group['id']}", headers=scim, json=okta_replace))
    assert [m["value"] for m in replaced["members"]] == [leaving]
    # A membership update: one member out by filter, one in with its display.
    okta_update = {
        "schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        "Operations": [
            {"op": "remove", "path": f'members[value eq "{leaving}"]'},
            {"op": "add", "path": "members", "value": [{"value": joining, "display": "test.user@okta.local"}]},
        ],
    }
    updated = ok(client.patch(f"/scim/v2/Groups/{group['id']}", headers=scim, json=okta_update))
    assert [m["value"] for m in updated["members"]] == [joining]
    # The display sent is not kept: a member is shown under their own name.
    shown = ok(client.get(f"/scim/v2/Groups/{group['id']}", headers=scim, params={"attributes": "members.display"}))
    assert shown["members"] == [{"display": "Test User"}]
    # The rename Okta sends with each membership update carries the group's id.
    okta_rename = {
        "schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        "Operations": [{"op": "replace", "value": {"id": group["id"], "displayName": "Test SCIMv2"}}],
    }
    assert ok(client.patch(f"/scim/v2/Groups/{group['id']}", headers=scim, json=okta_rename))["displayName"] == (
        "Test SCIMv2"
    )
    # A path-less add of members is read the same way.
    pathless = {
        "schemas": [PATCH],
        "Operations": [{"op": "add", "value": {"members": [{"value": leaving, "display": "x"}]}}],
    }
    both = ok(client.patch(f"/scim/v2/Groups/{group['id']}", headers=scim, json=pathless))
    assert sorted(m["value"] for m in both["members"]) == sorted([leaving, joining])
