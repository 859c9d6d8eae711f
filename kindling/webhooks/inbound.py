"""Webhooks from the payment and identity providers: verified, acted on once, then answered.

Every delivery is verified with the provider's official library before anything is read.
A verified event of a type this service handles is recorded by its id, so a replay (the
same Stripe event id, the same `svix-id`) is answered 200 and changes nothing.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping

import stripe
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from standardwebhooks.webhooks import EmptyWebhookSecretError

from kindling.accounts import identity
from kindling.donations import service as donations
from kindling.errors import BadRequest, ServiceUnavailable
from kindling.platform.storable_text import carries_unstorable_text
from kindling.webhooks.inbound_models import InboundWebhookEvent

log = logging.getLogger(__name__)

# Stripe's own default: a signature older than five minutes is refused (a later one is not).
PAYMENT_SIGNATURE_TOLERANCE_SECONDS = 300
PROCESSED, DUPLICATE, IGNORED = "processed", "duplicate", "ignored"


def receive_payment_event(db: Session, *, payload: bytes, signature: str | None, secret: str | None) -> str:
    """Verify a Stripe-signed delivery and settle the donation it names; the outcome."""
    if not secret:
        raise ServiceUnavailable("Payment webhooks are not configured", code="webhook_not_configured")
    try:
        event = stripe.Webhook.construct_event(
            payload, signature, secret, tolerance=PAYMENT_SIGNATURE_TOLERANCE_SECONDS
        )
    except stripe.SignatureVerificationError:
        raise BadRequest("The Stripe-Signature header does not verify", code="invalid_signature") from None
    except ValueError:
        raise BadRequest("The body is not a payment event", code="invalid_payload") from None
    event = event.to_dict()
    event_type = event.get("type")
    if event_type not in donations.PAYMENT_EVENT_TYPES:
        return IGNORED
    if carries_unstorable_text(event):
        log.warning("payment event with a NUL character or an unpaired surrogate ignored")
        return IGNORED
    if not _first_delivery(db, provider="payments", event_id=event.get("id"), event_type=event_type):
        return DUPLICATE
    data = event.get("data")
    payment = data.get("object") if isinstance(data, dict) else None
    if not isinstance(payment, dict):
        log.warning("payment event %s without a payment object ignored", event.get("id"))
        return IGNORED
    donation = donations.find_paid_donation(db, event_type=event_type, payment=payment)
    if donation is None:
        return IGNORED
    changed = donations.apply_payment_event(
        db, event_id=event["id"], event_type=event_type, payment=payment, donation=donation
    )
    return PROCESSED if changed else IGNORED


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
    if not _first_delivery(db, provider="identity", event_id=delivery_id, event_type=event_type):
        return DUPLICATE
    data = event.get("data")
    user = identity.resolve_user(db, event_type=event_type, data=data) if isinstance(data, dict) else None
    if user is None:
        return IGNORED
    return PROCESSED if identity.apply_event(db, event_type=event_type, user=user, data=data) else IGNORED


def _first_delivery(db: Session, *, provider: str, event_id: object, event_type: str) -> bool:
    """Record the event; False when it was recorded before (a replay)."""
    if not isinstance(event_id, str) or not 1 <= len(event_id) <= 255:
        raise BadRequest("The event has no usable id", code="invalid_payload")
    try:
        with db.begin_nested():
            db.add(InboundWebhookEvent(provider=provider, event_id=event_id, event_type=event_type))
    except IntegrityError:  # the unique (provider, event_id) pair, also against a concurrent delivery
        log.info("%s event %s already processed", provider, event_id)
        return False
    return True
