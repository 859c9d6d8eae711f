"""Outbound webhooks: consultants' subscriptions, and the events other code emits into the outbox."""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import json
import secrets
import uuid
from collections.abc import Callable, Iterable

from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session as DbSession

from kindling.destinations import DestinationPolicy, RefusedDestination, check_url
from kindling.errors import BadRequest, Conflict, NotFound
from kindling.persistence.accounts import Organization
from kindling.persistence.base import utcnow
from kindling.persistence.webhooks import PortfolioMilestone, WebhookDelivery, WebhookEndpoint, WebhookEvent

EVENT_TYPES = ("client.invited", "client.accepted", "client.cancelled", "theme.updated", "portfolio.milestone")
MAX_ENDPOINTS_PER_CONSULTANT = 20
# After a rotation deliveries carry a signature with the old secret too, for this long.
SECRET_ROTATION_GRACE = dt.timedelta(hours=24)
SECRET_BYTES = 32
MILESTONES = {
    "kindness_acts": (100, 500, 1_000, 5_000, 10_000),
    "volunteer_hours": (100, 1_000),
}


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
    count = db.scalar(select(func.count()).where(WebhookEndpoint.consultant_id == consultant_id))
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
        description=_clean(description),
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
        endpoint.description = _clean(changes["description"])
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
        .order_by(WebhookDelivery.created_at.desc(), WebhookDelivery.id.desc())
        .limit(limit + 1)
    )
    if status is not None:
        query = query.where(WebhookDelivery.status == status)
    if cursor is not None:
        created_at, delivery_id = _decode_cursor(cursor)
        query = query.where(
            or_(
                WebhookDelivery.created_at < created_at,
                and_(WebhookDelivery.created_at == created_at, WebhookDelivery.id < delivery_id),
            )
        )
    rows = [tuple(row) for row in db.execute(query)]
    if len(rows) <= limit:
        return rows, None
    last = rows[limit - 1][0]
    return rows[:limit], _encode_cursor(last.created_at, last.id)


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


def record_milestones(
    db: DbSession,
    *,
    organization_id: str,
    active_consultant_ids: Callable[..., Iterable[str]],
    kindness_acts_total: int | None = None,
    volunteer_hours_total: float | None = None,
) -> list[tuple[str, int]]:
    """Note the milestones an organization's totals have reached, and tell its consultants.

    Each (organization, metric, threshold) happens once, however many transactions race
    to it: the one that inserts the milestone row emits `portfolio.milestone` to every
    consultant `active_consultant_ids(db, organization_id=...)` names, and nothing is
    asked of it when no new threshold was crossed. Returns the milestones reached now.
    """
    totals = {"kindness_acts": kindness_acts_total, "volunteer_hours": volunteer_hours_total}
    crossed = [
        (metric, threshold)
        for metric, total in totals.items()
        if total is not None
        for threshold in MILESTONES[metric]
        if total >= threshold
    ]
    if not crossed:
        return []
    known = {
        (metric, threshold)
        for metric, threshold in db.execute(
            select(PortfolioMilestone.metric, PortfolioMilestone.threshold).where(
                PortfolioMilestone.organization_id == organization_id
            )
        )
    }
    now = utcnow()
    reached = [
        (metric, threshold)
        for metric, threshold in crossed
        if (metric, threshold) not in known and _insert_once(db, organization_id, metric, threshold, now)
    ]
    if not reached:
        return []
    organization = db.get_one(Organization, organization_id)
    consultant_ids = list(active_consultant_ids(db, organization_id=organization_id))
    for metric, threshold in reached:
        for consultant_id in consultant_ids:
            emit(
                db,
                consultant_id=consultant_id,
                type="portfolio.milestone",
                data={
                    "organizationId": organization.id,
                    "organizationName": organization.name,
                    "metric": metric,
                    "threshold": threshold,
                    "value": totals[metric],
                    "reachedAt": now,
                },
            )
    return reached


def _insert_once(db: DbSession, organization_id: str, metric: str, threshold: int, now: dt.datetime) -> bool:
    # ON CONFLICT DO NOTHING keeps the caller's transaction usable when another one got there first.
    dialect = postgresql if db.get_bind().dialect.name == "postgresql" else sqlite
    statement = (
        dialect.insert(PortfolioMilestone)
        .values(organization_id=organization_id, metric=metric, threshold=threshold, reached_at=now)
        .on_conflict_do_nothing()
    )
    return db.execute(statement).rowcount == 1


def _check_destination(url: str, policy: DestinationPolicy) -> None:
    try:
        check_url(url, policy)
    except RefusedDestination as refused:
        raise BadRequest(str(refused), code=refused.code, details={"url": url}) from None


def _ordered(events: list[str]) -> list[str]:
    wanted = set(events)
    return [event for event in EVENT_TYPES if event in wanted]


def _clean(description: str | None) -> str | None:
    return (description or "").strip() or None


def _json_value(value):
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def _encode_cursor(created_at: dt.datetime, delivery_id: str) -> str:
    raw = json.dumps([created_at.astimezone(dt.UTC).isoformat(), delivery_id]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_cursor(cursor: str) -> tuple[dt.datetime, str]:
    try:
        created_at, delivery_id = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        moment = dt.datetime.fromisoformat(created_at)
        if moment.tzinfo is None or not isinstance(delivery_id, str):
            raise ValueError
    except (ValueError, TypeError, binascii.Error, UnicodeDecodeError):
        raise BadRequest("The cursor is not one this endpoint returned", code="invalid_cursor") from None
    return moment, delivery_id
