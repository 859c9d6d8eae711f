"""Outbound webhook endpoints: consultants' subscriptions, their secrets and their deliveries."""

from __future__ import annotations

import base64
import datetime as dt
import secrets

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session as DbSession

from kindling.errors import Conflict, NotFound, invalid
from kindling.outbox import EVENT_TYPES
from kindling.outbox.models import WebhookDelivery, WebhookEndpoint, WebhookEvent
from kindling.platform import free_text, pagination
from kindling.platform.base import utcnow
from kindling.platform.destinations import DestinationPolicy, RefusedDestination, check_url

MAX_ENDPOINTS_PER_CONSULTANT = 20
# After a rotation deliveries carry a signature with the old secret too, for this long.
SECRET_ROTATION_GRACE = dt.timedelta(hours=24)
SECRET_BYTES = 32


def new_secret() -> str:
    """A signing secret in the Standard Webhooks format: `whsec_` and base64 of random bytes."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def create_endpoint(
    db: DbSession,
    *,
    consultant_id: str,
    url: str,
    events: list[str],
    description: str | None,
    policy: DestinationPolicy,
) -> WebhookEndpoint:
    """Subscribe a URL of the consultant's to some event types; the new secret is on the result."""
    _check_destination(url, policy)
    count = db.execute(select(func.count()).where(WebhookEndpoint.consultant_id == consultant_id)).scalar_one()
    if count >= MAX_ENDPOINTS_PER_CONSULTANT:
        raise Conflict(
            f"A consultant may have at most {MAX_ENDPOINTS_PER_CONSULTANT} webhook endpoints",
            code="endpoint_limit_reached",
        )
    now = utcnow()
    endpoint = WebhookEndpoint(
        consultant_id=consultant_id,
        url=url,
        events=_ordered(events),
        description=free_text.optional(description),
        secret=new_secret(),
        created_at=now,
        updated_at=now,
    )
    db.add(endpoint)
    db.flush()
    return endpoint


def list_endpoints(db: DbSession, *, consultant_id: str) -> list[WebhookEndpoint]:
    """The consultant's endpoints, oldest first."""
    return list(
        db.scalars(
            select(WebhookEndpoint)
            .where(WebhookEndpoint.consultant_id == consultant_id)
            .order_by(WebhookEndpoint.created_at, WebhookEndpoint.id)
        )
    )


def get_endpoint(db: DbSession, *, consultant_id: str, endpoint_id: str) -> WebhookEndpoint:
    """One of the consultant's endpoints; anyone else's is not found."""
    endpoint = db.get(WebhookEndpoint, endpoint_id)
    if endpoint is None or endpoint.consultant_id != consultant_id:
        raise NotFound("No such webhook endpoint")
    return endpoint


def update_endpoint(
    db: DbSession, *, consultant_id: str, endpoint_id: str, changes: dict, policy: DestinationPolicy
) -> WebhookEndpoint:
    """Change an endpoint's url, events, description or enabled flag (keys of `changes`)."""
    endpoint = get_endpoint(db, consultant_id=consultant_id, endpoint_id=endpoint_id)
    now = utcnow()
    if "url" in changes:
        _check_destination(changes["url"], policy)
        endpoint.url = changes["url"]
    if "events" in changes:
        endpoint.events = _ordered(changes["events"])
    if "description" in changes:
        endpoint.description = free_text.optional(changes["description"])
    if changes.get("enabled") is True and not endpoint.enabled:
        endpoint.enabled, endpoint.disabled_at, endpoint.failing_since = True, None, None
    elif changes.get("enabled") is False and endpoint.enabled:
        disable_endpoint(db, endpoint=endpoint, reason="Endpoint disabled by its owner", now=now)
    endpoint.updated_at = now
    db.flush()
    return endpoint


def delete_endpoint(db: DbSession, *, consultant_id: str, endpoint_id: str) -> None:
    """Remove an endpoint; its delivery history goes with it (ON DELETE CASCADE)."""
    db.delete(get_endpoint(db, consultant_id=consultant_id, endpoint_id=endpoint_id))
    db.flush()


def rotate_secret(db: DbSession, *, consultant_id: str, endpoint_id: str) -> WebhookEndpoint:
    """Give an endpoint a new secret; the one it replaces still signs deliveries for 24 hours."""
    endpoint = get_endpoint(db, consultant_id=consultant_id, endpoint_id=endpoint_id)
    now = utcnow()
    endpoint.previous_secret = endpoint.secret
    endpoint.previous_secret_expires_at = now + SECRET_ROTATION_GRACE
    endpoint.secret = new_secret()
    endpoint.updated_at = now
    db.flush()
    return endpoint


def disable_endpoint(db: DbSession, *, endpoint: WebhookEndpoint, reason: str, now: dt.datetime) -> None:
    """Stop delivering to an endpoint; what was still waiting for it fails with `reason`."""
    endpoint.enabled = False
    endpoint.disabled_at = now
    endpoint.updated_at = now
    db.execute(
        update(WebhookDelivery)
        .where(WebhookDelivery.endpoint_id == endpoint.id, WebhookDelivery.status == "pending")
        .values(status="failed", next_attempt_at=None, locked_until=None, claim_token=None, last_error=reason)
    )


def list_deliveries(
    db: DbSession,
    *,
    consultant_id: str,
    endpoint_id: str,
    status: str | None = None,
    limit: int = 50,
    cursor: str | None = None,
) -> tuple[list[tuple[WebhookDelivery, str]], str | None]:
    """An endpoint's deliveries with their event types, newest first, and the cursor of the next page."""
    endpoint = get_endpoint(db, consultant_id=consultant_id, endpoint_id=endpoint_id)
    query = (
        select(WebhookDelivery, WebhookEvent.type)
        .join(WebhookEvent, WebhookEvent.id == WebhookDelivery.event_id)
        .where(WebhookDelivery.endpoint_id == endpoint.id)
    )
    if status is not None:
        query = query.where(WebhookDelivery.status == status)
    query = pagination.keyset(
        query, timestamp=WebhookDelivery.created_at, record_id=WebhookDelivery.id, limit=limit, cursor=cursor
    )
    rows = [(delivery, event_type) for delivery, event_type in db.execute(query)]
    return pagination.cut(rows, limit=limit, position=lambda row: (row[0].created_at, row[0].id))


def _check_destination(url: str, policy: DestinationPolicy) -> None:
    try:
        check_url(url, policy)
    except RefusedDestination as refused:
        raise invalid("body", "url", str(refused), code=refused.code) from None


def _ordered(events: list[str]) -> list[str]:
    wanted = set(events)
    return [event for event in EVENT_TYPES if event in wanted]
