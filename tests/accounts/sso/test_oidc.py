"""Single sign-on with OpenID Connect, against a real OpenID provider on loopback
(docs/decisions.md §2): settings, the flow and every refusal, enforcement."""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import hashlib
import re
import time
import urllib.parse
import uuid

import pytest
from sqlalchemy import select, update

from kindling.accounts import api_tokens
from kindling.accounts.models import Session, SsoConnection, SsoState, User
from kindling.errors import Forbidden
from kindling.evidence.models import EvidenceEvent
from kindling.platform.base import utcnow
from tests.factories import PASSWORD
from tests.helpers import assert_envelope
from tests.helpers.sso import configure, domain, prove
from tests.servers.openid_provider import CLIENT_ID, CLIENT_SECRET


@dataclasses.dataclass
class Sso:
    """An organization with single sign-on set up at the test provider."""

    admin: object
    domain: str

    def email(self, name: str = "sam") -> str:
        return f"{name}-{uuid.uuid4().hex[:6]}@{self.domain}"


@pytest.fixture
def sso(client, make, openid_provider, dns):
    """An organization with single sign-on and a verified domain."""
    admin = make.admin()
    name = domain()
    response = configure(client, admin, openid_provider, domains=[name.upper()], jitProvisioning=True)
    assert response.status_code == 200, response.text
    prove(client, admin, dns, name)
    return Sso(admin, name)


def start(client, **query):
    response = client.get("/api/auth/sso/start?" + urllib.parse.urlencode(query), follow_redirects=False)
    assert response.status_code == 302, response.text
    return response.headers["location"]


def finish(client, callback: str):
    """The callback's answer; the session cookie it may set is not kept, so later requests carry only their own credentials."""
    response = client.get(callback, follow_redirects=False)
    client.cookies.clear()
    return response


def sign_in(client, provider, sub: str, **query):
    """The whole flow for the provider's person `sub`: the callback's answer."""
    return finish(client, provider.sign_in(start(client, **query), sub))


# --- settings ---


def test_settings_are_saved_after_discovery_and_never_show_the_secret(client, make, db, openid_provider):
    admin = make.admin()
    first, second = domain(), domain()
    response = configure(client, admin, openid_provider, domains=[second, first.upper()], enforced=True)
    assert response.status_code == 200, response.text
    data = response.json()["data"]
    for claim in data["emailDomains"]:
        assert (claim["verified"], claim["verifiedAt"], claim["record"]["name"], claim["record"]["type"]) == (
            False,
            None,
            f"_kindling-challenge.{claim['domain']}",
            "TXT",
        )
        assert re.fullmatch("kindling-domain-verification=[0-9a-f]{32}", claim["record"]["value"])
    assert data == {
        "protocol": "oidc",
        "issuer": openid_provider.url,
        "clientId": CLIENT_ID,
        "clientSecretSet": True,
        "emailDomains": [
            {"domain": name, "verified": False, "verifiedAt": None, "record": claim["record"]}
            for name, claim in zip(sorted([first, second]), data["emailDomains"], strict=True)
        ],
        "jitProvisioning": False,
        "enforced": True,
        "redirectUri": "https://kindling.test/api/auth/sso/callback",  # PUBLIC_URL of the test settings
        "updatedAt": data["updatedAt"],
    }
    read = client.get("/api/organization/sso", headers=admin.headers)
    assert read.json()["data"] == data and CLIENT_SECRET not in read.text
    stored = db.get(SsoConnection, admin.organization_id)
    assert CLIENT_SECRET not in stored.client_secret_encrypted
    assert stored.token_endpoint == f"{openid_provider.url}/oauth2/token"
    # Saving again without the secret keeps it.
    body = {"issuer": openid_provider.url, "clientId": CLIENT_ID, "emailDomains": [first]}
    assert client.put("/api/organization/sso", json=body, headers=admin.headers).status_code == 200
    db.expire_all()
    assert db.get(SsoConnection, admin.organization_id).client_secret_encrypted == stored.client_secret_encrypted
    events = db.scalars(
        select(EvidenceEvent)
        .where(EvidenceEvent.organization_id == admin.organization_id, EvidenceEvent.type == "sso.configured")
        .order_by(EvidenceEvent.seq)
    ).all()
    assert [(event.data["enabled"], event.data["emailDomains"], event.actor_id) for event in events] == [
        (True, sorted([first, second]), admin.user.id),
        (True, [first], admin.user.id),
    ]
    assert all(CLIENT_SECRET not in str(event.data) for event in events)
    assert client.delete("/api/organization/sso", headers=admin.headers).status_code == 204
    assert_envelope(client.get("/api/organization/sso", headers=admin.headers), 404, "sso_not_configured")
    assert db.scalars(
        select(EvidenceEvent.data)
        .where(EvidenceEvent.organization_id == admin.organization_id)
        .order_by(EvidenceEvent.seq.desc())
    ).first() == {"enabled": False}


def test_only_admins_see_or_change_settings(client, make, openid_provider):
    admin = make.admin()
    for caller in (make.member(admin), make.manager(admin), make.consultant()):
        assert_envelope(client.get("/api/organization/sso", headers=caller.headers), 403, "forbidden")
        assert_envelope(configure(client, caller, openid_provider, domains=[domain()]), 403, "forbidden")
        assert_envelope(client.delete("/api/organization/sso", headers=caller.headers), 403, "forbidden")


def test_discovery_must_answer_and_name_the_same_issuer(client, make, openid_provider, silent_server):
    admin = make.admin()
    wrong_issuer = configure(client, admin, openid_provider, domains=[domain()], issuer=openid_provider.url + "/")
    assert "another issuer" in assert_envelope(wrong_issuer, 400, "sso_discovery_failed")["error"]
    nothing_there = configure(
        client, admin, openid_provider, domains=[domain()], issuer=openid_provider.url + "/nowhere"
    )
    assert "HTTP 404" in assert_envelope(nothing_there, 400, "sso_discovery_failed")["error"]
    started = time.monotonic()
    hung = configure(client, admin, openid_provider, domains=[domain()], issuer=silent_server.url("http"))
    assert "could not be read" in assert_envelope(hung, 400, "sso_discovery_failed")["error"]
    assert time.monotonic() - started < 6
    assert_envelope(client.get("/api/organization/sso", headers=admin.headers), 404)


def test_the_provider_follows_the_outbound_destination_rules(client, make, settings_with, openid_provider):
    admin = make.admin()
    settings_with(webhook_allow_private_urls=False)
    body = assert_envelope(configure(client, admin, openid_provider, domains=[domain()]), 400, "sso_discovery_failed")
    assert "not allowed" in body["error"]
    settings_with(webhook_allow_private_urls=True, environment="production")
    assert (
        "https"
        in assert_envelope(configure(client, admin, openid_provider, domains=[domain()]), 400, "sso_discovery_failed")[
            "error"
        ]
    )


def test_a_first_setup_needs_a_secret_and_the_server_a_secret_key(client, make, settings_with, openid_provider):
    admin = make.admin()
    body = {"issuer": openid_provider.url, "clientId": CLIENT_ID, "emailDomains": [domain()]}
    refused = assert_envelope(
        client.put("/api/organization/sso", json=body, headers=admin.headers), 400, "validation_error"
    )
    assert refused["details"]["errors"][0]["field"] == "clientSecret"
    settings_with(secret_key=None)
    assert_envelope(configure(client, admin, openid_provider, domains=[domain()]), 503, "secret_key_missing")


def test_a_verified_domain_belongs_to_one_organization(client, make, openid_provider, dns):
    taken, owner = domain(), make.admin()
    assert configure(client, owner, openid_provider, domains=[taken]).status_code == 200
    prove(client, owner, dns, taken)
    other = make.admin()
    body = assert_envelope(
        configure(client, other, openid_provider, domains=[domain(), taken.upper()]), 409, "email_domain_taken"
    )
    assert taken in body["error"]
    assert_envelope(client.get("/api/organization/sso", headers=other.headers), 404)


def test_bad_settings_are_refused_field_by_field(client, make, openid_provider):
    admin = make.admin()
    for fields, field in (
        ({"emailDomains": []}, "emailDomains"),
        ({"emailDomains": ["not a domain"]}, "emailDomains.0"),
        ({"issuer": "ftp://example.test"}, "issuer"),
        ({"clientId": ""}, "clientId"),
        ({"unknown": True}, "unknown"),
    ):
        body = assert_envelope(
            configure(client, admin, openid_provider, domains=[domain()], **fields), 400, "validation_error"
        )
        assert body["details"]["errors"][0]["field"] == field, body


# --- the flow ---


def test_start_sends_state_nonce_and_an_s256_challenge(client, sso, db, openid_provider):
    location = start(client, email=sso.email(), returnTo="/kindness")
    url = urllib.parse.urlsplit(location)
    query = dict(urllib.parse.parse_qsl(url.query))
    assert f"{url.scheme}://{url.netloc}{url.path}" == f"{openid_provider.url}/oauth2/authorize"
    assert (
        query["response_type"] == "code"
        and query["scope"] == "openid email profile"
        and query["client_id"] == CLIENT_ID
    )
    assert query["redirect_uri"] == "https://kindling.test/api/auth/sso/callback"  # PUBLIC_URL of the test settings
    assert query["code_challenge_method"] == "S256" and len(query["state"]) >= 43 and len(query["nonce"]) >= 43
    pending = db.get(SsoState, hashlib.sha256(query["state"].encode()).hexdigest())
    assert pending.nonce == query["nonce"] and pending.return_to == "/kindness"
    challenge = base64.urlsafe_b64encode(hashlib.sha256(pending.code_verifier.encode()).digest()).rstrip(b"=").decode()
    assert query["code_challenge"] == challenge
    # By the organization's slug too; an unknown domain or slug is 404.
    organization = client.get("/api/auth/session", headers=sso.admin.headers).json()["data"]["organization"]
    assert start(client, organization=organization["slug"]).startswith(openid_provider.url)
    assert_envelope(
        client.get("/api/auth/sso/start?email=someone@unclaimed.test", follow_redirects=False),
        404,
        "sso_not_configured",
    )
    assert_envelope(
        client.get("/api/auth/sso/start?organization=no-such-org", follow_redirects=False), 404, "sso_not_configured"
    )


def test_a_new_person_is_created_just_in_time_and_signed_in(client, sso, db, openid_provider):
    email = sso.email()
    sub = openid_provider.person(email=email.upper(), name="Sam Example")
    response = sign_in(client, openid_provider, sub, email=email, returnTo="/kindness?page=2")
    assert response.status_code == 303, response.text
    assert response.headers["location"] == "/kindness?page=2"
    cookie = response.headers["set-cookie"]
    assert cookie.startswith("kindling.session_token=") and "HttpOnly" in cookie and "SameSite=Lax" in cookie
    token = cookie.split(";")[0].split("=", 1)[1]
    session = client.get("/api/auth/session", headers={"Authorization": f"Bearer {token}"}).json()["data"]
    assert (session["user"]["email"], session["user"]["name"], session["user"]["role"]) == (
        email,
        "Sam Example",
        "member",
    )
    assert session["user"]["organizationId"] == sso.admin.organization_id
    user = db.get(User, session["user"]["id"])
    assert (user.sso_issuer, user.sso_subject) == (openid_provider.url, sub)
    # The next sign-in finds them by the linked subject.
    again = sign_in(client, openid_provider, sub, email=sso.email())
    assert again.status_code == 303 and again.headers["location"] == "/"


def test_an_existing_person_is_found_by_email_and_linked(client, make, sso, db, openid_provider):
    member = make.member(sso.admin, email=sso.email())
    sub = openid_provider.person(email=member.user.email)
    assert sign_in(client, openid_provider, sub, email=member.user.email).status_code == 303
    db.expire_all()
    assert db.get(User, member.user.id).sso_subject == sub


def test_without_jit_an_unknown_person_is_refused(client, make, openid_provider, dns):
    admin = make.admin()
    name = domain()
    assert configure(client, admin, openid_provider, domains=[name]).status_code == 200
    prove(client, admin, dns, name)
    sub = openid_provider.person(email=f"new@{name}")
    assert_envelope(sign_in(client, openid_provider, sub, email=f"new@{name}"), 403, "sso_no_account")


def test_an_email_outside_the_claimed_domains_or_of_another_organization_is_refused(client, make, sso, openid_provider):
    outside = openid_provider.person(email="someone@elsewhere.test")
    assert_envelope(sign_in(client, openid_provider, outside, email=sso.email()), 403, "sso_no_account")
    stranger = make.admin(email=sso.email("stranger"))  # an account of another organization, in this domain
    sub = openid_provider.person(email=stranger.user.email)
    assert_envelope(sign_in(client, openid_provider, sub, email=sso.email()), 403, "sso_no_account")


def test_a_replayed_or_unknown_state_is_refused(client, sso, openid_provider):
    sub = openid_provider.person(email=sso.email())
    callback = openid_provider.sign_in(start(client, email=sso.email()), sub)
    assert finish(client, callback).status_code == 303
    assert_envelope(finish(client, callback), 400, "sso_state_invalid")
    assert_envelope(
        client.get("/api/auth/sso/callback?state=made-up&code=x", follow_redirects=False), 400, "sso_state_invalid"
    )


def test_a_state_is_spent_even_when_the_sign_in_fails(client, sso, openid_provider):
    sub = openid_provider.person(email=sso.email(), email_verified=False)
    callback = openid_provider.sign_in(start(client, email=sso.email()), sub)
    assert_envelope(finish(client, callback), 401, "sso_token_invalid")
    assert_envelope(finish(client, callback), 400, "sso_state_invalid")


def test_an_expired_state_is_refused(client, sso, db, openid_provider):
    sub = openid_provider.person(email=sso.email())
    callback = openid_provider.sign_in(start(client, email=sso.email()), sub)
    db.execute(
        update(SsoState)
        .where(SsoState.organization_id == sso.admin.organization_id)
        .values(expires_at=utcnow() - dt.timedelta(seconds=1))
    )
    db.flush()
    assert_envelope(finish(client, callback), 400, "sso_state_invalid")


@pytest.mark.parametrize(
    "claims, check",
    [
        ({"aud": "someone-else"}, "aud"),
        ({"exp": -600, "iat": -4200}, "exp"),
        ({"iat": 900}, "iat"),
        ({"nonce": "not-the-nonce-sent"}, "nonce"),
        ({"iss": "https://impostor.test"}, "iss"),
    ],
    ids=["wrong-audience", "expired", "issued-in-the-future", "wrong-nonce", "wrong-issuer"],
)
def test_an_invalid_id_token_is_refused(client, sso, openid_provider, claims, check):
    # Times are seconds from now, taken when the test runs (not when it was collected).
    now = int(time.time())
    claims = {name: now + value if name in ("exp", "iat") else value for name, value in claims.items()}
    sub = openid_provider.person(email=sso.email(), **claims)
    body = assert_envelope(sign_in(client, openid_provider, sub, email=sso.email()), 401, "sso_token_invalid")
    assert check in body["error"]


def test_times_within_five_minutes_of_skew_are_accepted(client, sso, openid_provider):
    sub = openid_provider.person(email=sso.email(), exp=int(time.time()) - 200, iat=int(time.time()) + 200)
    assert sign_in(client, openid_provider, sub, email=sso.email()).status_code == 303


def test_an_unverified_email_is_refused(client, sso, openid_provider):
    sub = openid_provider.person(email=sso.email(), email_verified=False)
    body = assert_envelope(sign_in(client, openid_provider, sub, email=sso.email()), 401, "sso_token_invalid")
    assert "verified" in body["error"]


def test_a_deactivated_person_is_refused(client, make, sso, openid_provider):
    member = make.member(sso.admin, email=sso.email())
    sub = openid_provider.person(email=member.user.email)
    assert sign_in(client, openid_provider, sub, email=member.user.email).status_code == 303
    assert client.delete(f"/api/organization/members/{member.user.id}", headers=sso.admin.headers).status_code == 204
    assert_envelope(sign_in(client, openid_provider, sub, email=member.user.email), 403, "account_deactivated")


@pytest.mark.parametrize(
    "return_to",
    ["https://evil.test/", "//evil.test/x", "/\\evil.test", "http:/evil.test", "javascript:alert(1)", "kindness"],
)
def test_a_return_to_that_is_not_a_path_here_is_refused_before_anything_starts(client, sso, db, return_to):
    query = urllib.parse.urlencode({"email": sso.email(), "returnTo": return_to})
    response = client.get(f"/api/auth/sso/start?{query}", follow_redirects=False)
    body = assert_envelope(response, 400, "validation_error")
    assert body["details"]["errors"][0]["field"] == "returnTo"
    assert "location" not in response.headers
    assert db.scalar(select(SsoState).where(SsoState.organization_id == sso.admin.organization_id)) is None


def test_a_provider_that_hangs_answers_503_within_six_seconds(client, sso, db, openid_provider, silent_server):
    sub = openid_provider.person(email=sso.email())
    callback = openid_provider.sign_in(start(client, email=sso.email()), sub)
    db.execute(
        update(SsoConnection)
        .where(SsoConnection.organization_id == sso.admin.organization_id)
        .values(token_endpoint=silent_server.url("http") + "/token")
    )
    db.flush()
    started = time.monotonic()
    assert_envelope(finish(client, callback), 503, "sso_provider_unavailable")
    assert time.monotonic() - started < 6


def test_a_provider_that_is_down_answers_503(client, sso, db, openid_provider, silent_server):
    sub = openid_provider.person(email=sso.email())
    callback = openid_provider.sign_in(start(client, email=sso.email()), sub)
    silent_server.close()  # nothing listens there any more: connections are refused
    db.execute(
        update(SsoConnection)
        .where(SsoConnection.organization_id == sso.admin.organization_id)
        .values(token_endpoint=silent_server.url("http") + "/token")
    )
    db.flush()
    assert_envelope(finish(client, callback), 503, "sso_provider_unavailable")


def test_a_rotated_signing_key_is_fetched_when_a_token_names_it(client, sso, openid_provider):
    first = openid_provider.person(email=sso.email())
    assert sign_in(client, openid_provider, first, email=sso.email()).status_code == 303  # the old key is cached
    openid_provider.rotate_key()
    second = openid_provider.person(email=sso.email())
    assert sign_in(client, openid_provider, second, email=sso.email()).status_code == 303


def test_the_provider_sending_no_code_is_refused(client, sso):
    location = start(client, email=sso.email())
    state = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(location).query))["state"]
    body = assert_envelope(
        client.get(f"/api/auth/sso/callback?state={state}&error=access_denied", follow_redirects=False),
        401,
        "sso_token_invalid",
    )
    assert "access_denied" in body["error"]


# --- enforcement ---


def test_enforced_sso_closes_password_sign_in_to_members_but_not_admins(client, make, openid_provider):
    admin = make.admin()
    name = domain()
    member = make.member(admin, email=f"m@{name}")
    manager = make.manager(admin, email=f"boss@{name}")
    assert configure(client, admin, openid_provider, domains=[name], enforced=True).status_code == 200
    for person in (member, manager):
        refused = client.post("/api/auth/sign-in", json={"email": person.user.email, "password": PASSWORD})
        assert_envelope(refused, 403, "sso_required")
    # A wrong password is still the same 401 as ever: nothing is told without the password.
    assert_envelope(
        client.post("/api/auth/sign-in", json={"email": member.user.email, "password": "wrong password!"}),
        401,
        "invalid_credentials",
    )
    assert client.post("/api/auth/sign-in", json={"email": admin.user.email, "password": PASSWORD}).status_code == 200
    client.cookies.clear()
    # Not enforced: passwords work again.
    assert configure(client, admin, openid_provider, domains=[name], enforced=False).status_code == 200
    assert client.post("/api/auth/sign-in", json={"email": member.user.email, "password": PASSWORD}).status_code == 200


def test_enforcing_sso_ends_members_password_sessions_and_keeps_their_tokens(client, make, sso, openid_provider):
    member, manager = make.member(sso.admin, email=sso.email()), make.manager(sso.admin, email=sso.email())
    outsider = make.admin()  # another organization's, untouched
    token = make.api_token(member)
    sub = openid_provider.person(email=member.user.email)
    signed_in = sign_in(client, openid_provider, sub, email=member.user.email)
    sso_session = {"Authorization": f"Bearer {signed_in.cookies['kindling.session_token']}"}
    for headers in (member.headers, manager.headers, sso_session, token.headers, sso.admin.headers):
        assert client.get("/api/auth/session", headers=headers).status_code == 200  # each one cached
    fields = {"domains": [sso.domain], "jitProvisioning": True}
    assert configure(client, sso.admin, openid_provider, enforced=True, **fields).status_code == 200
    for ended in (member, manager):
        assert_envelope(client.get("/api/auth/session", headers=ended.headers), 401)
    for kept in (sso_session, token.headers, sso.admin.headers, outsider.headers):
        assert client.get("/api/auth/session", headers=kept).status_code == 200
    # Turning enforcement off brings no ended session back.
    assert configure(client, sso.admin, openid_provider, enforced=False, **fields).status_code == 200
    assert_envelope(client.get("/api/auth/session", headers=member.headers), 401)


def test_a_password_session_does_not_hold_while_sso_is_enforced(client, make, sso, db, openid_provider):
    """One that began while enforcement was being turned on, or an admin's once they are one no longer."""
    admin = make.member(sso.admin, email=sso.email())
    db.get(User, admin.user.id).role = "admin"
    db.flush()
    fields = {"domains": [sso.domain], "jitProvisioning": True}
    assert configure(client, sso.admin, openid_provider, enforced=True, **fields).status_code == 200
    assert client.get("/api/auth/session", headers=admin.headers).status_code == 200
    late = make.member(sso.admin)  # a password session the revocation did not see
    assert (
        client.patch(
            f"/api/organization/members/{admin.user.id}", json={"role": "member"}, headers=sso.admin.headers
        ).status_code
        == 200
    )
    for refused in (late, admin):
        assert_envelope(client.get("/api/auth/session", headers=refused.headers), 401)


def test_while_sso_is_enforced_tokens_come_only_from_sso_sessions(client, make, sso, db, openid_provider):
    member = make.member(sso.admin, email=sso.email())
    password_session = db.scalar(select(Session.id).where(Session.user_id == member.user.id))
    fields = {"domains": [sso.domain], "jitProvisioning": True}
    assert configure(client, sso.admin, openid_provider, enforced=True, **fields).status_code == 200
    # A process that cached the password session before enforcement still asks the database.
    with pytest.raises(Forbidden) as refused:
        api_tokens.create_token(db, user_id=member.user.id, session_id=password_session, name="ci", expires_in_days=1)
    assert refused.value.code == "sso_required"
    sub = openid_provider.person(email=member.user.email)
    cookie = sign_in(client, openid_provider, sub, email=member.user.email).cookies["kindling.session_token"]
    body = {"name": "ci", "expiresInDays": 7}
    made = client.post("/api/auth/tokens", json=body, headers={"Authorization": f"Bearer {cookie}"})
    assert made.status_code == 201, made.text
    assert client.post("/api/auth/tokens", json=body, headers=sso.admin.headers).status_code == 201  # break-glass
    assert_envelope(
        client.post("/api/auth/tokens", json=body, headers={"Authorization": f"Bearer {made.json()['data']['token']}"}),
        403,
        "session_required",
    )


def test_enforced_sso_closes_the_join_code_to_verified_domains(client, make, openid_provider, dns):
    admin = make.admin()
    name = domain()
    assert configure(client, admin, openid_provider, domains=[name], enforced=True).status_code == 200
    join_code = client.get("/api/auth/session", headers=admin.headers).json()["data"]["organization"]["joinCode"]
    body = {"password": PASSWORD, "name": "New", "joinCode": join_code}
    # Claimed but not verified: single sign-on takes nobody of that domain in, so the join code still does.
    assert client.post("/api/auth/sign-up", json={**body, "email": f"early@{name}"}).status_code == 201
    client.cookies.clear()
    prove(client, admin, dns, name)
    assert_envelope(
        client.post("/api/auth/sign-up", json={**body, "email": f"new@{name.upper()}"}), 403, "sso_required"
    )
    assert client.post("/api/auth/sign-up", json={**body, "email": "guest@elsewhere.test"}).status_code == 201


def test_a_person_created_just_in_time_joins_in_the_log(client, sso, openid_provider):
    email = sso.email()
    response = sign_in(client, openid_provider, openid_provider.person(email=email), email=email)
    assert response.status_code == 303, response.text
    token = response.headers["set-cookie"].split(";")[0].split("=", 1)[1]
    user_id = client.get("/api/auth/session", headers={"Authorization": f"Bearer {token}"}).json()["data"]["user"]["id"]
    events = client.get("/api/evidence", params={"subjectId": user_id}, headers=sso.admin.headers).json()["data"]
    assert [(e["type"], e["subject"]["kind"], e["data"], e["actorId"]) for e in events] == [
        ("member.joined", "member", {"role": "member", "source": "sso"}, None)
    ]
    assert client.get("/api/evidence/verify", headers=sso.admin.headers).json()["consistent"] is True
