"""Sending events to a real receiver on loopback: signatures, retries, give-up, endpoint health, SSRF."""

from __future__ import annotations

import datetime as dt
import json

import pytest
import sqlalchemy
import yaml
from openapi_schema_validator import OAS30Validator
from sqlalchemy import func, select
from standardwebhooks import Webhook

from kindling import outbox
from kindling.consulting import clients, milestones
from kindling.consulting.models import PortfolioMilestone
from kindling.outbox.models import WebhookDelivery, WebhookEndpoint, WebhookEvent
from kindling.platform.base import utcnow
from kindling.platform.destinations import DestinationPolicy
from kindling.webhooks import delivery as webhook_delivery
from tests.helpers.contract import ROOT
from tests.servers.live import free_port

LOOPBACK = DestinationPolicy(allow_private=True)
SPEC = yaml.safe_load((ROOT / "openapi.yaml").read_text())


def deliveries(db, endpoint) -> list[WebhookDelivery]:
    db.expire_all()
    return list(db.scalars(select(WebhookDelivery).where(WebhookDelivery.endpoint_id == endpoint.id)))


def test_delivery_is_signed_and_verifies_with_the_library(db, make, runtime, receiver):
    consultant = make.consultant()
    endpoint = make.endpoint(consultant, receiver.url)
    event = outbox.emit(db, consultant_id=consultant.user.id, type="client.accepted", data={"organizationId": "o1"})

    assert webhook_delivery.deliver_due(runtime.session_factory, LOOPBACK) == 1
    [request] = receiver.requests
    assert request.path == "/hooks"
    payload = Webhook(endpoint.secret).verify(request.body, request.headers)
    assert payload["id"] == event.id == request.headers["webhook-id"]
    assert payload["type"] == "client.accepted" and payload["data"] == {"organizationId": "o1"}
    assert dt.datetime.fromisoformat(payload["createdAt"]) == event.created_at
    assert request.headers["content-type"] == "application/json"
    assert request.headers["user-agent"].startswith("Kindling-Webhooks/")
    assert abs(int(request.headers["webhook-timestamp"]) - utcnow().timestamp()) < 60

    [row] = deliveries(db, endpoint)
    assert (row.status, row.attempts, row.last_response_code, row.last_error) == ("delivered", 1, 200, None)
    assert row.delivered_at is not None and row.locked_until is None and row.claim_token is None
    assert webhook_delivery.deliver_due(runtime.session_factory, LOOPBACK) == 0
    assert len(receiver.requests) == 1


def test_a_500_is_retried_later_with_the_same_webhook_id(db, make, runtime, receiver):
    consultant = make.consultant()
    endpoint = make.endpoint(consultant, receiver.url)
    outbox.emit(db, consultant_id=consultant.user.id, type="theme.updated", data={})
    receiver.script = [500]
    start = utcnow()

    assert webhook_delivery.deliver_due(runtime.session_factory, LOOPBACK, now=start) == 1
    [row] = deliveries(db, endpoint)
    assert (row.status, row.attempts, row.last_response_code, row.last_error) == ("pending", 1, 500, "HTTP 500")
    assert dt.timedelta(seconds=4) <= row.next_attempt_at - start <= dt.timedelta(seconds=6)
    assert webhook_delivery.deliver_due(runtime.session_factory, LOOPBACK, now=start + dt.timedelta(seconds=2)) == 0

    assert webhook_delivery.deliver_due(runtime.session_factory, LOOPBACK, now=row.next_attempt_at) == 1
    [row] = deliveries(db, endpoint)
    assert (row.status, row.attempts, row.last_response_code) == ("delivered", 2, 200)
    first, second = receiver.requests
    assert first.headers["webhook-id"] == second.headers["webhook-id"]
    assert first.body == second.body
    for request in (first, second):
        Webhook(endpoint.secret).verify(request.body, request.headers)


def test_backoff_doubles_with_jitter_up_to_an_hour():
    for attempts, base in [(1, 5), (2, 10), (3, 20), (8, 640), (10, 2560), (11, 3600), (40, 3600)]:
        delays = [webhook_delivery.retry_delay(attempts).total_seconds() for _ in range(50)]
        assert all(0.8 * base <= delay <= 1.2 * base for delay in delays), attempts
        assert len(set(delays)) > 1


def test_gives_up_24_hours_after_the_event(db, make, runtime, receiver):
    consultant = make.consultant()
    endpoint = make.endpoint(consultant, receiver.url)
    event = outbox.emit(db, consultant_id=consultant.user.id, type="client.invited", data={})
    receiver.status = 503
    now = event.created_at
    while True:
        assert webhook_delivery.deliver_due(runtime.session_factory, LOOPBACK, now=now) == 1
        [row] = deliveries(db, endpoint)
        if row.status != "pending":
            break
        now = row.next_attempt_at
    assert row.status == "failed" and row.next_attempt_at is None and row.last_response_code == 503
    assert row.last_attempt_at <= event.created_at + webhook_delivery.GIVE_UP_AFTER
    # 10 doubling waits reach the 1 h cap after about 1.4 h; hourly tries fill the rest of the day.
    assert 25 <= row.attempts <= 40 and len(receiver.requests) == row.attempts
    assert len(set(receiver.ids())) == 1
    assert webhook_delivery.deliver_due(runtime.session_factory, LOOPBACK, now=now + dt.timedelta(days=1)) == 0


def test_an_endpoint_failing_for_five_days_is_disabled(db, make, runtime, receiver):
    consultant = make.consultant()
    endpoint = make.endpoint(consultant, receiver.url)
    receiver.status = 500
    outbox.emit(db, consultant_id=consultant.user.id, type="client.invited", data={"n": 1})
    start = utcnow()
    webhook_delivery.deliver_due(runtime.session_factory, LOOPBACK, now=start)
    db.refresh(endpoint)
    assert endpoint.enabled and endpoint.failing_since == start

    outbox.emit(db, consultant_id=consultant.user.id, type="client.invited", data={"n": 2})
    outbox.emit(db, consultant_id=consultant.user.id, type="client.invited", data={"n": 3})
    later = start + webhook_delivery.DISABLE_AFTER
    assert webhook_delivery.deliver_due(runtime.session_factory, LOOPBACK, now=later, limit=1) == 1
    db.refresh(endpoint)
    assert not endpoint.enabled and endpoint.disabled_at == later
    statuses = sorted(row.status for row in deliveries(db, endpoint))
    assert statuses == ["failed", "failed", "failed"]
    assert webhook_delivery.deliver_due(runtime.session_factory, LOOPBACK, now=later) == 0
    assert outbox.emit(db, consultant_id=consultant.user.id, type="client.invited", data={}) is None


def test_a_success_clears_the_failure_record(db, make, runtime, receiver):
    consultant = make.consultant()
    endpoint = make.endpoint(consultant, receiver.url)
    receiver.script = [500]
    outbox.emit(db, consultant_id=consultant.user.id, type="client.invited", data={})
    start = utcnow()
    webhook_delivery.deliver_due(runtime.session_factory, LOOPBACK, now=start)
    db.refresh(endpoint)
    assert endpoint.failing_since == start
    webhook_delivery.deliver_due(runtime.session_factory, LOOPBACK, now=start + dt.timedelta(minutes=1))
    db.refresh(endpoint)
    assert endpoint.failing_since is None and endpoint.enabled


def test_redirects_are_not_followed(db, make, runtime, receiver):
    consultant = make.consultant()
    endpoint = make.endpoint(consultant, receiver.url)
    receiver.script = [302]
    receiver.headers = {"location": receiver.url + "/elsewhere"}
    outbox.emit(db, consultant_id=consultant.user.id, type="client.invited", data={})
    webhook_delivery.deliver_due(runtime.session_factory, LOOPBACK)
    [row] = deliveries(db, endpoint)
    assert row.status == "pending" and row.last_response_code == 302
    assert row.last_error == "HTTP 302 (redirects are not followed)"
    assert [request.path for request in receiver.requests] == ["/hooks"]


def test_a_slow_receiver_times_out(db, make, runtime, receiver, monkeypatch):
    monkeypatch.setattr(webhook_delivery, "TIMEOUT_SECONDS", 0.3)
    consultant = make.consultant()
    endpoint = make.endpoint(consultant, receiver.url)
    receiver.delay = 1.5
    outbox.emit(db, consultant_id=consultant.user.id, type="client.invited", data={})
    webhook_delivery.deliver_due(runtime.session_factory, LOOPBACK)
    [row] = deliveries(db, endpoint)
    assert row.status == "pending" and row.last_response_code is None
    assert row.last_error == "No answer within 0.3 s"


def test_an_unreachable_endpoint_is_a_failed_attempt(db, make, runtime):
    consultant = make.consultant()
    endpoint = make.endpoint(consultant, f"http://127.0.0.1:{free_port()}/hooks")
    outbox.emit(db, consultant_id=consultant.user.id, type="client.invited", data={})
    webhook_delivery.deliver_due(runtime.session_factory, LOOPBACK)
    [row] = deliveries(db, endpoint)
    assert (row.status, row.attempts, row.last_response_code, row.last_error) == (
        "pending",
        1,
        None,
        "Could not connect",
    )


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_delivery_checks_the_address_it_connects_to(db, make, runtime, receiver, host):
    # The endpoint was accepted when its host was public; now it resolves to loopback
    # (DNS rebinding). The connection itself is refused before anything is sent.
    consultant = make.consultant()
    endpoint = make.endpoint(consultant, receiver.url.replace("127.0.0.1", host))
    outbox.emit(db, consultant_id=consultant.user.id, type="client.invited", data={})
    assert webhook_delivery.deliver_due(runtime.session_factory, DestinationPolicy(allow_private=False)) == 1
    assert receiver.requests == []
    [row] = deliveries(db, endpoint)
    assert row.status == "pending" and row.last_error == "The host now resolves to a non-public address"


def test_production_delivers_only_over_https(db, make, runtime, receiver):
    consultant = make.consultant()
    endpoint = make.endpoint(consultant, receiver.url)
    outbox.emit(db, consultant_id=consultant.user.id, type="client.invited", data={})
    webhook_delivery.deliver_due(runtime.session_factory, DestinationPolicy(allow_private=True, require_https=True))
    assert receiver.requests == []
    assert deliveries(db, endpoint)[0].last_error == "The URL must use https"


def test_a_lost_lease_is_retried_with_the_same_id_and_the_late_result_is_ignored(db, make, runtime, receiver):
    consultant = make.consultant()
    endpoint = make.endpoint(consultant, receiver.url)
    event = outbox.emit(db, consultant_id=consultant.user.id, type="client.invited", data={})
    start = utcnow()
    [crashed] = webhook_delivery.claim(runtime.session_factory, now=start)  # the worker dies here
    assert webhook_delivery.deliver_due(runtime.session_factory, LOOPBACK, now=start + dt.timedelta(seconds=30)) == 0

    after_lease = start + webhook_delivery.LEASE + dt.timedelta(seconds=1)
    assert webhook_delivery.deliver_due(runtime.session_factory, LOOPBACK, now=after_lease) == 1
    assert receiver.ids() == [event.id]
    [row] = deliveries(db, endpoint)
    assert (row.status, row.attempts) == ("delivered", 2)

    late = webhook_delivery.Outcome(False, status_code=500, error="HTTP 500")
    assert webhook_delivery.record(runtime.session_factory, [(crashed, late)], now=after_lease) == 0
    [row] = deliveries(db, endpoint)
    assert (row.status, row.last_response_code) == ("delivered", 200)
    db.refresh(endpoint)
    assert endpoint.failing_since is None


def test_emit_writes_one_delivery_per_subscribed_enabled_endpoint(db, make, receiver):
    consultant, other = make.consultant(), make.consultant()
    both = make.endpoint(consultant, receiver.url + "/1", ("client.invited", "theme.updated"))
    themes = make.endpoint(consultant, receiver.url + "/2", ("theme.updated",))
    make.endpoint(other, receiver.url + "/3")

    assert outbox.emit(db, consultant_id=consultant.user.id, type="client.accepted", data={}) is None
    event = outbox.emit(db, consultant_id=consultant.user.id, type="theme.updated", data={"organizationId": "o"})
    rows = db.scalars(select(WebhookDelivery).where(WebhookDelivery.event_id == event.id)).all()
    assert {row.endpoint_id for row in rows} == {both.id, themes.id}
    assert all(row.status == "pending" and row.attempts == 0 for row in rows)
    assert json.loads(event.body) == {
        "id": event.id,
        "type": "theme.updated",
        "createdAt": event.created_at.isoformat(),
        "data": {"organizationId": "o"},
    }
    with pytest.raises(ValueError, match="unknown webhook event type"):
        outbox.emit(db, consultant_id=consultant.user.id, type="client.deleted", data={})


def test_events_rolled_back_with_their_transaction_are_never_sent(db, make, runtime, receiver):
    consultant = make.consultant()
    make.endpoint(consultant, receiver.url)
    with pytest.raises(RuntimeError), db.begin_nested():
        outbox.emit(db, consultant_id=consultant.user.id, type="client.invited", data={"kept": False})
        raise RuntimeError("the change failed")
    kept = outbox.emit(db, consultant_id=consultant.user.id, type="client.invited", data={"kept": True})
    assert db.scalar(select(func.count()).select_from(WebhookEvent)) == 1
    assert webhook_delivery.deliver_due(runtime.session_factory, LOOPBACK) == 1
    assert receiver.ids() == [kept.id]


def test_milestones_happen_once_per_organization_and_threshold(db, make, runtime, receiver):
    admin = make.admin("Helping Hands")
    organization_id = admin.organization_id
    first, second, unrelated = make.consultant(), make.consultant(), make.consultant()
    for consultant in (first, second, unrelated):
        make.endpoint(consultant, receiver.url, ("portfolio.milestone",))
    make.client(first, admin)
    make.client(second, admin)
    relationship_queries = []

    @sqlalchemy.event.listens_for(runtime.engine, "before_cursor_execute")
    def note(conn, cursor, statement, parameters, context, executemany):
        if "client_relationships" in statement:
            relationship_queries.append(statement)

    def record(**totals):
        return milestones.record_milestones(db, organization_id=organization_id, **totals)

    try:
        assert record(kindness_acts_total=99) == []
        assert record(kindness_acts_total=512, volunteer_hours_total=100.5) == [
            ("kindness_acts", 100),
            ("kindness_acts", 500),
            ("volunteer_hours", 100),
        ]
        clients.end_relationship(
            db, consultant_id=second.user.id, organization_id=organization_id, ended_by="consultant"
        )
        relationship_queries.clear()
        assert record(kindness_acts_total=700, volunteer_hours_total=120) == []
        assert relationship_queries == []  # consultants are looked up only when a milestone is new
        assert record(kindness_acts_total=1000) == [("kindness_acts", 1000)]
    finally:
        sqlalchemy.event.remove(runtime.engine, "before_cursor_execute", note)
    assert db.scalar(select(func.count()).select_from(PortfolioMilestone)) == 4

    while webhook_delivery.deliver_due(runtime.session_factory, LOOPBACK):
        pass
    bodies = [json.loads(request.body) for request in receiver.requests]
    assert len(bodies) == 7  # three milestones to two consultants, then one to one
    validator = OAS30Validator(SPEC["components"]["schemas"]["PortfolioMilestoneEvent"])
    for body in bodies:
        validator.validate(body)
        assert body["data"]["organizationName"] == "Helping Hands"
    thresholds = sorted((body["data"]["metric"], body["data"]["threshold"], body["data"]["value"]) for body in bodies)
    assert thresholds == sorted(
        [("kindness_acts", 100, 512), ("kindness_acts", 500, 512), ("volunteer_hours", 100, 100.5)] * 2
        + [("kindness_acts", 1000, 1000)]
    )
    unrelated_endpoint = db.scalar(select(WebhookEndpoint).where(WebhookEndpoint.consultant_id == unrelated.user.id))
    assert deliveries(db, unrelated_endpoint) == []


@pytest.mark.parametrize("event_type", outbox.EVENT_TYPES)
def test_every_event_type_is_documented_with_a_valid_example(event_type):
    reference = SPEC["x-webhooks"][event_type]["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    schema = SPEC["components"]["schemas"][reference.rsplit("/", 1)[1]]
    assert schema["properties"]["type"]["enum"] == [event_type]
    OAS30Validator({**schema, "components": SPEC["components"]}).validate(schema["example"])
