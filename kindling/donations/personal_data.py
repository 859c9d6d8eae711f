"""A person's donations and giving requests: their copy, and the erasure of what describes them
(docs/decisions.md §15). Amounts and statuses stay."""

from __future__ import annotations

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from kindling.donations.models import Donation, GivingRequest


def export(db: Session, *, user_id: str) -> dict:
    """The person's donations and giving requests, oldest first."""
    return {
        "donations": [
            {
                "id": donation.id,
                "amount": donation.amount,
                "currency": donation.currency,
                "recipientName": donation.recipient_name,
                "note": donation.note,
                "status": donation.status,
                "createdAt": donation.created_at,
            }
            for donation in db.scalars(
                select(Donation).where(Donation.user_id == user_id).order_by(Donation.created_at)
            )
        ],
        "givingRequests": [
            {
                "id": request.id,
                "programId": request.program_id,
                "kind": request.kind,
                "status": request.status,
                "amount": request.amount,
                "currency": request.currency,
                "recipientName": request.recipient_name,
                "decisionReason": request.decision_reason,
                "decisionNote": request.decision_note,
                "createdAt": request.created_at,
            }
            for request in db.scalars(
                select(GivingRequest).where(GivingRequest.user_id == user_id).order_by(GivingRequest.created_at)
            )
        ],
    }


def erase(db: Session, *, user_id: str) -> None:
    """The notes of the person's donations, and the reasons and notes of the giving requests they made or decided."""
    db.execute(update(Donation).where(Donation.user_id == user_id).values(note=None))
    # Reasons and notes on their giving requests describe them; those they wrote on others' are theirs.
    db.execute(
        update(GivingRequest)
        .where((GivingRequest.user_id == user_id) | (GivingRequest.decided_by == user_id))
        .values(decision_reason=None, decision_note=None)
    )
