"""Accounts and sessions through the HTTP interface (docs/decisions.md §2)."""

from __future__ import annotations

import datetime as dt
import time

from sqlalchemy import event, select

from kindling.accounts import sessions
from kindling.accounts.models import Session, User
from kindling.accounts.principal_cache import PRINCIPAL_TTL, principals
from kindling.accounts.sessions import COOKIE_NAME, hash_token
from tests.factories import PASSWORD

USER_FIELDS = {"id", "email", "name", "accountType", "organizationId", "role", "createdAt"}


def sign_up(client, **fields):
    body = {"email": "Ada@Example.test", "password": PASSWORD, "name": "Ada", **fields}
    return client.post("/api/auth/sign-up", json=body)


def test_member_creates_organization_and_becomes_admin(client, db):
    response = sign_up(client, organizationName="Acme Care")
    assert response.status_code == 201
    user = response.json()["data"]["user"]
    assert set(user) == USER_FIELDS
    assert user["email"] == "ada@example.test"
    assert user["accountType"] == "member" and user["role"] == "admin"
    session = client.get("/api/auth/session").json()["data"]
    assert session["organization"]["name"] == "Acme Care"
    assert session["organization"]["slug"] == "acme-care"
    assert session["organization"]["joinCode"]


def test_member_joins_by_code_and_sees_no_join_code(client, make):
    admin = make.admin("Join Me")
    join_code = make.organization(admin).join_code
    response = sign_up(client, joinCode=join_code)
    assert response.status_code == 201
    user = response.json()["data"]["user"]
    assert user["organizationId"] == admin.organization_id and user["role"] == "member"
    organization = client.get("/api/auth/session").json()["data"]["organization"]
    assert "joinCode" not in organization


def test_consultant_has_no_organization(client):
    response = sign_up(client, accountType="consultant", firmName="Northwind Advisory")
    assert response.status_code == 201
    user = response.json()["data"]["user"]
    assert user["accountType"] == "consultant"
    assert user["organizationId"] is None and user["role"] is None
    assert "organization" not in client.get("/api/auth/session").json()["data"]


def test_slugs_stay_unique(client, make):
    make.admin("Same Name")
    sign_up(client, organizationName="Same Name")
    assert client.get("/api/auth/session").json()["data"]["organization"]["slug"] == "same-name-2"


def test_sign_up_rules(client, make):
    join_code = make.organization(make.admin()).join_code
    cases = [
        {},  # member with neither
        {"organizationName": "A", "joinCode": join_code},  # both
        {"joinCode": "no-such-code"},
        {"accountType": "consultant", "organizationName": "A"},
        {"accountType": "consultant", "joinCode": join_code},
        {"organizationName": "A", "firmName": "F"},
        {"organizationName": "A", "password": "short"},
        {"organizationName": "A", "password": "x" * 129},
        {"organizationName": "A", "email": "not-an-email"},
        {"organizationName": "A", "role": "admin"},  # unknown field
        {"organizationName": "A", "name": "   "},
    ]
    for fields in cases:
        response = sign_up(client, **fields)
        assert response.status_code == 400, fields
        assert response.headers["content-type"] == "application/json"
        assert response.json()["error"], fields
    assert client.get("/api/auth/session").status_code == 401


def test_duplicate_email_is_conflict_whatever_the_case(client):
    assert sign_up(client, organizationName="First").status_code == 201
    response = sign_up(client, organizationName="Second", email="ADA@example.test")
    assert response.status_code == 409
    assert response.json()["code"] == "email_taken"


def test_password_is_stored_as_argon2id(client, db):
    sign_up(client, organizationName="Hashing")
    user = db.scalar(select(User).where(User.email == "ada@example.test"))
    assert user.password_hash.startswith("$argon2id$")
    assert PASSWORD not in user.password_hash


def test_cookie_flags_and_token_storage(client, db):
    response = sign_up(client, organizationName="Cookies")
    cookie = response.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE_NAME}=")
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Path=/" in cookie
    assert "Secure" not in cookie  # only in production
    token = cookie.split(";")[0].split("=", 1)[1]
    assert len(token) >= 43  # 32 random bytes, base64url
    # Other tests' servers may have left sessions behind: this one is found by its person.
    stored = db.scalar(select(Session).where(Session.user_id == response.json()["data"]["user"]["id"]))
    assert stored.token_hash == hash_token(token) and token not in stored.token_hash
    assert "token" not in response.json()["data"]["session"]


def test_sign_in_with_token_for_api_clients(app, make):
    account = make.admin()
    with app.test_client() as fresh:
        response = fresh.post(
            "/api/auth/sign-in", json={"email": account.user.email, "password": PASSWORD, "returnToken": True}
        )
        assert response.status_code == 200
        token = response.json()["data"]["session"]["token"]
    with app.test_client() as bearer_only:
        session = bearer_only.get("/api/auth/session", headers={"Authorization": f"Bearer {token}"})
        assert session.status_code == 200
        assert session.json()["data"]["user"]["id"] == account.user.id


def test_session_expiry_is_seven_days(client, make):
    account = make.admin()
    response = client.post("/api/auth/sign-in", json={"email": account.user.email, "password": PASSWORD})
    expires = dt.datetime.fromisoformat(response.json()["data"]["session"]["expiresAt"])
    assert dt.timedelta(days=6, hours=23) < expires - dt.datetime.now(dt.UTC) <= dt.timedelta(days=7)


def test_session_is_extended_once_a_day_old(client, make, db):
    account = make.admin()
    stored = db.scalar(select(Session).where(Session.token_hash == hash_token(account.token)))
    stored.expires_at = dt.datetime.now(dt.UTC) + dt.timedelta(days=5)
    db.flush()
    client.get("/api/auth/session", headers=account.headers)
    db.refresh(stored)
    assert stored.expires_at - dt.datetime.now(dt.UTC) > dt.timedelta(days=6, hours=23)


def test_expired_session_is_refused(client, make, db):
    account = make.admin()
    stored = db.scalar(select(Session).where(Session.token_hash == hash_token(account.token)))
    stored.expires_at = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1)
    db.flush()
    assert client.get("/api/auth/session", headers=account.headers).status_code == 401


def test_wrong_password_and_unknown_email_look_the_same(client, make):
    account = make.admin()
    wrong = client.post("/api/auth/sign-in", json={"email": account.user.email, "password": "wrong password!"})
    unknown = client.post("/api/auth/sign-in", json={"email": "nobody@example.test", "password": "wrong password!"})
    assert wrong.status_code == unknown.status_code == 401
    assert wrong.json() == unknown.json()
    assert "set-cookie" not in wrong.headers


def test_sign_in_is_throttled_after_ten_failures_per_email(client, make):
    account = make.admin()
    for _ in range(10):
        assert (
            client.post(
                "/api/auth/sign-in", json={"email": account.user.email, "password": "wrong password!"}
            ).status_code
            == 401
        )
    blocked = client.post("/api/auth/sign-in", json={"email": account.user.email, "password": PASSWORD})
    assert blocked.status_code == 429
    assert blocked.json()["code"] == "rate_limited"
    assert blocked.json()["retryAfter"] > 0
    assert int(blocked.headers["retry-after"]) > 0
    other = make.admin()
    assert client.post("/api/auth/sign-in", json={"email": other.user.email, "password": PASSWORD}).status_code == 200


def test_sign_out_revokes_the_session_and_clears_the_cookie(client, make):
    account = make.admin()
    response = client.post("/api/auth/sign-out", headers=account.headers)
    assert response.status_code == 200 and response.json() == {"success": True}
    assert f'{COOKIE_NAME}=""' in response.headers["set-cookie"] or "Max-Age=0" in response.headers["set-cookie"]
    assert client.get("/api/auth/session", headers=account.headers).status_code == 401


def test_cookie_session_round_trip(client, make):
    account = make.admin()
    response = client.post("/api/auth/sign-in", json={"email": account.user.email, "password": PASSWORD})
    assert response.status_code == 200
    assert client.get("/api/auth/session").status_code == 200
    client.post("/api/auth/sign-out")
    assert client.get("/api/auth/session").status_code == 401


def test_no_secret_in_any_auth_response(client, make):
    admin = make.admin()
    member = make.member(admin)
    join_code = make.organization(admin).join_code
    body = client.get("/api/auth/session", headers=member.headers).text
    assert join_code not in body and "argon2" not in body and member.token not in body


def test_missing_or_bogus_credentials_are_401_with_envelope(client):
    for headers in (
        {},
        {"Authorization": "Bearer nope"},
        {"Cookie": f"{COOKIE_NAME}=nope"},
        {"Authorization": "Basic eDp5"},
    ):
        response = client.get("/api/auth/session", headers=headers)
        assert response.status_code == 401, headers
        assert response.headers["content-type"] == "application/json"
        assert response.json()["error"]


def test_conflicting_cookie_and_bearer_are_refused(client, make):
    first, second = make.admin(), make.admin()
    both_same = {"Authorization": f"Bearer {first.token}", "Cookie": f"{COOKIE_NAME}={first.token}"}
    assert client.get("/api/auth/session", headers=both_same).status_code == 200
    for forged in (second.token, "forged", ""):
        headers = {"Authorization": f"Bearer {first.token}", "Cookie": f"{COOKIE_NAME}={forged}"}
        assert client.get("/api/auth/session", headers=headers).status_code == 401


def test_a_revoked_session_is_refused_at_once_though_its_principal_was_cached(client, make, runtime):
    first, second = make.admin(), make.admin()
    for account in (first, second):
        assert client.get("/api/auth/session", headers=account.headers).status_code == 200
    assert client.post("/api/auth/sign-out", headers=first.headers).status_code == 200
    assert client.get("/api/auth/session", headers=first.headers).status_code == 401
    assert client.get("/api/auth/session", headers=second.headers).status_code == 200


def test_a_slow_lookup_keeps_its_principal_no_longer_than_the_ttl_from_its_read(make, db):
    """The bound on a revocation elsewhere counts from the database read: a principal read just
    before a revocation, by a lookup that then took long, must not be trusted a second after it."""
    account = make.admin()
    principals.clear()
    connection = db.connection()

    def slow(*_args) -> None:
        time.sleep(0.6)

    event.listen(connection, "after_cursor_execute", slow)
    try:
        read_at = time.monotonic()
        assert sessions.live_principal(db, account.token) is not None
    finally:
        event.remove(connection, "after_cursor_execute", slow)
    time.sleep(max(0.0, read_at + PRINCIPAL_TTL + 0.05 - time.monotonic()))
    assert principals.get(hash_token(account.token)) is None
