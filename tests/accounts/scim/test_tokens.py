"""SCIM tokens: made by an admin and shown once, stored as SHA-256, at most 5, revoked at once."""

from __future__ import annotations

import hashlib

from kindling.accounts.scim.models import ScimToken
from tests.helpers import assert_envelope
from tests.helpers.scim import ok, scim_error


def test_an_admin_makes_a_token_shown_once_and_stored_as_its_hash(client, make, db):
    admin = make.admin()
    response = client.post("/api/organization/scim-tokens", headers=admin.headers, json={"description": "Okta"})
    assert response.status_code == 201, response.text
    created = response.json()["data"]
    assert created["token"].startswith("kscim_") and len(created["token"]) >= 6 + 43
    stored = db.get(ScimToken, created["id"])
    assert stored.token_hash == hashlib.sha256(created["token"].encode()).hexdigest()
    listed = client.get("/api/organization/scim-tokens", headers=admin.headers).json()["data"]
    assert listed == [
        {"id": created["id"], "description": "Okta", "createdAt": created["createdAt"], "lastUsedAt": None}
    ]
    scim = {"Authorization": f"Bearer {created['token']}"}
    ok(client.get("/scim/v2/Users", headers=scim))
    assert (
        client.get("/api/organization/scim-tokens", headers=admin.headers).json()["data"][0]["lastUsedAt"] is not None
    )


def test_at_most_five_live_tokens(client, make):
    admin = make.admin()
    ids = [
        client.post("/api/organization/scim-tokens", headers=admin.headers, json={"description": f"t{n}"}).json()[
            "data"
        ]["id"]
        for n in range(5)
    ]
    assert_envelope(
        client.post("/api/organization/scim-tokens", headers=admin.headers, json={"description": "sixth"}),
        409,
        "too_many_tokens",
    )
    assert client.delete(f"/api/organization/scim-tokens/{ids[0]}", headers=admin.headers).status_code == 204
    assert (
        client.post("/api/organization/scim-tokens", headers=admin.headers, json={"description": "sixth"}).status_code
        == 201
    )


def test_a_revoked_token_is_refused_at_once(client, make):
    admin = make.admin()
    created = client.post("/api/organization/scim-tokens", headers=admin.headers, json={"description": "Entra"}).json()[
        "data"
    ]
    scim = {"Authorization": f"Bearer {created['token']}"}
    ok(client.get("/scim/v2/Users", headers=scim))
    assert client.delete(f"/api/organization/scim-tokens/{created['id']}", headers=admin.headers).status_code == 204
    scim_error(client.get("/scim/v2/Users", headers=scim), 401)
    assert_envelope(
        client.delete(f"/api/organization/scim-tokens/{created['id']}", headers=admin.headers), 404, "not_found"
    )
    assert client.get("/api/organization/scim-tokens", headers=admin.headers).json()["data"] == []


def test_only_admins_manage_tokens_and_only_their_own(client, make):
    admin, stranger = make.admin(), make.admin()
    manager = make.manager(admin)
    assert_envelope(
        client.post("/api/organization/scim-tokens", headers=manager.headers, json={"description": "x"}),
        403,
        "forbidden",
    )
    assert_envelope(client.get("/api/organization/scim-tokens", headers=manager.headers), 403, "forbidden")
    created = client.post("/api/organization/scim-tokens", headers=admin.headers, json={"description": "x"}).json()[
        "data"
    ]
    assert_envelope(
        client.delete(f"/api/organization/scim-tokens/{created['id']}", headers=stranger.headers), 404, "not_found"
    )


def test_every_scim_failure_is_a_scim_error_401_and_unknown_paths_included(client, make):
    scim = make.scim_token(make.admin())
    scim_error(client.get("/scim/v2/Users"), 401)
    scim_error(client.get("/scim/v2/Users", headers={"Authorization": "Bearer kscim_wrong"}), 401)
    scim_error(client.get("/scim/v2/Users", headers={"Authorization": "Basic abc"}), 401)
    scim_error(client.get("/scim/v2/b3c5a8e2-0000-4000-8000-000000000000", headers=scim), 404)
    scim_error(client.get("/scim/v2/Users/no-such-id", headers=scim), 404)
    scim_error(client.post("/scim/v2/ServiceProviderConfig", headers=scim, json={}), 405)
    scim_error(client.delete("/scim/v2/Schemas", headers=scim), 405)


def test_a_token_acts_on_its_own_organization_only(client, make):
    first, second = make.scim_token(make.admin()), make.scim_token(make.admin())
    created = ok(client.post("/scim/v2/Users", headers=first, json={"userName": "ada@first.test", "active": True}), 201)
    scim_error(client.get(f"/scim/v2/Users/{created['id']}", headers=second), 404)
    assert ok(client.get("/scim/v2/Users", headers=second))["totalResults"] == 0
