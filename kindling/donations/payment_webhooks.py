"""Webhooks from the payment provider: verified with Stripe's library before anything is read,
acted on once, then answered."""

from __future__ import annotations

import json
import logging

import stripe
from sqlalchemy.orm import Session

from kindling.donations import service as donations
from kindling.errors import BadRequest, ServiceUnavailable
from kindling.platform.inbound_events import DUPLICATE, IGNORED, PROCESSED, first_delivery
from kindling.platform.storable_text import carries_unstorable_text

log = logging.getLogger(__name__)

# Stripe's own default: a signature older than five minutes is refused (a later one is not).
PAYMENT_SIGNATURE_TOLERANCE_SECONDS = 300


def receive_payment_event(db: Session, *, payload: bytes, signature: str | None, secret: str | None) -> str:
    """Verify a Stripe-signed delivery and settle the donation it names; the outcome."""
    if not secret:
        raise ServiceUnavailable("Payment webhooks are not configured", code="webhook_not_configured")
    try:
        stripe.WebhookSignature.verify_header(payload, signature, secret, tolerance=PAYMENT_SIGNATURE_TOLERANCE_SECONDS)
        # The verified body as plain JSON: Stripe's event objects (construct_event's) cost about
        # as much to build and turn back into dicts as the rest of the delivery's Python.
        event = json.loads(payload)
    except stripe.SignatureVerificationError:
        raise BadRequest("The Stripe-Signature header does not verify", code="invalid_signature") from None
    except ValueError:
        raise BadRequest("The body is not a payment event", code="invalid_payload") from None
    if not isinstance(event, dict):
        raise BadRequest("The body is not a payment event", code="invalid_payload")
    event_type = event.get("type")
    if event_type not in donations.PAYMENT_EVENT_TYPES:
        return IGNORED
    if carries_unstorable_text(event):
        log.warning("payment event with a NUL character or an unpaired surrogate ignored")
        return IGNORED
    if not first_delivery(db, provider="payments", event_id=event.get("id"), event_type=event_type):
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
