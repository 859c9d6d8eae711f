"""Donations."""

from __future__ import annotations

from kindling.donations import service as donations
from kindling.donations.models import Donation
from kindling.platform import access
from kindling.web.runtime import db


def list_donations(token_info: dict, limit: int, cursor: str | None = None, status: str | None = None):
    rows, next_cursor = donations.list_donations(
        db(), caller=access.principal(token_info), limit=limit, cursor=cursor, status=status
    )
    return {"data": [donation_body(d) for d in rows], "nextCursor": next_cursor}, 200


def create_donation(token_info: dict, body: dict):
    recipient = body["recipient"]
    donation = donations.create_donation(
        db(),
        caller=access.principal(token_info),
        amount=body["amount"],
        currency=body["currency"],
        recipient_name=recipient["name"],
        recipient_registration_number=recipient.get("registrationNumber"),
        note=body.get("note"),
    )
    return {"data": donation_body(donation)}, 201


def get_donation(token_info: dict, id_: str):
    donation = donations.get_donation(db(), caller=access.principal(token_info), donation_id=id_)
    return {"data": donation_body(donation)}, 200


def donation_body(donation: Donation) -> dict:
    return {
        "id": donation.id,
        "organizationId": donation.organization_id,
        "userId": donation.user_id,
        "amount": donation.amount,
        "currency": donation.currency,
        "recipient": {
            "name": donation.recipient_name,
            "registrationNumber": donation.recipient_registration_number,
        },
        "note": donation.note,
        "status": donation.status,
        "createdAt": donation.created_at,
        "updatedAt": donation.updated_at,
        "succeededAt": donation.succeeded_at,
    }
