"""Linking an existing account at SCIM create never changes its password or hand-set role (docs/decisions.md §13)."""

from __future__ import annotations

from tests.factories.accounts import PASSWORD
from tests.helpers.scim import GROUP, ok, patch, user

SIGN_IN = "/api/auth/sign-in"


def _signs_in(client, email: str, password: str) -> bool:
    response = client.post(SIGN_IN, json={"email": email, "password": password})
    client.cookies.clear()  # the new session's cookie would conflict with the admin's bearer token
    assert response.status_code in (200, 401), response.text
    return response.status_code == 200


def _role(client, admin, user_id: str) -> str:
    listed = client.get("/api/organization/members", headers=admin.headers)
    assert listed.status_code == 200, listed.text
    people = listed.json()["data"]
    return next(person for person in people if person["id"] == user_id)["role"]


def test_linking_an_admin_keeps_their_password_and_role(client, make):
    admin = make.admin()
    scim = make.scim_token(admin)
    email = admin.user.email
    linked = ok(client.post("/scim/v2/Users", headers=scim, json=user(email, password="scim-given-1")), 201)
    assert linked["id"] == admin.user.id and "password" not in linked
    assert _signs_in(client, email, PASSWORD)
    assert not _signs_in(client, email, "scim-given-1")
    # Nor later, by a replace or a patch of the linked user.
    ok(client.put(f"/scim/v2/Users/{linked['id']}", headers=scim, json=user(email, password="scim-given-2")))
    replace = patch({"op": "replace", "path": "password", "value": "scim-given-3"})
    ok(client.patch(f"/scim/v2/Users/{linked['id']}", headers=scim, json=replace))
    assert not _signs_in(client, email, "scim-given-2") and not _signs_in(client, email, "scim-given-3")
    assert _signs_in(client, email, PASSWORD)
    assert _role(client, admin, admin.user.id) == "admin"
    assert client.get("/api/auth/session", headers=admin.headers).status_code == 200


def test_group_mappings_apply_to_a_linked_account(client, make):
    admin = make.admin()
    scim = make.scim_token(admin)
    member = make.member(admin)
    linked = ok(client.post("/scim/v2/Users", headers=scim, json=user(member.user.email, password="scim-given-1")), 201)
    assert _role(client, admin, linked["id"]) == "member"
    group = ok(
        client.post(
            "/scim/v2/Groups",
            headers=scim,
            json={"schemas": [GROUP], "displayName": "Leads", "members": [{"value": linked["id"]}]},
        ),
        201,
    )
    mapped = client.patch(f"/api/organization/groups/{group['id']}", headers=admin.headers, json={"role": "manager"})
    assert mapped.status_code == 200, mapped.text
    assert _role(client, admin, linked["id"]) == "manager"
    assert _signs_in(client, member.user.email, PASSWORD)
    assert not _signs_in(client, member.user.email, "scim-given-1")


def test_a_person_the_directory_provisions_takes_its_password(client, make):
    admin = make.admin()
    scim = make.scim_token(admin)
    created = ok(
        client.post("/scim/v2/Users", headers=scim, json=user("new@example.test", password="first-pass-1")), 201
    )
    assert _signs_in(client, "new@example.test", "first-pass-1")
    ok(
        client.put(
            f"/scim/v2/Users/{created['id']}", headers=scim, json=user("new@example.test", password="next-pass-2")
        )
    )
    assert _signs_in(client, "new@example.test", "next-pass-2")
    assert not _signs_in(client, "new@example.test", "first-pass-1")
