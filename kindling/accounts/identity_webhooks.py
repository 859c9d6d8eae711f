"""Webhooks from the identity provider: verified with Svix's library before anything is read,
mirrored onto the linked account once, then answered."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping

from sqlalchemy.orm import Session
from standardwebhooks.webhooks import EmptyWebhookSecretError

from kindling.accounts import identity
from kindling.errors import BadRequest, ServiceUnavailable
from kindling.platform.inbound_events import DUPLICATE, IGNORED, PROCESSED, first_delivery
from kindling.platform.storable_text import carries_unstorable_text

log = logging.getLogger(__name__)


def receive_identity_event(db: Session, *, payload: bytes, headers: Mapping[str, str], secret: str | None) -> str:
    """Verify a Svix-signed delivery and mirror the user event onto the linked account; the outcome."""
    if not secret:
        raise ServiceUnavailable("Identity webhooks are not configured", code="webhook_not_configured")
    # Importing svix loads its whole API client (about half a second): done on the first
    # identity event rather than at every server start.
    from svix.webhooks import Webhook as SvixWebhook
    from svix.webhooks import WebhookVerificationError

    try:
        verifier = SvixWebhook(secret)
    except (ValueError, EmptyWebhookSecretError):
        log.error("AUTH_WEBHOOK_SECRET is not a valid whsec_ secret")
        raise ServiceUnavailable("Identity webhooks are not configured", code="webhook_not_configured") from None
    headers = {name.lower(): value for name, value in headers.items()}
    try:
        # Malformed signature or timestamp headers surface as ValueError from the library.
        verifier.verify(payload, headers)
    except (WebhookVerificationError, ValueError):
        raise BadRequest("The svix-signature header does not verify", code="invalid_signature") from None
    try:
        event = json.loads(payload)
    except ValueError:
        raise BadRequest("The body is not an identity event", code="invalid_payload") from None
    event_type = event.get("type") if isinstance(event, dict) else None
    if event_type not in identity.EVENT_TYPES:
        return IGNORED
    if carries_unstorable_text(event):
        log.warning("identity event with a NUL character or an unpaired surrogate ignored")
        return IGNORED
    delivery_id = headers.get("svix-id") or headers.get("webhook-id")
    if not first_delivery(db, provider="identity", event_id=delivery_id, event_type=event_type):
        return DUPLICATE
    data = event.get("data")
    user = identity.resolve_user(db, event_type=event_type, data=data) if isinstance(data, dict) else None
    if user is None:
        return IGNORED
    return PROCESSED if identity.apply_event(db, event_type=event_type, user=user, data=data) else IGNORED
