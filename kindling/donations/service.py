"""Donations and the payment events that settle them (docs/decisions.md §7)."""

from __future__ import annotations

import datetime as dt
import logging

from sqlalchemy import Select, select
from sqlalchemy.orm import Session, joinedload

from kindling.donations import giving
from kindling.donations.events import DONATION_RECORDED, DONATION_STATUS_SET, DonationRecorded, DonationStatusSet
from kindling.donations.models import Donation
from kindling.errors import NotFound, invalid
from kindling.evidence import log as evidence
from kindling.platform import free_text, money, pagination
from kindling.platform.access import Principal
from kindling.platform.base import utcnow

log = logging.getLogger(__name__)

# Payment event type -> (status it moves a donation to, statuses it may move it from).
# Providers do not promise delivery order, so a refund (proof the charge went through) wins
# from any state, and a failure never overrides a success that has already been seen.
TRANSITIONS = {
    "payment_intent.succeeded": ("succeeded", {"pending", "failed"}),
    "payment_intent.payment_failed": ("failed", {"pending"}),
    "charge.refunded": ("refunded", {"pending", "failed", "succeeded"}),
}
PAYMENT_EVENT_TYPES = frozenset(TRANSITIONS)


def create_donation(
    db: Session,
    *,
    caller: Principal,
    amount: int,
    currency: str,
    recipient_name: str,
    recipient_registration_number: str | None = None,
    note: str | None = None,
    created_at: dt.datetime | None = None,
) -> Donation:
    """A pending donation in any ISO 4217 currency, in its minor units; only the payment webhook
    settles it, so an amount the payment provider cannot charge is refused."""
    money.checked(currency)
    if money.to_stripe(amount, currency) is None:
        raise invalid(
            "body",
            "amount",
            f"must be a multiple of {money.stripe_step(currency)} in {currency}, as the payment provider charges it",
            code="amount_not_payable",
        )
    donation = Donation(
        organization_id=caller.member_of,
        user_id=caller.user_id,
        amount=amount,
        currency=currency,
        recipient_name=recipient_name.strip(),
        recipient_registration_number=free_text.optional(recipient_registration_number),
        note=free_text.optional(note),
        status="pending",
        created_at=created_at or utcnow(),
    )
    donation.updated_at = donation.created_at
    db.add(donation)
    db.flush()
    data: DonationRecorded = {
        "amount": donation.amount,
        "currency": donation.currency,
        "status": donation.status,
        "createdAt": evidence.timestamp(donation.created_at),
    }
    evidence.append(
        db,
        organization_id=donation.organization_id,
        type=DONATION_RECORDED,
        subject=("donation", donation.id),
        actor_id=caller.user_id,
        data=data,
    )
    return donation


def _visible(caller: Principal) -> Select[Donation]:
    """Members see their own donations, organization admins all of the organization's."""
    statement = select(Donation).where(Donation.organization_id == caller.organization_id)
    if not caller.is_admin:
        statement = statement.where(Donation.user_id == caller.user_id)
    return statement


def list_donations(
    db: Session, *, caller: Principal, limit: int, cursor: str | None = None, status: str | None = None
) -> tuple[list[Donation], str | None]:
    """The donations the caller may see, newest first, one page at a time."""
    statement = _visible(caller)
    if status is not None:
        statement = statement.where(Donation.status == status)
    return pagination.page(
        db, statement, timestamp=Donation.created_at, record_id=Donation.id, limit=limit, cursor=cursor
    )


def get_donation(db: Session, *, caller: Principal, donation_id: str) -> Donation:
    """One donation the caller may see; any other answers 404."""
    donation = db.scalar(_visible(caller).where(Donation.id == donation_id))
    if donation is None:
        raise NotFound("No such donation")
    return donation


def find_paid_donation(db: Session, *, event_type: str, payment: dict) -> Donation | None:
    """The donation a payment event is about, locked for the update, or None (logged) when it
    names none of ours or its amount and currency are not the donation's."""
    metadata = payment.get("metadata")
    donation_id = metadata.get("donationId") if isinstance(metadata, dict) else None
    donation = None
    if isinstance(donation_id, str) and donation_id:
        # Two events for one donation may arrive together; the row lock orders them.
        donation = db.scalar(
            select(Donation)
            .options(joinedload(Donation.user, innerjoin=True))
            .where(Donation.id == donation_id)
            .with_for_update(of=Donation)
        )
    if donation is None:
        log.warning("payment event %s for unknown donation %r ignored", event_type, donation_id)
        return None
    # The payer's client creates the payment, so never let a small payment settle a larger pledge.
    # Stripe states amounts in its own minor units, which differ from ISO 4217's for some currencies.
    currency, wire = payment.get("currency"), payment.get("amount")
    if (
        not isinstance(currency, str)
        or currency.upper() != donation.currency
        or type(wire) is not int
        or money.from_stripe(wire, donation.currency) != donation.amount
    ):
        log.warning("payment event %s for donation %s ignored: amount or currency differs", event_type, donation.id)
        return None
    return donation


def apply_payment_event(db: Session, *, event_id: str, event_type: str, payment: dict, donation: Donation) -> bool:
    """Move the donation as the provider's event `event_id` says when the transition is allowed
    (and log it as evidence); False when it is not."""
    target, sources = TRANSITIONS[event_type]
    if event_type == "charge.refunded" and payment.get("refunded") is not True:
        log.info("partial refund for donation %s leaves it %s", donation.id, donation.status)
        return False
    if donation.status not in sources:
        log.info("payment event %s ignored: donation %s is %s", event_type, donation.id, donation.status)
        return False
    now = utcnow()
    previous = donation.status
    donation.status = target
    donation.updated_at = now
    if target == "succeeded":
        donation.succeeded_at = now
    db.flush()
    # Matches reserve under the ledger's locks before the evidence head is locked (kindling/donations/ledger.py).
    matches = giving.on_donation_status(db, donation=donation)
    data: DonationStatusSet = {
        "status": target,
        "previousStatus": previous,
        "amount": donation.amount,
        "currency": donation.currency,
        "providerEventId": event_id,
        "providerEventType": event_type,
    }
    status_set = evidence.Entry(DONATION_STATUS_SET, ("donation", donation.id), None, data)
    giving.record(db, donation.organization_id, matches, preceding=[status_set])
    return True
