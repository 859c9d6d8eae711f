"""Events of the payment and identity providers, signed as they sign them and delivered to
Kindling's inbound webhooks. The app needs their secrets: the `payment_secret` and
`identity_secret` fixtures."""

from __future__ import annotations

from tests.factories import donations as payments
from tests.factories import identity


def deliver_payment(client, event: dict, **signature):
    """POST /webhooks/payments of `event`, signed as Stripe signs it (`signature` changes how): the answer."""
    payload, headers = payments.signed(event, **signature)
    return client.post("/webhooks/payments", content=payload, headers=headers)


def deliver_identity(client, event: dict, **headers):
    """POST /webhooks/auth of `event`, signed as Svix signs it (`headers` changes how): the answer."""
    payload, signed_headers = identity.signed(event, **headers)
    return client.post("/webhooks/auth", content=payload, headers=signed_headers)
