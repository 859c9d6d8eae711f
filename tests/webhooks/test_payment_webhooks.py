"""POST /webhooks/payments: Stripe-signed events settle donations (docs/decisions.md §7)."""

from __future__ import annotations

import json
import logging
import time

import pytest
from sqlalchemy import func, select

from kindling.donations.models import Donation
from kindling.platform.inbound_events import InboundWebhookEvent
from tests.factories import donations as payments
from tests.helpers.webhooks import deliver_payment

URL = "/webhooks/payments"


pytestmark = pytest.mark.usefixtures("payment_secret")


def status_of(db, donation: Donation) -> str:
    db.expire_all()
    return db.get(Donation, donation.id).status


def stored_events(db) -> int:
    return db.scalar(select(func.count()).select_from(InboundWebhookEvent))


@pytest.fixture
def donation(make, db):
    return make.donation(make.member(make.admin()))


def test_succeeded_event_settles_the_donation(client, db, donation):
    response = deliver_payment(client, payments.payment_event("payment_intent.succeeded", donation))
    assert response.status_code == 200
    assert response.json() == {"received": True, "outcome": "processed"}
    db.expire_all()
    settled = db.get(Donation, donation.id)
    assert settled.status == "succeeded" and settled.succeeded_at is not None


@pytest.mark.parametrize(
    ("history", "event_type", "expected"),
    [
        ([], "payment_intent.payment_failed", "failed"),
        (["payment_intent.payment_failed"], "payment_intent.succeeded", "succeeded"),  # a retried payment
        (["payment_intent.succeeded"], "charge.refunded", "refunded"),
        (["payment_intent.succeeded"], "payment_intent.payment_failed", "succeeded"),  # late failure ignored
        (["payment_intent.succeeded", "charge.refunded"], "payment_intent.succeeded", "refunded"),
        ([], "charge.refunded", "refunded"),  # the refund outran the success
    ],
)
def test_status_moves(client, db, donation, history, event_type, expected):
    for earlier in history:
        assert deliver_payment(client, payments.payment_event(earlier, donation)).status_code == 200
    assert deliver_payment(client, payments.payment_event(event_type, donation)).status_code == 200
    assert status_of(db, donation) == expected


@pytest.mark.parametrize(
    ("currency", "amount", "wire", "wrong"),
    [
        ("JPY", 2500, 2500, 250000),  # zero-decimal in ISO 4217 and at Stripe
        ("KWD", 2510, 2510, 251),  # three decimals in both; Stripe's end in 0
        ("ISK", 7, 700, 7),  # zero-decimal in ISO 4217, hundredths at Stripe
        ("HUF", 1250, 1250, 13),  # hundredths in both (CLDR's 0 digits are not the exponent)
        ("TWD", 99, 99, 1),  # hundredths in both
        ("MGA", 500, 5, 500),  # hundredths in ISO 4217, zero-decimal at Stripe
    ],
)
def test_stripe_amounts_settle_gifts_in_their_own_minor_units(client, db, make, currency, amount, wire, wrong):
    donation = make.donation(make.member(make.admin()), amount=amount, currency=currency)
    off = payments.payment_event("payment_intent.succeeded", donation, amount=wrong)
    assert deliver_payment(client, off).json()["outcome"] == "ignored"
    assert status_of(db, donation) == "pending"
    event = payments.payment_event("payment_intent.succeeded", donation)
    assert event["data"]["object"]["amount"] == wire
    assert deliver_payment(client, event).json()["outcome"] == "processed"
    assert status_of(db, donation) == "succeeded"
    refund = payments.payment_event("charge.refunded", donation)
    assert deliver_payment(client, refund).json()["outcome"] == "processed"
    assert status_of(db, donation) == "refunded"


def test_partial_refund_changes_nothing(client, db, donation):
    deliver_payment(client, payments.payment_event("payment_intent.succeeded", donation))
    partial = payments.payment_event("charge.refunded", donation, refunded=False, amount_refunded=100)
    assert deliver_payment(client, partial).json()["outcome"] == "ignored"
    assert status_of(db, donation) == "succeeded"


def test_replayed_event_is_processed_once(client, db, donation):
    succeeded = payments.payment_event("payment_intent.succeeded", donation, event_id="evt_once")
    assert deliver_payment(client, succeeded).json()["outcome"] == "processed"
    assert deliver_payment(client, payments.payment_event("charge.refunded", donation)).json()["outcome"] == "processed"
    replay = deliver_payment(client, succeeded)
    assert replay.status_code == 200 and replay.json()["outcome"] == "duplicate"
    assert status_of(db, donation) == "refunded"
    assert (
        db.scalar(
            select(func.count()).select_from(InboundWebhookEvent).where(InboundWebhookEvent.event_id == "evt_once")
        )
        == 1
    )


def test_raw_body_is_what_is_verified(client, db, donation):
    # Odd spacing, key order and escapes: re-serialising the JSON would break the signature.
    event = payments.payment_event("payment_intent.succeeded", donation)
    payload = (
        '{ "type" :"payment_intent.succeeded",\n "id": "%s", "object":"event", "data": {"object": %s} , "note": "caf\\u00e9" }'
        % (event["id"], json.dumps(event["data"]["object"], indent=3))
    ).encode()
    headers = {
        "Stripe-Signature": payments.stripe_signature(payload),
        "Content-Type": "application/json; charset=utf-8",
    }
    assert client.post(URL, content=payload, headers=headers).json()["outcome"] == "processed"
    assert status_of(db, donation) == "succeeded"


def test_bad_signatures_change_nothing(client, db, donation):
    event = payments.payment_event("payment_intent.succeeded", donation)
    payload, headers = payments.signed(event)
    tampered = payload.replace(b'"amount": 2500', b'"amount": 2501')
    cases = [
        (payload, {}),  # no signature
        (payload, {"Stripe-Signature": ""}),
        (payload, {"Stripe-Signature": "garbage"}),
        (payload, {"Stripe-Signature": f"t={int(time.time())}"}),  # no v1
        (payload, {"Stripe-Signature": payments.stripe_signature(payload, secret="whsec_someone_else")}),
        (payload, {"Stripe-Signature": payments.stripe_signature(payload, timestamp=int(time.time()) - 301)}),  # stale
        (tampered, headers),
        (json.dumps(event).encode(), headers),  # same event, re-serialised
    ]
    for body, signature in cases:
        response = client.post(URL, content=body, headers={"Content-Type": "application/json", **signature})
        assert response.status_code == 400, signature
        assert response.json()["error"]
    assert status_of(db, donation) == "pending"
    assert stored_events(db) == 0
    # Within the 300 s tolerance it is accepted.
    fresh = payments.stripe_signature(payload, timestamp=int(time.time()) - 290)
    assert client.post(URL, content=payload, headers={**headers, "Stripe-Signature": fresh}).status_code == 200
    assert status_of(db, donation) == "succeeded"


def test_invalid_signature_has_its_code(client, donation):
    payload, headers = payments.signed(
        payments.payment_event("payment_intent.succeeded", donation), secret="whsec_wrong"
    )
    response = client.post(URL, content=payload, headers=headers)
    assert response.status_code == 400 and response.json()["code"] == "invalid_signature"


def test_unknown_event_types_are_ignored(client, db, donation):
    response = deliver_payment(client, payments.payment_event("payment_intent.created", donation))
    assert response.status_code == 200 and response.json()["outcome"] == "ignored"
    assert status_of(db, donation) == "pending"
    assert stored_events(db) == 0


def test_unknown_donation_is_logged(client, db, donation, caplog):
    event = payments.payment_event("payment_intent.succeeded", donation, metadata={"donationId": "not-ours"})
    with caplog.at_level(logging.WARNING, logger="kindling.donations.service"):
        response = deliver_payment(client, event)
    assert response.status_code == 200 and response.json()["outcome"] == "ignored"
    assert "unknown donation" in caplog.text
    no_metadata = payments.payment_event("payment_intent.succeeded", donation, metadata={})
    assert deliver_payment(client, no_metadata).json()["outcome"] == "ignored"
    assert status_of(db, donation) == "pending"


@pytest.mark.parametrize("fields", [{"amount": 1}, {"currency": "eur"}, {"currency": None}])
def test_payment_must_match_the_pledge(client, db, donation, fields):
    event = payments.payment_event("payment_intent.succeeded", donation, **fields)
    assert deliver_payment(client, event).json()["outcome"] == "ignored"
    assert status_of(db, donation) == "pending"


def test_not_configured_is_unavailable(client, db, settings_with, donation):
    settings_with(payment_webhook_secret=None)
    response = deliver_payment(client, payments.payment_event("payment_intent.succeeded", donation))
    assert response.status_code == 503 and response.json()["code"] == "webhook_not_configured"
    assert status_of(db, donation) == "pending"


def test_body_must_be_a_json_object(client):
    for payload in (b"[1, 2]", b"not json", b""):
        headers = {"Stripe-Signature": payments.stripe_signature(payload), "Content-Type": "application/json"}
        assert client.post(URL, content=payload, headers=headers).status_code == 400, payload


def test_webhooks_need_no_session_but_ignore_one(client, make, db, donation):
    # A session is neither required nor a substitute for the signature.
    payload, _ = payments.signed(payments.payment_event("payment_intent.succeeded", donation))
    response = client.post(URL, content=payload, headers={"Content-Type": "application/json", **make.admin().headers})
    assert response.status_code == 400
    assert status_of(db, donation) == "pending"


def test_nul_characters_are_ignored_not_a_server_error(client, db, donation):
    # PostgreSQL text cannot hold NUL; such an event is answered, logged and left alone.
    event = payments.payment_event("payment_intent.succeeded", donation, metadata={"donationId": donation.id + "\x00"})
    response = deliver_payment(client, event)
    assert response.status_code == 200 and response.json()["outcome"] == "ignored"
    assert status_of(db, donation) == "pending"
