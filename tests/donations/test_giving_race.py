"""Caps and budgets hold when many donations succeed at once (docs/decisions.md §14): signed
payment webhooks sent together from parallel threads to a live server, two worker processes
on PostgreSQL (one process on SQLite, which serialises writers)."""

from __future__ import annotations

import dataclasses
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from sqlalchemy import delete
from sqlalchemy.orm import Session

from kindling.donations.models import Donation
from kindling.platform.inbound_events import InboundWebhookEvent
from kindling.rates.models import ExchangeRate, RateImport
from tests.factories import donations as payments
from tests.helpers import SignedUp, call, sign_up
from tests.helpers import rates as history
from tests.helpers.cleanup import forget

pytestmark = pytest.mark.live

GIFT = 1000
GIFTS = 20


def _server(live_server, runtime):
    return live_server(
        workers=1 if runtime.settings.embedded else 2,
        PAYMENT_WEBHOOK_SECRET=payments.PAYMENT_SECRET,
        RATE_LIMIT_MULTIPLIER="1000",
    )


def _donations(server, people: list[SignedUp], per_person: int, currency: str = "USD") -> list[dict]:
    return [
        call(
            server,
            "POST",
            "/api/donations",
            person.token,
            json={"amount": GIFT, "currency": currency, "recipient": {"name": "Food bank"}},
        ).json()["data"]
        for person in people
        for _ in range(per_person)
    ]


def _settle_at_once(server, donations: list[dict], event_ids: list[str]) -> None:
    start = threading.Barrier(len(donations))

    def deliver(donation: dict) -> int:
        # Event ids of their own, removed afterwards: the server records every event it handled.
        event_id = f"evt_{uuid.uuid4().hex}"
        event_ids.append(event_id)
        event = payments.payment_event(
            "payment_intent.succeeded",
            Donation(id=donation["id"], amount=donation["amount"], currency=donation["currency"]),
            event_id=event_id,
        )
        payload, headers = payments.signed(event)
        start.wait()
        return requests.post(f"{server.url}/webhooks/payments", data=payload, headers=headers, timeout=60).status_code

    with ThreadPoolExecutor(len(donations)) as pool:
        assert list(pool.map(deliver, donations)) == [200] * len(donations)


def _requests(server, admin: SignedUp) -> list[dict]:
    return call(server, "GET", "/api/giving/requests", admin.token, params={"limit": 200}).json()["data"]


def _organization(server, admin: SignedUp) -> dict:
    return call(server, "GET", "/api/auth/session", admin.token).json()["data"]["organization"]


@dataclasses.dataclass
class Made:
    """What a test's server committed, to remove afterwards."""

    organizations: list[str] = dataclasses.field(default_factory=list)
    event_ids: list[str] = dataclasses.field(default_factory=list)
    rates: bool = False


@pytest.fixture
def made(runtime):
    made = Made()
    yield made
    with Session(runtime.engine) as db:
        if made.rates:
            db.execute(delete(ExchangeRate))
            db.execute(delete(RateImport))
        db.execute(delete(InboundWebhookEvent).where(InboundWebhookEvent.event_id.in_(made.event_ids)))
        for organization_id in made.organizations:
            forget(db, organization_id)
        db.commit()


def test_twenty_gifts_of_one_person_at_once_never_exceed_the_cap(live_server, runtime, made):
    server = _server(live_server, runtime)
    admin = sign_up(server.url)
    organization = _organization(server, admin)
    made.organizations.append(organization["id"])
    program = {
        "name": "Match",
        "kind": "donation_match",
        "ratioPercent": 100,
        "perPersonCap": 5 * GIFT + 500,
        "approval": "auto",
    }
    call(server, "POST", "/api/giving/programs", admin.token, json=program)
    giver = sign_up(server.url, joinCode=organization["joinCode"])
    _settle_at_once(server, _donations(server, [giver], GIFTS), made.event_ids)
    requests_made = _requests(server, admin)
    assert len(requests_made) == GIFTS
    assert sum(r["amount"] for r in requests_made) == 5 * GIFT + 500
    shapes = sorted((r["status"], r["amount"], r["capped"], r["reason"] or "") for r in requests_made)
    assert shapes == sorted(
        [("approved", GIFT, False, "")] * 5
        + [("approved", 500, True, "")]
        + [("ineligible", 0, False, "person_cap_reached")] * 14
    )


def test_a_budget_shared_by_several_people_is_never_overspent(live_server, runtime, made):
    server = _server(live_server, runtime)
    admin = sign_up(server.url)
    organization = _organization(server, admin)
    made.organizations.append(organization["id"])
    program = {
        "name": "Match",
        "kind": "donation_match",
        "ratioPercent": 100,
        "perPersonCap": 100 * GIFT,
        "budget": 7 * GIFT,
        "approval": "auto",
    }
    call(server, "POST", "/api/giving/programs", admin.token, json=program)
    givers = [sign_up(server.url, joinCode=organization["joinCode"]) for _ in range(4)]
    _settle_at_once(server, _donations(server, givers, GIFTS // 4), made.event_ids)
    requests_made = _requests(server, admin)
    assert len(requests_made) == GIFTS
    assert sum(r["amount"] for r in requests_made) == 7 * GIFT
    assert sorted(r["reason"] or "" for r in requests_made) == [""] * 7 + ["budget_exhausted"] * 13
    summary = call(server, "GET", "/api/giving/summary", admin.token).json()["data"]["programs"][0]
    assert summary["budget"] == {"total": 7 * GIFT, "used": 7 * GIFT, "left": 0}


def test_gifts_in_euros_at_once_never_exceed_a_cap_in_dollars(live_server, runtime, made):
    with Session(runtime.engine) as db:
        history.load(db)
        db.commit()
    made.rates = True
    server = _server(live_server, runtime)
    admin = sign_up(server.url)
    organization = _organization(server, admin)
    made.organizations.append(organization["id"])
    # Each 10.00 EUR gift is 11.172 USD at the last quote (1.1172): 1117 cents, floored.
    converted = 1117
    program = {
        "name": "Match",
        "kind": "donation_match",
        "ratioPercent": 100,
        "perPersonCap": 100 * GIFT,
        "budget": 5 * converted + 500,
        "approval": "auto",
        "currency": "USD",
    }
    call(server, "POST", "/api/giving/programs", admin.token, json=program)
    givers = [sign_up(server.url, joinCode=organization["joinCode"]) for _ in range(4)]
    _settle_at_once(server, _donations(server, givers, GIFTS // 4, "EUR"), made.event_ids)
    requests_made = _requests(server, admin)
    assert len(requests_made) == GIFTS
    assert {r["currency"] for r in requests_made} == {"USD"}
    assert sum(r["amount"] for r in requests_made) == 5 * converted + 500
    shapes = sorted((r["amount"], r["capped"], r["reason"] or "") for r in requests_made)
    assert shapes == sorted([(converted, False, "")] * 5 + [(500, True, "")] + [(0, False, "budget_exhausted")] * 14)
