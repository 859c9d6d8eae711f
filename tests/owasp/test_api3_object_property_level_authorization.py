"""API3 Broken Object Property Level Authorization: a body cannot set what the server decides
(mass assignment), and no response carries what the caller may not see (excessive exposure)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json

import pytest

from kindling.platform.base import utcnow
from tests.factories import PASSWORD
from tests.factories.volunteering import CENTRE
from tests.helpers import assert_envelope, spec

# Provider events are free-form in the spec: the handlers verify their signature over the raw bytes.
# Bodies a provider sends and signs: Kindling reads what it knows after the signature, and refusing a
# field a provider adds would refuse the provider.
FREE_FORM = {
    ("POST", "/webhooks/payments"),
    ("POST", "/webhooks/auth"),
    ("POST", "/integrations/slack/commands"),
    ("POST", "/integrations/slack/interactions"),
    ("POST", "/integrations/slack/events"),
}
ACT = {"description": "Covered a shift", "category": "community", "verificationLevel": 1, "recipientId": "someone"}


def _objects(schema: dict, where: str, depth: int = 0):
    schema = spec.resolve(schema)
    if depth > 10:
        return
    if "properties" in schema or schema.get("type") == "object":
        yield where, schema
    for key in ("oneOf", "anyOf", "allOf"):
        for n, branch in enumerate(schema.get(key, [])):
            yield from _objects(branch, f"{where}/{key}[{n}]", depth + 1)
    for name, child in schema.get("properties", {}).items():
        yield from _objects(child, f"{where}.{name}", depth + 1)
    if "items" in schema:
        yield from _objects(schema["items"], f"{where}[]", depth + 1)


def test_every_request_body_refuses_properties_it_does_not_declare():
    open_objects = []
    for key, operation in spec.operations().items():
        if key in FREE_FORM:
            continue
        for content in operation.get("requestBody", {}).get("content", {}).values():
            for where, schema in _objects(content["schema"], "body"):
                extra = schema.get("additionalProperties", True)
                is_map = "properties" not in schema and isinstance(extra, dict)  # e.g. a theme's colour map
                if extra is not False and not is_map:
                    open_objects.append((key, where))
    assert open_objects == []


@pytest.mark.parametrize(
    "field",
    [{"userId": "x"}, {"organizationId": "x"}, {"rippleScore": 10}, {"id": "x"}, {"createdAt": "2020-01-01T00:00:00Z"}],
)
def test_an_act_cannot_name_its_sender_organization_or_score(client, make, field):
    member = make.member(make.admin())
    assert_envelope(
        client.post("/api/kindness", json={**ACT, **field}, headers=member.headers), 400, "validation_error"
    )
    assert client.get("/api/kindness", headers=member.headers).json()["data"] == []


def test_only_an_admin_changes_the_verification_level(client, make):
    admin = make.admin()
    member = make.member(admin)
    act = client.post("/api/kindness", json=ACT, headers=member.headers).json()["data"]
    assert_envelope(
        client.put(f"/api/kindness/{act['id']}", json={"verificationLevel": 5}, headers=member.headers),
        403,
        "forbidden",
    )
    mixed = {"description": "Still mine", "verificationLevel": 5}
    assert_envelope(client.put(f"/api/kindness/{act['id']}", json=mixed, headers=member.headers), 403, "forbidden")
    for field in ({"userId": admin.user.id}, {"organizationId": "x"}, {"recipientId": "someone else"}):
        assert_envelope(
            client.put(f"/api/kindness/{act['id']}", json=field, headers=member.headers), 400, "validation_error"
        )
    assert client.get(f"/api/kindness/{act['id']}", headers=member.headers).json()["data"] == act
    assert (
        client.put(f"/api/kindness/{act['id']}", json={"verificationLevel": 5}, headers=admin.headers).status_code
        == 200
    )


@pytest.mark.parametrize(
    "field", [{"role": "admin"}, {"organizationId": "x"}, {"accountType": "admin"}, {"verificationLevel": 5}]
)
def test_sign_up_cannot_choose_a_role(client, make, field):
    admin = make.admin()
    join_code = make.organization(admin).join_code
    body = {"email": "climber@example.test", "password": PASSWORD, "name": "Climber", "joinCode": join_code, **field}
    assert_envelope(client.post("/api/auth/sign-up", json=body), 400, "validation_error")
    assert client.post("/api/auth/sign-in", json={"email": body["email"], "password": PASSWORD}).status_code == 401


@pytest.mark.parametrize(
    ("url", "body", "field"),
    [
        (
            "/api/donations",
            {"amount": 500, "currency": "USD", "recipient": {"name": "Shelter"}},
            {"status": "succeeded"},
        ),
        ("/api/donations", {"amount": 500, "currency": "USD", "recipient": {"name": "Shelter"}}, {"userId": "x"}),
        ("/api/wellbeing", {"mood": 4, "stress": 2}, {"userId": "x"}),
        ("/api/wellbeing", {"mood": 4, "stress": 2}, {"sentiment": {"label": "positive", "compound": 1}}),
        ("/api/volunteer/{id}/check-in", {"latitude": CENTRE[0], "longitude": CENTRE[1]}, {"verified": True}),
        ("/api/volunteer/{id}/check-in", {"latitude": CENTRE[0], "longitude": CENTRE[1]}, {"userId": "x"}),
    ],
)
def test_server_decided_fields_are_refused(client, tenants, url, body, field):
    a, _ = tenants
    url = url.format(id=a.opportunity_id)
    assert_envelope(client.post(url, json={**body, **field}, headers=a.member.headers), 400, "validation_error")
    assert client.post(url, json=body, headers=a.member.headers).status_code == 201  # the same body, without it


@dataclasses.dataclass
class Secrets:
    values: dict[str, str]

    def found_in(self, text: str) -> set[str]:
        return {name for name, value in self.values.items() if value in text}


FORBIDDEN_KEYS = {"password", "passwordHash", "password_hash", "tokenHash", "token_hash", "secret", "secretKey"}


def _keys(value) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {key for item in value.values() for key in _keys(item)}
    if isinstance(value, list):
        return {key for item in value for key in _keys(item)}
    return set()


def test_no_response_carries_a_secret(client, make, db, settings_with, tenants):
    secret_key = "s3cret-key-" * 4
    settings_with(
        secret_key=secret_key, payment_webhook_secret="whsec_never_shown_1", auth_webhook_secret="whsec_never_shown_2"
    )
    a, b = tenants
    for _ in range(5):  # enough people for last week's wellbeing aggregates to show
        make.response(make.member(a.admin), comment="Confidential remark", created_at=utcnow() - dt.timedelta(days=7))
    secrets = Secrets(
        {
            "secret key": secret_key,
            "payment secret": "whsec_never_shown_1",
            "identity secret": "whsec_never_shown_2",
            "a password hash": "$argon2",
            "A's join code": make.organization(a.admin).join_code,
            "A's admin token": a.admin.token,
            "A's member token": a.member.token,
            "A's consultant token": a.consultant.token,
        }
    )
    callers = {"B admin": b.admin, "B member": b.member, "B consultant": b.consultant, "A member": a.member}
    views = [
        "/api/auth/session",
        "/api/kindness",
        "/api/kindness/stats",
        "/api/volunteer",
        "/api/donations",
        "/api/wellbeing",
        "/api/invitations",
        "/api/clients",
        "/api/consultants",
        "/api/health",
        "/api/organizations/search?q=Organization",
    ]
    seen = []
    for who, caller in callers.items():
        for url in views:
            response = client.get(url, headers=caller.headers)
            seen.append((who, url, response))
    aggregate = client.get("/api/wellbeing?scope=organization", headers=a.admin.headers)
    assert aggregate.status_code == 200 and aggregate.json()["data"] is not None
    seen.append(("A admin", "wellbeing aggregate", aggregate))
    seen.append(
        (
            "anyone",
            "sign-in",
            client.post("/api/auth/sign-in", json={"email": a.member.user.email, "password": PASSWORD}),
        )
    )
    seen.append(
        (
            "anyone",
            "bad sign-in",
            client.post("/api/auth/sign-in", json={"email": a.member.user.email, "password": "x" * 12}),
        )
    )
    client.cookies.clear()
    for who, url, response in seen:
        text = response.text + json.dumps(dict(response.headers))
        assert not secrets.found_in(text), (who, url, secrets.found_in(text))
        assert "Traceback" not in text
        if response.headers["content-type"] == "application/json":
            assert not _keys(response.json()) & FORBIDDEN_KEYS, (who, url)
    assert "Confidential remark" not in aggregate.text
    assert not any(member_id in aggregate.text for member_id in (a.member.user.id, a.admin.user.id))
