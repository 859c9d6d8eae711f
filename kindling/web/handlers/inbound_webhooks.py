"""Inbound webhooks from the payment and identity providers."""

from __future__ import annotations

import flask

from kindling.web.runtime import db, runtime
from kindling.webhooks import inbound as inbound_webhooks


def receive_payment_event():
    # Signatures cover the exact bytes sent, so read the raw body, never a re-serialised one.
    outcome = inbound_webhooks.receive_payment_event(
        db(),
        payload=flask.request.get_data(),
        signature=flask.request.headers.get("Stripe-Signature"),
        secret=runtime().settings.payment_webhook_secret,
    )
    return {"received": True, "outcome": outcome}, 200


def receive_identity_event():
    outcome = inbound_webhooks.receive_identity_event(
        db(),
        payload=flask.request.get_data(),
        headers=dict(flask.request.headers),
        secret=runtime().settings.auth_webhook_secret,
    )
    return {"received": True, "outcome": outcome}, 200
