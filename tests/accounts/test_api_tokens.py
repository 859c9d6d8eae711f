"""Personal API tokens: created once, stored hashed, a bearer credential with the owner's rights,
refused once revoked, expired or its owner deactivated: by an admin, by the identity provider's
webhook or over SCIM (docs/decisions.md §2)."""

from __future__ import annotations

import datetime as dt
import hashlib

from sqlalchemy import select

from kindling.accounts import sessions
from kindling.accounts.models import ApiToken
from kindling.accounts.principal_cache import principals
from kindling.platform.base import utcnow
from tests.factories import identity
from tests.helpers import assert_envelope
from tests.helpers.webhooks import deliver_identity

TOKEN_FIELDS = {"id", "name", "createdAt", "expiresAt", "lastUsedAt"}
SCIM_USER = "urn:ietf:params:scim:schemas:core:2.0:User"
SCIM_PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp"


def create(client, account, **body):
    return client.post(
        "/api/auth/tokens", json={"name": "CI pipeline", "expiresInDays": 30, **body}, headers=account.headers
    )


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def test_a_token_is_shown_once_stored_as_its_hash_and_carries_its_owners_rights(client, make, db):
    admin = make.admin()
    before = utcnow()
    response = create(client, admin, name="  Nightly export  ", expiresInDays=90)
    assert response.status_code == 201, response.text
    created = response.json()["data"]
    token = created["token"]
    assert token.startswith("kpat_") and len(token) == 48
    assert created["name"] == "Nightly export" and created["lastUsedAt"] is None
    expires = dt.datetime.fromisoformat(created["expiresAt"])
    assert before + dt.timedelta(days=90) <= expires <= utcnow() + dt.timedelta(days=90)
    row = db.scalar(select(ApiToken).where(ApiToken.id == created["id"]))
    assert row.token_hash == hashlib.sha256(token.encode()).hexdigest()
    assert token not in {str(value) for value in vars(row).values()}

    listed = client.get("/api/auth/tokens", headers=admin.headers).json()["data"]
    assert [item["id"] for item in listed] == [created["id"]]
    assert set(listed[0]) == TOKEN_FIELDS and token not in str(listed)

    # The owner's rights: an admin's token reads the people list, and the session it stands for.
    session = client.get("/api/auth/session", headers=bearer(token))
    assert session.status_code == 200 and session.json()["data"]["user"]["id"] == admin.user.id
    assert session.json()["data"]["session"]["expiresAt"] == created["expiresAt"]
    assert client.get("/api/organization/members", headers=bearer(token)).status_code == 200
    db.expire_all()
    assert db.get(ApiToken, created["id"]).last_used_at is not None


def test_a_members_token_has_a_members_rights_only(client, make):
    member = make.api_token(make.member(make.admin()))
    assert_envelope(client.get("/api/organization/members", headers=member.headers), 403, "forbidden")


def test_a_token_does_not_mint_tokens(client, make):
    with_token = make.api_token(make.admin())
    assert_envelope(create(client, with_token), 403, "session_required")
    assert client.get("/api/auth/tokens", headers=with_token.headers).status_code == 200


def test_lifetime_and_name_are_bounded(client, make):
    admin = make.admin()
    for body in ({"expiresInDays": 0}, {"expiresInDays": 366}, {"name": ""}, {"name": " \t"}, {"name": "x" * 101}):
        assert_envelope(create(client, admin, **body), 400, "validation_error")
    assert client.get("/api/auth/tokens", headers=admin.headers).json()["data"] == []
    assert create(client, admin, expiresInDays=1).status_code == 201
    assert create(client, admin, expiresInDays=365).status_code == 201


def test_a_revoked_token_is_refused_and_only_its_owner_revokes_it(client, make):
    admin = make.admin()
    other = make.member(admin)
    created = create(client, admin).json()["data"]
    assert client.get("/api/auth/session", headers=bearer(created["token"])).status_code == 200
    assert_envelope(client.delete(f"/api/auth/tokens/{created['id']}", headers=other.headers), 404, "not_found")
    assert client.delete(f"/api/auth/tokens/{created['id']}", headers=admin.headers).status_code == 204
    assert_envelope(client.get("/api/auth/session", headers=bearer(created["token"])), 401, "unauthenticated")
    assert client.get("/api/auth/tokens", headers=admin.headers).json()["data"] == []
    assert_envelope(client.delete(f"/api/auth/tokens/{created['id']}", headers=admin.headers), 404, "not_found")


def test_signing_out_with_a_token_revokes_that_token_only(client, make):
    admin = make.admin()
    token = make.api_token(admin)
    assert client.post("/api/auth/sign-out", headers=token.headers).status_code == 200
    assert_envelope(client.get("/api/auth/session", headers=token.headers), 401)
    assert client.get("/api/auth/session", headers=admin.headers).status_code == 200


def test_an_expired_token_is_refused(client, make, db):
    admin = make.admin()
    token = make.api_token(admin)
    assert client.get("/api/auth/session", headers=token.headers).status_code == 200
    row = db.scalar(select(ApiToken).where(ApiToken.token_hash == sessions.hash_token(token.token)))
    row.expires_at = utcnow() - dt.timedelta(seconds=1)
    db.flush()
    principals.clear()  # what a second later would do
    assert_envelope(client.get("/api/auth/session", headers=token.headers), 401, "unauthenticated")
    # Still listed, so its owner sees it lapsed.
    assert [item["id"] for item in client.get("/api/auth/tokens", headers=admin.headers).json()["data"]] == [row.id]


def test_removing_a_member_revokes_their_tokens(client, make, db):
    admin = make.admin()
    member = make.member(admin)
    token = make.api_token(member)
    assert client.get("/api/auth/session", headers=token.headers).status_code == 200
    assert client.delete(f"/api/organization/members/{member.user.id}", headers=admin.headers).status_code == 204
    assert_envelope(client.get("/api/auth/session", headers=token.headers), 401)
    assert db.scalar(select(ApiToken.revoked_at).where(ApiToken.user_id == member.user.id)) is not None


def test_the_identity_providers_deletion_revokes_tokens(client, make, identity_secret):
    member = make.member(make.admin())
    member.user.external_id = "user_leaver"
    token = make.api_token(member)
    assert client.get("/api/auth/session", headers=token.headers).status_code == 200
    assert deliver_identity(client, identity.user_event("user.deleted", "user_leaver")).status_code == 200
    assert_envelope(client.get("/api/auth/session", headers=token.headers), 401)


def test_a_role_change_reaches_a_cached_token_at_once(client, make):
    admin = make.admin()
    member = make.member(admin)
    token = make.api_token(member)
    assert_envelope(client.get("/api/organization/members", headers=token.headers), 403)
    assert (
        client.patch(
            f"/api/organization/members/{member.user.id}", json={"role": "manager"}, headers=admin.headers
        ).status_code
        == 200
    )
    assert client.get("/api/organization/members", headers=token.headers).status_code == 200


def test_scim_deactivation_revokes_tokens_and_reactivation_does_not_restore_them(client, make):
    admin = make.admin()
    scim = make.scim_token(admin)
    member = make.member(admin)
    token = make.api_token(member)
    created = client.post(
        "/scim/v2/Users", headers=scim, json={"schemas": [SCIM_USER], "userName": member.user.email, "active": True}
    )
    assert created.status_code == 201, created.text
    user_id = created.json()["id"]
    assert client.get("/api/auth/session", headers=token.headers).status_code == 200
    deactivate = {"schemas": [SCIM_PATCH], "Operations": [{"op": "replace", "path": "active", "value": False}]}
    assert client.patch(f"/scim/v2/Users/{user_id}", headers=scim, json=deactivate).status_code == 200
    assert_envelope(client.get("/api/auth/session", headers=token.headers), 401)
    reactivate = {"schemas": [SCIM_PATCH], "Operations": [{"op": "replace", "path": "active", "value": True}]}
    assert client.patch(f"/scim/v2/Users/{user_id}", headers=scim, json=reactivate).status_code == 200
    assert_envelope(client.get("/api/auth/session", headers=token.headers), 401)
