"""Donations, and payment events signed the way Stripe signs them."""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import time

from sqlalchemy.orm import Session

from kindling.donations import service as donations
from kindling.donations.models import Donation
from kindling.platform import money
from tests.factories.accounts import Account
from tests.factories.principals import principal

PAYMENT_SECRET = "whsec_test_payments_0123456789abcdef"
_events = itertools.count(1)


class Donations:
    """Methods of `make` (`tests.factories.Factories`)."""

    db: Session

    def donation(self, account: Account, *, amount: int = 2500, currency: str = "USD", created_at=None) -> Donation:
        """A pending donation by `account` (made at `created_at`, by default now)."""
        return donations.create_donation(
            self.db,
            caller=principal(account),
            amount=amount,
            currency=currency,
            recipient_name="Shelter Trust",
            created_at=created_at,
        )

    def payment(self, donation: Donation, status: str) -> None:
        """The payment provider's event that moves `donation` to `status`, applied as the webhook applies it."""
        event_type = {v[0]: k for k, v in donations.TRANSITIONS.items()}[status]
        payment = payment_event(event_type, donation)
        assert donations.apply_payment_event(
            self.db, event_id=payment["id"], event_type=event_type, payment=payment["data"]["object"], donation=donation
        )


def payment_event(event_type: str, donation: Donation, *, event_id: str | None = None, **fields) -> dict:
    """A Stripe event about a payment (or, for charge.* events, a charge) of the donation."""
    is_charge = event_type.startswith("charge.")
    wire = money.to_stripe(donation.amount, donation.currency)
    payment = {
        "id": f"ch_{next(_events)}" if is_charge else f"pi_{next(_events)}",
        "object": "charge" if is_charge else "payment_intent",
        # Stripe's own minor units, which are not ISO 4217's for ISK, MGA and a few more.
        "amount": wire,
        "currency": donation.currency.lower(),
        "metadata": {"donationId": donation.id},
        **({"refunded": True, "amount_refunded": wire} if event_type == "charge.refunded" else {}),
        **fields,
    }
    return {
        "id": event_id or f"evt_{next(_events)}",
        "object": "event",
        "api_version": "2024-06-20",
        "created": int(time.time()),
        "type": event_type,
        "data": {"object": payment},
    }


def stripe_signature(payload: bytes, *, secret: str = PAYMENT_SECRET, timestamp: int | None = None) -> str:
    """`Stripe-Signature` as Stripe computes it: HMAC-SHA256 of "{t}.{body}", hex, keyed by the whole secret."""
    timestamp = int(time.time()) if timestamp is None else timestamp
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + payload, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={digest}"


def signed(event: dict, **signature) -> tuple[bytes, dict]:
    """The body and headers of a Stripe delivery of `event`."""
    payload = json.dumps(event, indent=2).encode()
    return payload, {"Stripe-Signature": stripe_signature(payload, **signature), "Content-Type": "application/json"}
