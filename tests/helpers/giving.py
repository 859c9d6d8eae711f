"""Gifts settled through the payment webhook, and the match requests and evidence they leave
(docs/decisions.md §14). The app needs the webhook's secret: the `payment_secret` fixture."""

from __future__ import annotations

from sqlalchemy import select

from kindling.donations.models import Donation
from kindling.evidence.models import EvidenceEvent
from tests.factories import donations as payments
from tests.helpers.webhooks import deliver_payment


def settle(client, donation, event_type: str = "payment_intent.succeeded", **fields) -> None:
    """The payment provider's signed `event_type` for `donation`, taken by the webhook."""
    assert deliver_payment(client, payments.payment_event(event_type, donation, **fields)).status_code == 200


def gift(client, make, account, amount: int, currency: str = "USD", created_at=None) -> Donation:
    """A donation by `account` that the payment provider then reports succeeded."""
    donation = make.donation(account, amount=amount, currency=currency, created_at=created_at)
    settle(client, donation)
    return donation


def requests_of(client, account, **query) -> list[dict]:
    """The match and grant requests `account` may see."""
    response = client.get("/api/giving/requests", params={"limit": 200, **query}, headers=account.headers)
    assert response.status_code == 200, response.text
    return response.json()["data"]


def giving_events(db, organization_id: str) -> list[tuple[str, dict]]:
    """(type, data) of the organization's giving evidence in log order, program changes aside."""
    rows = db.execute(
        select(EvidenceEvent.type, EvidenceEvent.data)
        .where(
            EvidenceEvent.organization_id == organization_id,
            EvidenceEvent.type.like("giving.%"),
            EvidenceEvent.type != "giving.program_set",
        )
        .order_by(EvidenceEvent.seq)
    )
    return list(rows)
