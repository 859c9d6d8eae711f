"""Webhook endpoints, created through the service the API uses."""

from __future__ import annotations

from sqlalchemy.orm import Session

from kindling import outbox
from kindling.outbox.models import WebhookEndpoint
from kindling.platform.destinations import DestinationPolicy
from kindling.webhooks import endpoints as webhook_endpoints
from tests.factories.accounts import Account

# Test receivers listen on loopback, which only this policy allows.
LOOPBACK_ALLOWED = DestinationPolicy(allow_private=True)


class Webhooks:
    """Methods of `make` (`tests.factories.Factories`)."""

    db: Session

    def endpoint(self, consultant: Account, url: str, events: tuple[str, ...] = outbox.EVENT_TYPES) -> WebhookEndpoint:
        """An enabled endpoint of `consultant` subscribed to `events`."""
        return webhook_endpoints.create_endpoint(
            self.db,
            consultant_id=consultant.user.id,
            url=url,
            events=list(events),
            description=None,
            policy=LOOPBACK_ALLOWED,
        )
