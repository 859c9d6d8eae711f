"""The event types consultants subscribe to, and emitting one: in the transaction of the change it reports, for the worker to deliver."""

from __future__ import annotations

import datetime as dt
import json
import uuid

from sqlalchemy import select
from sqlalchemy.orm import Session as DbSession

from kindling.outbox.models import WebhookDelivery, WebhookEndpoint, WebhookEvent
from kindling.platform.base import utcnow

EVIDENCE_CHECKPOINT = "evidence.checkpoint"
EVIDENCE_FORK_DETECTED = "evidence.fork_detected"
EVENT_TYPES = (
    "client.invited",
    "client.accepted",
    "client.cancelled",
    "theme.updated",
    "portfolio.milestone",
    "giving.request.created",
    "giving.request.approved",
    "giving.request.paid",
    EVIDENCE_CHECKPOINT,
    EVIDENCE_FORK_DETECTED,
)


def subscribed(db: DbSession, *, consultant_id: str, type: str) -> bool:
    """Whether any enabled endpoint of the consultant takes `type`: lets a batch skip `emit` calls."""
    events = db.scalars(
        select(WebhookEndpoint.events).where(
            WebhookEndpoint.consultant_id == consultant_id, WebhookEndpoint.enabled.is_(True)
        )
    )
    return any(type in subscribed_events for subscribed_events in events)


def emit(db: DbSession, *, consultant_id: str, type: str, data: dict) -> WebhookEvent | None:
    """Put an event for a consultant into the outbox, inside the caller's transaction.

    One event row and one delivery per enabled endpoint subscribed to `type`; nothing
    when there is none. The worker sends them only once the caller's transaction
    commits, and never if it rolls back.
    """
    if type not in EVENT_TYPES:
        raise ValueError(f"unknown webhook event type {type!r}")
    candidates = db.scalars(
        select(WebhookEndpoint)
        .where(WebhookEndpoint.consultant_id == consultant_id, WebhookEndpoint.enabled.is_(True))
        # Holds off a concurrent delete of the endpoint (PostgreSQL; a no-op on SQLite) without
        # blocking workers that update its failure state.
        .with_for_update(read=True, key_share=True)
    )
    endpoints = [endpoint for endpoint in candidates if type in endpoint.events]
    if not endpoints:
        return None
    now = utcnow()
    event_id = "evt_" + uuid.uuid4().hex
    body = json.dumps(
        {"id": event_id, "type": type, "createdAt": now, "data": data},
        default=_json_value,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    event = WebhookEvent(id=event_id, consultant_id=consultant_id, type=type, body=body, created_at=now)
    db.add(event)
    db.flush()
    db.add_all(
        WebhookDelivery(endpoint_id=endpoint.id, event_id=event_id, next_attempt_at=now, created_at=now)
        for endpoint in endpoints
    )
    db.flush()
    return event


def _json_value(value: object) -> str:
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")
