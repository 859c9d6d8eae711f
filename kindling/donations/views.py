"""Handlers of donations, giving programs and requests, and the payment provider's webhooks."""

from __future__ import annotations

import flask

from kindling.donations import giving, payment_webhooks, programs, summary
from kindling.donations import service as donations
from kindling.donations.models import Donation, GivingProgram, GivingRequest
from kindling.platform import access
from kindling.platform.request import Reply, db, runtime


def list_donations(token_info: dict, limit: int, cursor: str | None = None, status: str | None = None) -> Reply:
    rows, next_cursor = donations.list_donations(
        db(), caller=access.principal(token_info), limit=limit, cursor=cursor, status=status
    )
    return {"data": [donation_body(d) for d in rows], "nextCursor": next_cursor}, 200


def create_donation(token_info: dict, body: dict) -> Reply:
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


def get_donation(token_info: dict, id_: str) -> Reply:
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


# API names of program fields -> the service's.
PROGRAM_FIELDS = {
    "name": "name",
    "description": "description",
    "kind": "kind",
    "active": "active",
    "periodStartMonth": "period_start_month",
    "perPersonCap": "per_person_cap",
    "budget": "budget",
    "approval": "approval",
    "eligibleRoles": "eligible_roles",
    "eligibleDepartments": "eligible_departments",
    "ratioPercent": "ratio_percent",
    "minimumGift": "minimum_gift",
    "maximumMatchPerGift": "maximum_match_per_gift",
    "ratePerHour": "rate_per_hour",
    "minimumHours": "minimum_hours",
    "currency": "currency",
}


def create_program(token_info: dict, body: dict) -> Reply:
    fields = {PROGRAM_FIELDS[name]: value for name, value in body.items()}
    program = programs.create_program(db(), caller=access.principal(token_info), **fields)
    return {"data": program_body(program)}, 201


def list_programs(
    token_info: dict, limit: int = 50, cursor: str | None = None, kind: str | None = None, active: bool | None = None
) -> Reply:
    rows, next_cursor = programs.list_programs(
        db(), caller=access.principal(token_info), limit=limit, cursor=cursor, kind=kind, active=active
    )
    return {"data": [program_body(program) for program in rows], "nextCursor": next_cursor}, 200


def get_program(token_info: dict, id_: str) -> Reply:
    program = programs.get_program(db(), caller=access.principal(token_info), program_id=id_)
    return {"data": program_body(program)}, 200


def update_program(token_info: dict, id_: str, body: dict) -> Reply:
    changes = {PROGRAM_FIELDS[name]: value for name, value in body.items()}
    program = programs.update_program(db(), caller=access.principal(token_info), program_id=id_, changes=changes)
    return {"data": program_body(program)}, 200


def create_grant(token_info: dict, body: dict) -> Reply:
    recipient = body["recipient"]
    session = db()
    request = giving.request_grant(
        session,
        caller=access.principal(token_info),
        program_id=body["programId"],
        hours=body["hours"],
        recipient_name=recipient["name"],
        recipient_registration_number=recipient.get("registrationNumber"),
    )
    return {"data": request_body(request, giving.claimed_check_ins(session, request_ids=[request.id])[request.id])}, 201


def list_requests(
    token_info: dict,
    limit: int = 50,
    cursor: str | None = None,
    status: str | None = None,
    program_id: str | None = None,
) -> Reply:
    session = db()
    rows, next_cursor = giving.list_requests(
        session, caller=access.principal(token_info), limit=limit, cursor=cursor, status=status, program_id=program_id
    )
    claimed = giving.claimed_check_ins(session, request_ids=[request.id for request in rows])
    return {"data": [request_body(request, claimed[request.id]) for request in rows], "nextCursor": next_cursor}, 200


def get_request(token_info: dict, id_: str) -> Reply:
    session = db()
    request = giving.get_request(session, caller=access.principal(token_info), request_id=id_)
    return {"data": request_body(request, giving.claimed_check_ins(session, request_ids=[request.id])[request.id])}, 200


def decide_request(token_info: dict, id_: str, body: dict) -> Reply:
    session = db()
    request = giving.decide(
        session,
        caller=access.principal(token_info),
        request_id=id_,
        decision=body["decision"],
        reason=body.get("reason"),
        note=body.get("note"),
    )
    return {"data": request_body(request, giving.claimed_check_ins(session, request_ids=[request.id])[request.id])}, 200


def pay_request(token_info: dict, id_: str, body: dict) -> Reply:
    session = db()
    request = giving.pay(session, caller=access.principal(token_info), request_id=id_, reference=body["reference"])
    return {"data": request_body(request, giving.claimed_check_ins(session, request_ids=[request.id])[request.id])}, 200


def get_summary(token_info: dict, period: str | None = None) -> Reply:
    currency, programs_summary = summary.summarize(
        db(), caller=access.principal(token_info), year=None if period is None else int(period)
    )
    return {
        "data": {"period": period, "currency": currency, "programs": [_summary_body(s) for s in programs_summary]}
    }, 200


def _summary_body(item: summary.ProgramSummary) -> dict:
    program, tally = item.program, item.tally
    figure = (lambda name: getattr(tally, name)) if tally is not None else (lambda name: 0)
    budget_left = None if program.budget is None else max(program.budget - figure("reserved"), 0)
    return {
        "programId": program.id,
        "name": program.name,
        "kind": program.kind,
        "currency": program.currency,
        "periodStart": item.period_start.isoformat(),
        "periodEnd": programs.period_end(item.period_start).isoformat(),
        "requested": figure("requested_amount"),
        "approved": figure("approved_amount") + figure("paid_amount"),
        "paid": figure("paid_amount"),
        "outstanding": figure("approved_amount"),
        "budget": {"total": program.budget, "used": figure("reserved"), "left": budget_left},
        "peopleAtCap": item.people_at_cap,
        "participation": {
            "people": item.participants,
            "eligiblePeople": item.eligible_people,
            "percent": round(100 * item.participants / item.eligible_people, 1) if item.eligible_people else 0.0,
        },
        "hoursGranted": round(figure("granted_hours"), 2),
        "requests": {status: figure(f"{status}_count") for status in STATUSES},
    }


STATUSES = (giving.REQUESTED, giving.APPROVED, giving.PAID, giving.DECLINED, giving.REVERSED, giving.INELIGIBLE)


def program_body(program: GivingProgram) -> dict:
    body: dict[str, object] = {
        "id": program.id,
        "organizationId": program.organization_id,
        "name": program.name,
        "description": program.description,
        "kind": program.kind,
        "active": program.active,
        "periodStartMonth": program.period_start_month,
        "perPersonCap": program.per_person_cap,
        "budget": program.budget,
        "approval": program.approval,
        "currency": program.currency,
        "eligibleRoles": program.eligible_roles,
        "eligibleDepartments": program.eligible_departments,
        "programVersion": program.version,
        "createdAt": program.created_at,
        "updatedAt": program.updated_at,
    }
    if program.kind == programs.DONATION_MATCH:
        body.update(
            ratioPercent=program.ratio_percent,
            minimumGift=program.minimum_gift,
            maximumMatchPerGift=program.maximum_match_per_gift,
        )
    else:
        body.update(ratePerHour=program.rate_per_hour, minimumHours=program.minimum_hours)
    return body


def request_body(request: GivingRequest, check_in_ids: list[str]) -> dict:
    return {
        "id": request.id,
        "organizationId": request.organization_id,
        "programId": request.program_id,
        "programVersion": request.program_version,
        "kind": request.kind,
        "userId": request.user_id,
        "donationId": request.donation_id,
        "checkInIds": check_in_ids,
        "periodStart": request.period_start.isoformat(),
        "status": request.status,
        "reason": request.reason,
        "giftAmount": request.gift_amount,
        "ratioPercent": request.ratio_percent,
        "hours": request.hours,
        "ratePerHour": request.rate_per_hour,
        "computedAmount": request.computed_amount,
        "amount": request.amount,
        "currency": request.currency,
        "capped": request.capped,
        "clawback": request.clawback,
        "recipient": {"name": request.recipient_name, "registrationNumber": request.recipient_registration_number},
        "decision": None
        if request.decided_at is None
        else {
            "decidedBy": request.decided_by,
            "decidedAt": request.decided_at,
            "reason": request.decision_reason,
            "note": request.decision_note,
        },
        "payout": None
        if request.paid_at is None
        else {
            "reference": request.payout_reference,
            "paidBy": request.paid_by,
            "paidAt": request.paid_at,
        },
        "reversedAt": request.reversed_at,
        "createdAt": request.created_at,
        "updatedAt": request.updated_at,
    }


def receive_payment_event() -> Reply:
    # Signatures cover the exact bytes sent, so read the raw body, never a re-serialised one.
    outcome = payment_webhooks.receive_payment_event(
        db(),
        payload=flask.request.get_data(),
        signature=flask.request.headers.get("Stripe-Signature"),
        secret=runtime().settings.payment_webhook_secret,
    )
    return {"received": True, "outcome": outcome}, 200
