"""Lifecycle over SCIM: deactivation revokes at once, reactivation restores, the last admin stays."""

from __future__ import annotations

from tests.helpers.scim import GROUP, PATCH, ok, patch, scim_error, user


def _link(client, scim, account) -> str:
    return ok(client.post("/scim/v2/Users", headers=scim, json=user(account.user.email)), 201)["id"]


def test_active_false_revokes_every_session_and_active_true_restores(client, make):
    admin = make.admin()
    scim = make.scim_token(admin)
    member = make.member(admin)
    user_id = _link(client, scim, member)
    assert client.get("/api/auth/session", headers=member.headers).status_code == 200
    ok(
        client.patch(
            f"/scim/v2/Users/{user_id}", headers=scim, json=patch({"op": "replace", "path": "active", "value": False})
        )
    )
    assert client.get("/api/auth/session", headers=member.headers).status_code == 401
    ok(client.put(f"/scim/v2/Users/{user_id}", headers=scim, json=user(member.user.email, active=True)))
    signed_in = client.post("/api/auth/sign-in", json={"email": member.user.email, "password": "correct horse battery"})
    assert signed_in.status_code == 200


def test_the_last_admin_is_never_deactivated_nor_deleted(client, make):
    admin = make.admin()
    scim = make.scim_token(admin)
    user_id = _link(client, scim, admin)
    body = scim_error(
        client.patch(
            f"/scim/v2/Users/{user_id}", headers=scim, json=patch({"op": "replace", "value": {"active": False}})
        ),
        409,
    )
    assert "admin" in body["detail"]
    scim_error(client.delete(f"/scim/v2/Users/{user_id}", headers=scim), 409)
    assert client.get("/api/auth/session", headers=admin.headers).status_code == 200
    assert ok(client.get(f"/scim/v2/Users/{user_id}", headers=scim))["active"] is True


def test_the_last_admin_is_never_demoted_by_a_group(client, make):
    admin = make.admin()
    scim = make.scim_token(admin)
    admin_id = _link(client, scim, admin)
    group = ok(
        client.post(
            "/scim/v2/Groups",
            headers=scim,
            json={"schemas": [GROUP], "displayName": "Admins", "members": [{"value": admin_id}]},
        ),
        201,
    )
    assert (
        client.patch(
            f"/api/organization/groups/{group['id']}", headers=admin.headers, json={"role": "admin"}
        ).status_code
        == 200
    )
    # Demoted by hand, the admin stays admin through the group; the group cannot then let go.
    response = client.patch(f"/api/organization/members/{admin_id}", headers=admin.headers, json={"role": "member"})
    assert response.json()["data"]["role"] == "admin"
    remove = {"schemas": [PATCH], "Operations": [{"op": "remove", "path": f'members[value eq "{admin_id}"]'}]}
    scim_error(client.patch(f"/scim/v2/Groups/{group['id']}", headers=scim, json=remove), 409)
    assert (
        client.patch(f"/api/organization/groups/{group['id']}", headers=admin.headers, json={"role": None}).status_code
        == 409
    )
    scim_error(client.delete(f"/scim/v2/Groups/{group['id']}", headers=scim), 409)
    assert ok(client.get(f"/scim/v2/Groups/{group['id']}", headers=scim))["members"][0]["value"] == admin_id
