"""API4 Unrestricted Resource Consumption: page sizes, body sizes and body shapes are bounded
before any work is done, and bursts are throttled."""

from __future__ import annotations

import json

import pytest

from tests.helpers import assert_envelope, spec
from tests.owasp.operations import ACCESS, request_kwargs, url_for

PAGED = sorted(
    key for key, operation in spec.operations().items() if any(p["name"] == "limit" for p in operation["parameters"])
)
JSON_BODIES = sorted(key for key, operation in spec.operations().items() if spec.body_schema(operation) is not None)
DEEP = "[" * 10_000 + "]" * 10_000  # 20,000 bytes: well under the 64 KB limit
HOSTILE_BODIES = {
    "10,000 levels deep": DEEP,
    "deep inside an object": '{"description": ' + "[" * 5_000 + "]" * 5_000 + "}",
    "a 5,000-digit number": '{"amount": ' + "9" * 5_000 + "}",
    "NaN": '{"amount": NaN, "mood": NaN}',
    "Infinity": '{"latitude": Infinity, "longitude": -Infinity}',
}


# The providers' signature headers, so that validation reaches the body (the signature is checked later).
SIGNATURE_HEADERS = {
    "/webhooks/payments": {"Stripe-Signature": "t=1,v1=00"},
    "/webhooks/auth": {"svix-id": "msg_1", "svix-timestamp": "1", "svix-signature": "v1,AA=="},
    "/integrations/slack/events": {"X-Slack-Request-Timestamp": "1", "X-Slack-Signature": "v0=00"},
}


@pytest.fixture
def callers(make):
    admin = make.admin()
    return {"anonymous": None, "admin": admin, "member": make.member(admin), "consultant": make.consultant()}


def headers_of(callers, key, **extra) -> dict:
    """The headers of a caller the operation is for, so that nothing but the body is wrong."""
    kind = sorted(ACCESS[key].callers)[0]
    caller = callers[kind]
    return {**(caller.headers if caller is not None else {}), **SIGNATURE_HEADERS.get(key[1], {}), **extra}


def test_list_operations_are_paged():
    assert PAGED == [
        ("GET", "/api/donations"),
        ("GET", "/api/evidence"),
        ("GET", "/api/evidence/checkpoints"),
        ("GET", "/api/giving/programs"),
        ("GET", "/api/giving/requests"),
        ("GET", "/api/invitations"),
        ("GET", "/api/kindness"),
        ("GET", "/api/organization/groups"),
        ("GET", "/api/organization/members"),
        ("GET", "/api/verifications/pending"),
        ("GET", "/api/volunteer"),
        ("GET", "/api/volunteer/{id}/check-ins"),
        ("GET", "/api/webhooks/endpoints/{endpointId}/deliveries"),
        ("GET", "/api/wellbeing"),
    ]


@pytest.mark.parametrize("key", PAGED, ids=[p for _, p in PAGED])
@pytest.mark.parametrize("limit", ["1000000", "0", "-1", "1e3", "99999999999999999999999"])
def test_page_size_out_of_bounds_is_400(client, callers, key, limit):
    response = client.get(f"{url_for(key[1])}?limit={limit}", headers=headers_of(callers, key))
    assert_envelope(response, 400, "validation_error")


@pytest.mark.parametrize("key", JSON_BODIES, ids=[f"{m} {p}" for m, p in JSON_BODIES])
def test_hostile_json_bodies_are_4xx_never_5xx(client, callers, runtime, key):
    method, path = key
    headers = headers_of(callers, key, **{"Content-Type": "application/json"})
    for name, body in HOSTILE_BODIES.items():
        runtime.limiter.reset()  # theme generation allows only 5 a minute
        response = client.request(method, url_for(path), content=body, headers=headers)
        assert_envelope(response, 400, "validation_error")
        assert "Recursion" not in response.text, name
    oversize = json.dumps({"description": "x" * (64 * 1024)})
    runtime.limiter.reset()
    assert_envelope(client.request(method, url_for(path), content=oversize, headers=headers), 413, "payload_too_large")


def test_nesting_within_the_bound_is_left_to_validation(client, callers):
    key = ("POST", "/api/kindness")
    body = {**request_kwargs(key)["json"], "media": [{"type": "image", "url": "https://example.test/a.png"}]}
    response = client.post("/api/kindness", json=body, headers=headers_of(callers, key))
    assert response.status_code == 201
    nested_64 = "[" * 64 + "]" * 64
    response = client.post(
        "/api/kindness", content=nested_64, headers=headers_of(callers, key, **{"Content-Type": "application/json"})
    )
    body = assert_envelope(response, 400, "validation_error")
    assert "nested" not in body["error"]  # the schema refused it, not the depth guard


def test_upload_over_one_megabyte_is_413(client, callers):
    key = ("POST", "/api/bulk/invite")
    big = ("clients.csv", b"organizationId,message\n" + b"x" * (1024 * 1024 + 1), "text/csv")
    assert_envelope(
        client.post("/api/bulk/invite", files={"file": big}, headers=headers_of(callers, key)), 413, "payload_too_large"
    )


def test_a_burst_is_throttled_with_retry_after(rate_window, client):
    statuses = [client.get("/api/kindness").status_code for _ in range(60)]
    assert statuses == [401] * 60
    burst = client.get("/api/kindness")
    body = assert_envelope(burst, 429, "rate_limited")
    assert burst.headers["retry-after"] == str(body["retryAfter"]) and int(burst.headers["retry-after"]) > 0
