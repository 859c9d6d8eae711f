"""Consultants' webhook endpoints through the HTTP interface: subscriptions, access, URL safety."""

from __future__ import annotations

import datetime as dt

import pytest
from standardwebhooks import Webhook

from kindling import outbox
from kindling.platform.destinations import DestinationPolicy
from kindling.web.app import load_spec
from kindling.webhooks import endpoints as webhook_endpoints
from kindling.webhooks.delivery import deliver_due

PUBLIC_URL = "https://93.184.215.14/kindling-hooks"
ENDPOINT_FIELDS = {
    "id",
    "url",
    "description",
    "events",
    "enabled",
    "disabledAt",
    "failingSince",
    "previousSecretExpiresAt",
    "createdAt",
    "updatedAt",
}


def create(client, account, **fields):
    body = {"url": PUBLIC_URL, "events": ["client.invited"], **fields}
    return client.post("/api/webhooks/endpoints", json=body, headers=account.headers)


def test_create_shows_the_secret_once(client, make):
    consultant = make.consultant()
    response = create(client, consultant, events=["theme.updated", "client.invited"], description=" CRM sync ")
    assert response.status_code == 201
    data = response.json()["data"]
    assert set(data) == ENDPOINT_FIELDS | {"secret"}
    assert data["url"] == PUBLIC_URL and data["description"] == "CRM sync"
    assert data["events"] == ["client.invited", "theme.updated"]
    assert data["enabled"] is True and data["failingSince"] is None
    assert data["secret"].startswith("whsec_")
    Webhook(data["secret"])  # the library accepts it as a signing secret

    listed = client.get("/api/webhooks/endpoints", headers=consultant.headers).json()["data"]
    assert [item["id"] for item in listed] == [data["id"]]
    one = client.get(f"/api/webhooks/endpoints/{data['id']}", headers=consultant.headers).json()["data"]
    assert set(one) == ENDPOINT_FIELDS and set(listed[0]) == ENDPOINT_FIELDS


def test_update_and_delete(client, make):
    consultant = make.consultant()
    endpoint_id = create(client, consultant, description="old").json()["data"]["id"]
    path = f"/api/webhooks/endpoints/{endpoint_id}"
    response = client.patch(
        path,
        json={"events": ["portfolio.milestone"], "description": None, "url": PUBLIC_URL + "/v2"},
        headers=consultant.headers,
    )
    assert response.status_code == 200
    data = response.json()["data"]
    assert data["events"] == ["portfolio.milestone"] and data["description"] is None
    assert data["url"] == PUBLIC_URL + "/v2" and "secret" not in data

    assert client.delete(path, headers=consultant.headers).status_code == 204
    assert client.get(path, headers=consultant.headers).status_code == 404
    assert client.get("/api/webhooks/endpoints", headers=consultant.headers).json()["data"] == []


@pytest.mark.parametrize(
    "body",
    [
        {"url": PUBLIC_URL, "events": []},
        {"url": PUBLIC_URL, "events": ["client.invited", "client.invited"]},
        {"url": PUBLIC_URL, "events": ["client.deleted"]},
        {"url": PUBLIC_URL},
        {"events": ["client.invited"]},
        {"url": PUBLIC_URL, "events": ["client.invited"], "secret": "whsec_mine"},
        {"url": PUBLIC_URL, "events": ["client.invited"], "description": "x" * 501},
        {"url": "https://" + "a" * 2048, "events": ["client.invited"]},
    ],
)
def test_create_validation(client, make, body):
    consultant = make.consultant()
    response = client.post("/api/webhooks/endpoints", json=body, headers=consultant.headers)
    assert response.status_code == 400, response.json()
    assert client.get("/api/webhooks/endpoints", headers=consultant.headers).json()["data"] == []


def test_update_needs_a_field(client, make):
    consultant = make.consultant()
    endpoint_id = create(client, consultant).json()["data"]["id"]
    response = client.patch(f"/api/webhooks/endpoints/{endpoint_id}", json={}, headers=consultant.headers)
    assert response.status_code == 400


@pytest.mark.parametrize(
    "url, code",
    [
        ("http://127.0.0.1:8080/hook", "destination_not_allowed"),
        ("http://10.0.0.1/hook", "destination_not_allowed"),
        ("http://192.168.1.20/hook", "destination_not_allowed"),
        ("http://169.254.169.254/latest/meta-data/", "destination_not_allowed"),
        ("http://[::1]/hook", "destination_not_allowed"),
        ("http://[::ffff:127.0.0.1]/hook", "destination_not_allowed"),
        ("http://[fd00::1]/hook", "destination_not_allowed"),
        ("http://0.0.0.0/hook", "destination_not_allowed"),
        ("http://224.0.0.1/hook", "destination_not_allowed"),
        ("http://100.64.0.1/hook", "destination_not_allowed"),
        ("http://2130706433/hook", "destination_not_allowed"),  # 127.0.0.1 as one number
        ("http://localhost:8000/hook", "destination_not_allowed"),
        ("https://no-such-host.invalid/hook", "unresolvable_host"),
        ("https://user:password@93.184.215.14/hook", "invalid_url"),
    ],
)
def test_urls_that_reach_inward_are_refused(client, make, url, code):
    consultant = make.consultant()
    response = create(client, consultant, url=url)
    assert response.status_code == 400
    assert response.json()["code"] == code
    (error,) = response.json()["details"]["errors"]
    assert (error["location"], error["field"]) == ("body", "url")
    assert "password" not in response.text  # the URL is never repeated: it may carry credentials
    assert client.get("/api/webhooks/endpoints", headers=consultant.headers).json()["data"] == []


@pytest.mark.parametrize(
    "url", ["ftp://93.184.215.14/hook", "file:///etc/passwd", "gopher://93.184.215.14/", "93.184.215.14/hook"]
)
def test_only_http_schemes(client, make, url):
    response = create(client, make.consultant(), url=url)
    assert response.status_code == 400


def test_updating_to_an_inward_url_is_refused(client, make):
    consultant = make.consultant()
    endpoint_id = create(client, consultant).json()["data"]["id"]
    path = f"/api/webhooks/endpoints/{endpoint_id}"
    response = client.patch(path, json={"url": "http://169.254.169.254/"}, headers=consultant.headers)
    assert response.status_code == 400 and response.json()["code"] == "destination_not_allowed"
    assert client.get(path, headers=consultant.headers).json()["data"]["url"] == PUBLIC_URL


def test_private_urls_allowed_when_configured(client, make, settings_with):
    settings_with(webhook_allow_private_urls=True)
    assert create(client, make.consultant(), url="http://localhost:9/hook").status_code == 201


def test_production_requires_https(client, make, settings_with):
    settings_with(environment="production")
    consultant = make.consultant()
    response = create(client, consultant, url="http://93.184.215.14/hook")
    assert response.status_code == 400 and response.json()["code"] == "https_required"
    assert create(client, consultant, url="https://93.184.215.14/hook").status_code == 201


def test_at_most_twenty_endpoints(client, make):
    consultant = make.consultant()
    for n in range(webhook_endpoints.MAX_ENDPOINTS_PER_CONSULTANT):
        assert create(client, consultant, url=f"{PUBLIC_URL}/{n}").status_code == 201
    response = create(client, consultant)
    assert response.status_code == 409 and response.json()["code"] == "endpoint_limit_reached"


def test_consultants_only(client, make):
    admin = make.admin()
    consultant = make.consultant()
    endpoint_id = create(client, consultant).json()["data"]["id"]
    calls = [
        ("get", "/api/webhooks/endpoints", None),
        ("post", "/api/webhooks/endpoints", {"url": PUBLIC_URL, "events": ["client.invited"]}),
        ("get", f"/api/webhooks/endpoints/{endpoint_id}", None),
        ("patch", f"/api/webhooks/endpoints/{endpoint_id}", {"enabled": False}),
        ("delete", f"/api/webhooks/endpoints/{endpoint_id}", None),
        ("post", f"/api/webhooks/endpoints/{endpoint_id}/rotate-secret", None),
        ("get", f"/api/webhooks/endpoints/{endpoint_id}/deliveries", None),
    ]
    member = make.member(admin)
    for method, path, body in calls:
        assert client.request(method, path, json=body).status_code == 401, (method, path)
        for account in (admin, member):
            response = client.request(method, path, json=body, headers=account.headers)
            assert response.status_code == 403 and response.json()["code"] == "forbidden", (method, path)
    assert client.get(f"/api/webhooks/endpoints/{endpoint_id}", headers=consultant.headers).json()["data"]["enabled"]


def test_another_consultants_endpoint_is_not_found(client, make):
    owner, other = make.consultant(), make.consultant()
    endpoint_id = create(client, owner).json()["data"]["id"]
    base = f"/api/webhooks/endpoints/{endpoint_id}"
    assert client.get(base, headers=other.headers).status_code == 404
    assert client.patch(base, json={"enabled": False}, headers=other.headers).status_code == 404
    assert client.delete(base, headers=other.headers).status_code == 404
    assert client.post(base + "/rotate-secret", headers=other.headers).status_code == 404
    assert client.get(base + "/deliveries", headers=other.headers).status_code == 404
    assert client.get("/api/webhooks/endpoints", headers=other.headers).json()["data"] == []
    missing = client.get("/api/webhooks/endpoints/no-such-id", headers=other.headers)
    assert missing.status_code == 404 and missing.json()["code"] == "not_found"
    assert client.get(base, headers=owner.headers).json()["data"]["enabled"] is True


def test_rotation_signs_with_both_secrets_for_a_day(client, db, make, runtime, receiver):
    consultant = make.consultant()
    endpoint = make.endpoint(consultant, receiver.url)
    old_secret = endpoint.secret
    response = client.post(f"/api/webhooks/endpoints/{endpoint.id}/rotate-secret", headers=consultant.headers)
    assert response.status_code == 200
    data = response.json()["data"]
    new_secret = data["secret"]
    assert new_secret != old_secret and new_secret.startswith("whsec_")
    grace_ends = dt.datetime.fromisoformat(data["previousSecretExpiresAt"])
    assert dt.timedelta(hours=23) < grace_ends - dt.datetime.now(dt.UTC) <= dt.timedelta(hours=24)
    assert (
        "secret" not in client.get(f"/api/webhooks/endpoints/{endpoint.id}", headers=consultant.headers).json()["data"]
    )

    policy = DestinationPolicy(allow_private=True)
    outbox.emit(db, consultant_id=consultant.user.id, type="theme.updated", data={"n": 1})
    assert deliver_due(runtime.session_factory, policy) == 1
    during = receiver.requests[-1]
    assert len(during.headers["webhook-signature"].split(" ")) == 2
    for secret in (old_secret, new_secret):
        Webhook(secret).verify(during.body, during.headers)

    outbox.emit(db, consultant_id=consultant.user.id, type="theme.updated", data={"n": 2})
    assert deliver_due(runtime.session_factory, policy, now=grace_ends + dt.timedelta(seconds=1)) == 1
    after = receiver.requests[-1]
    assert len(after.headers["webhook-signature"].split(" ")) == 1
    Webhook(new_secret).verify(after.body, after.headers)
    with pytest.raises(Exception, match="No matching signature"):
        Webhook(old_secret).verify(after.body, after.headers)


def test_deliveries_page_and_filter(client, db, make, runtime, receiver):
    consultant = make.consultant()
    endpoint = make.endpoint(consultant, receiver.url)
    for n in range(5):
        outbox.emit(db, consultant_id=consultant.user.id, type="client.invited", data={"n": n})
    receiver.script = [200, 200, 500]
    deliver_due(runtime.session_factory, DestinationPolicy(allow_private=True), limit=3)
    path = f"/api/webhooks/endpoints/{endpoint.id}/deliveries"

    seen, cursor = [], None
    while True:
        query = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = client.get(path, params=query, headers=consultant.headers).json()
        seen += page["data"]
        cursor = page["nextCursor"]
        if cursor is None:
            break
    assert len(seen) == 5 and len({item["id"] for item in seen}) == 5
    assert [item["createdAt"] for item in seen] == sorted((item["createdAt"] for item in seen), reverse=True)
    assert {item["eventType"] for item in seen} == {"client.invited"}

    delivered = client.get(path, params={"status": "delivered"}, headers=consultant.headers).json()["data"]
    assert len(delivered) == 2
    assert all(item["attempts"] == 1 and item["lastResponseCode"] == 200 and item["deliveredAt"] for item in delivered)
    pending = client.get(path, params={"status": "pending"}, headers=consultant.headers).json()["data"]
    assert len(pending) == 3
    retried = [item for item in pending if item["attempts"] == 1]
    assert len(retried) == 1
    assert (
        retried[0]["lastResponseCode"] == 500 and retried[0]["lastError"] == "HTTP 500" and retried[0]["nextAttemptAt"]
    )

    bad = client.get(path, params={"cursor": "not-a-cursor"}, headers=consultant.headers)
    assert bad.status_code == 400 and bad.json()["code"] == "invalid_cursor"


def test_disabling_fails_what_waits_and_enabling_resumes(client, db, make, runtime, receiver):
    consultant = make.consultant()
    endpoint = make.endpoint(consultant, receiver.url)
    outbox.emit(db, consultant_id=consultant.user.id, type="client.accepted", data={})
    path = f"/api/webhooks/endpoints/{endpoint.id}"

    disabled = client.patch(path, json={"enabled": False}, headers=consultant.headers).json()["data"]
    assert disabled["enabled"] is False and disabled["disabledAt"]
    policy = DestinationPolicy(allow_private=True)
    assert deliver_due(runtime.session_factory, policy) == 0
    deliveries = client.get(path + "/deliveries", headers=consultant.headers).json()["data"]
    assert [(item["status"], item["lastError"]) for item in deliveries] == [
        ("failed", "Endpoint disabled by its owner")
    ]
    assert outbox.emit(db, consultant_id=consultant.user.id, type="client.accepted", data={}) is None

    enabled = client.patch(path, json={"enabled": True}, headers=consultant.headers).json()["data"]
    assert enabled["enabled"] is True and enabled["disabledAt"] is None
    outbox.emit(db, consultant_id=consultant.user.id, type="client.accepted", data={})
    assert deliver_due(runtime.session_factory, policy) == 1
    assert len(receiver.requests) == 1


def test_every_list_of_event_types_can_hold_every_event_type():
    schemas = load_spec()["components"]["schemas"]
    every = len(schemas["WebhookEventType"]["enum"])
    lists = [
        schema
        for schema in schemas.values()
        if schema.get("type") == "object"
        for schema in schema.get("properties", {}).values()
    ]
    lists = [schemas["WebhookEventTypes"]] + [
        s for s in lists if s.get("items") == {"$ref": "#/components/schemas/WebhookEventType"}
    ]
    assert len(lists) >= 2 and all(s["maxItems"] == every for s in lists)
