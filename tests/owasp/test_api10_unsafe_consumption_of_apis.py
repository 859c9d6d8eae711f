"""API10 Unsafe Consumption of APIs: the payment and identity providers' webhooks act only on
events they signed, and a signed event of an unexpected shape changes nothing and breaks nothing."""

from __future__ import annotations

import json
import time

import pytest
from sqlalchemy import func, select

from kindling.accounts.models import User
from kindling.donations.models import Donation
from kindling.platform.inbound_events import InboundWebhookEvent
from tests.factories import donations as payments
from tests.factories import identity
from tests.helpers import assert_envelope
from tests.helpers.webhooks import deliver_identity, deliver_payment

pytestmark = pytest.mark.usefixtures("payment_secret", "identity_secret")


@pytest.fixture
def donation(make, db) -> Donation:
    return make.donation(make.member(make.admin()))


def state(db, donation: Donation, account_id: str) -> tuple:
    db.expire_all()
    user = db.get(User, account_id)
    events = db.scalar(select(func.count()).select_from(InboundWebhookEvent))
    return db.get(Donation, donation.id).status, user.name, user.email, user.active, events


def test_unsigned_forged_or_stale_events_are_400_and_change_nothing(client, make, db, donation):
    victim = make.member(make.admin())
    before = state(db, donation, victim.user.id)
    payment, payment_headers = payments.signed(payments.payment_event("payment_intent.succeeded", donation))
    deletion = identity.user_event("user.deleted", "user_victim")
    identity_payload, identity_headers = identity.signed(
        identity.user_event("user.updated", "user_victim", email=victim.user.email, first_name="Mallory")
    )
    attempts = [
        ("/webhooks/payments", payment, {"Content-Type": "application/json"}),
        (
            "/webhooks/payments",
            payment,
            {**payment_headers, "Stripe-Signature": payments.stripe_signature(payment, secret="whsec_guess")},
        ),
        (
            "/webhooks/payments",
            payment,
            {
                **payment_headers,
                "Stripe-Signature": payments.stripe_signature(payment, timestamp=int(time.time()) - 3600),
            },
        ),
        ("/webhooks/payments", payment.replace(b"succeeded", b"failed"), payment_headers),
        ("/webhooks/auth", identity_payload, {"Content-Type": "application/json"}),
        ("/webhooks/auth", identity_payload, identity.svix_headers(identity_payload, secret="whsec_" + "Z3Vlc3M=")),
        (
            "/webhooks/auth",
            identity_payload,
            identity.svix_headers(identity_payload, timestamp=int(time.time()) - 3600),
        ),
        ("/webhooks/auth", identity.signed(deletion)[0], identity_headers),
    ]
    for url, body, headers in attempts:
        assert_envelope(client.post(url, content=body, headers=headers), 400)
    assert state(db, donation, victim.user.id) == before


ODD_PAYMENTS = [
    {"metadata": {"donationId": 12345}},
    {"metadata": {"donationId": ["a", "b"]}},
    {"metadata": {"donationId": {"$ne": None}}},
    {"metadata": "not an object"},
    {"metadata": None},
    {"amount": "2500"},
    {"amount": -1},
    {"amount": 10**30},
    {"currency": None},
    {"currency": 7},
]


@pytest.mark.parametrize("fields", ODD_PAYMENTS, ids=[repr(f) for f in ODD_PAYMENTS])
def test_signed_payment_events_of_odd_shape_change_nothing(client, db, donation, fields):
    event = payments.payment_event("payment_intent.succeeded", donation, **fields)
    response = deliver_payment(client, event)
    assert response.status_code in (200, 400), response.text
    db.expire_all()
    assert db.get(Donation, donation.id).status == "pending"


def test_signed_payment_events_missing_their_parts_are_not_server_errors(client, db, donation):
    for event in (
        {"id": "evt_bare", "type": "payment_intent.succeeded"},
        {"id": "evt_no_object", "type": "charge.refunded", "data": {}},
        {"id": "evt_list", "type": "payment_intent.succeeded", "data": {"object": []}},
        {"type": None, "data": None},
    ):
        response = deliver_payment(client, event)
        assert response.status_code in (200, 400), (event, response.text)
    db.expire_all()
    assert db.get(Donation, donation.id).status == "pending"


ODD_USERS = [
    {"email_addresses": "not a list", "primary_email_address_id": "idn_primary"},
    {"email_addresses": [None, 3, {"id": "idn_primary"}], "primary_email_address_id": "idn_primary"},
    {
        "email_addresses": [{"id": "idn_primary", "email_address": ["x"], "verification": {"status": "verified"}}],
        "primary_email_address_id": "idn_primary",
    },
    {"first_name": {"nested": True}, "last_name": 5},
    {"first_name": "x" * 10_000},
]


@pytest.mark.parametrize("fields", ODD_USERS, ids=range(len(ODD_USERS)))
def test_signed_identity_events_of_odd_shape_change_nothing_they_should_not(client, make, db, fields):
    account = make.member(make.admin())
    before = (account.user.name, account.user.email)
    event = identity.user_event("user.updated", "user_odd", **fields)
    response = deliver_identity(client, event)
    assert response.status_code in (200, 400), response.text
    db.expire_all()
    user = db.get(User, account.user.id)
    assert (user.name, user.email) == before and user.external_id is None


def test_a_replayed_delivery_acts_once(client, make, db, donation):
    payload, headers = payments.signed(
        payments.payment_event("payment_intent.succeeded", donation, event_id="evt_replayed")
    )
    outcomes = [client.post("/webhooks/payments", content=payload, headers=headers).json()["outcome"] for _ in range(3)]
    assert outcomes[0] == "processed" and len(set(outcomes[1:])) == 1 and outcomes[1] != "processed"
    assert db.scalar(select(func.count()).select_from(InboundWebhookEvent)) == 1


def test_signed_events_with_unstorable_text_are_ignored_not_server_errors(client, make, db, donation):
    account = make.member(make.admin())
    updated = identity.user_event("user.updated", "user_surrogate", email=account.user.email, first_name="\ud800")
    payload = json.dumps(updated).encode()  # json.dumps escapes the unpaired surrogate as \ud800
    response = client.post("/webhooks/auth", content=payload, headers=identity.svix_headers(payload))
    assert response.status_code == 200 and response.json()["outcome"] == "ignored"
    payment = payments.payment_event("payment_intent.succeeded", donation, description="\udfff")
    payload = json.dumps(payment).encode()
    response = client.post(
        "/webhooks/payments",
        content=payload,
        headers={"Content-Type": "application/json", "Stripe-Signature": payments.stripe_signature(payload)},
    )
    assert response.status_code == 200 and response.json()["outcome"] == "ignored"
    db.expire_all()
    assert db.get(User, account.user.id).name == account.user.name
    assert db.get(Donation, donation.id).status == "pending"
