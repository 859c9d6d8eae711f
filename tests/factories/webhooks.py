"""Webhook endpoints, created through the service the API uses."""

from __future__ import annotations

from sqlalchemy.orm import Session

from kindling.destinations import DestinationPolicy
from kindling.persistence.webhooks import WebhookEndpoint
from kindling.services import webhooks
from tests.factories import Account

# Test receivers listen on loopback, which only this policy allows.
LOOPBACK_ALLOWED = DestinationPolicy(allow_private=True)


def endpoint(db: Session, consultant: Account, url: str, events: tuple[str, ...] = webhooks.EVENT_TYPES) -> WebhookEndpoint:
    """An enabled endpoint of `consultant` subscribed to `events`."""
    return webhooks.create_endpoint(
        db, consultant_id=consultant.user.id, url=url, events=list(events), description=None, policy=LOOPBACK_ALLOWED
    )
