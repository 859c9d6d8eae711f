"""Giving requests: matches of succeeded donations, grants for verified hours, and how they move (docs/decisions.md §14).

Every change moves its amounts under the ledger's row locks first (kindling/donations/ledger.py)
and appends its evidence after, so the order of locks is always: the donation or request, the
ledger rows, then the evidence log's head.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import typing
from decimal import ROUND_FLOOR, Decimal

from sqlalchemy import Select, delete, select
from sqlalchemy.orm import Session

from kindling import outbox
from kindling.accounts.models import User
from kindling.consulting import clients
from kindling.donations import ledger, programs
from kindling.donations.events import (
    GIVING_DECIDED,
    GIVING_PAID,
    GIVING_REQUESTED,
    GIVING_REVERSED,
    Conversion,
    GivingDecided,
    GivingPaid,
    GivingRequested,
    GivingReversed,
)
from kindling.donations.models import Donation, GivingClaim, GivingProgram, GivingRequest
from kindling.errors import Conflict, Forbidden, NotFound, invalid
from kindling.evidence import log as evidence
from kindling.evidence.chain import timestamp
from kindling.platform import free_text, money, pagination
from kindling.platform.access import Principal, canonical_id
from kindling.platform.base import utcnow
from kindling.rates import service as rates
from kindling.volunteering.models import CheckIn

_T = typing.TypeVar("_T")

REQUESTED, APPROVED, PAID, DECLINED, REVERSED, INELIGIBLE = (
    "requested",
    "approved",
    "paid",
    "declined",
    "reversed",
    "ineligible",
)
BELOW_MINIMUM, NOT_ELIGIBLE = "below_minimum", "not_eligible"
# A gift in a currency the ECB does not quote is matched only by a program in that currency.
NOT_CONVERTIBLE = "currency_not_convertible"
# Requests whose amount is reserved against the cap and the budget.
RESERVING = (REQUESTED, APPROVED, PAID)
# A grant's hours are compared to verified hours to this precision (check-in hours are floats).
HOURS_EPSILON = 1e-6


@dataclasses.dataclass(frozen=True)
class Change:
    """An evidence event (and outbound events) still to record for a request."""

    request: GivingRequest
    type: str
    data: typing.Mapping[str, object]
    actor_id: str | None
    outbound: tuple[str, ...] = ()


def on_donation_status(db: Session, *, donation: Donation) -> list[Change]:
    """Match a donation that has just succeeded, or reverse the matches of one refunded; the
    changes to record once the donation's own evidence is appended."""
    if donation.status == "succeeded":
        return _match(db, donation)
    if donation.status == "refunded":
        return _reverse(db, donation)
    return []


def _match(db: Session, donation: Donation) -> list[Change]:
    eligible_programs = db.scalars(
        select(GivingProgram)
        .where(
            GivingProgram.organization_id == donation.organization_id,
            GivingProgram.kind == programs.DONATION_MATCH,
            GivingProgram.active.is_(True),
        )
        .order_by(GivingProgram.id)  # the ledger's lock order
    ).all()
    if not eligible_programs:
        return []
    person = donation.user
    changes = []
    # A donation becomes succeeded once (kindling/donations/service.py), under its row lock; the
    # unique (donation, program) pair holds the rule should that ever change.
    for program in eligible_programs:
        period = programs.period_start(program, donation.created_at)
        gift, conversion = _converted_gift(db, donation, program.currency)
        computed = 0 if gift is None else gift * _rule(program.ratio_percent) // 100
        wanted = min(computed, program.maximum_match_per_gift or computed)
        amount, reason = 0, None
        if gift is None:
            reason = NOT_CONVERTIBLE
        elif not programs.is_eligible(program, person):
            reason = NOT_ELIGIBLE
        elif gift < _rule(program.minimum_gift) or computed == 0:
            reason = BELOW_MINIMUM
        else:
            amount, reason = ledger.reserve(db, program=program, period=period, user_id=person.id, wanted=wanted)
        request = _new_request(
            program,
            user_id=person.id,
            period=period,
            computed=computed,
            amount=amount,
            reason=reason,
            donation_id=donation.id,
            gift_amount=gift,
            ratio_percent=program.ratio_percent,
            recipient_name=donation.recipient_name,
            recipient_registration_number=donation.recipient_registration_number,
        )
        changes.extend(_open(db, request, program, reason, actor_id=None, conversion=conversion))
    return changes


def _converted_gift(db: Session, donation: Donation, currency: str) -> tuple[int | None, Conversion | None]:
    """The gift in `currency`'s minor units, floored, at the ECB quotes of the gift's day (the last
    publication on or before it), and the conversion to record; None when there is no quote."""
    if donation.currency == currency:
        return donation.amount, None
    quotes = rates.pair(db, source=donation.currency, target=currency, on=donation.created_at.astimezone(dt.UTC).date())
    if quotes is None:
        return None, None
    source, target = quotes
    exact = money.converted(
        donation.amount, source=donation.currency, target=currency, source_rate=source.rate, target_rate=target.rate
    )
    conversion: Conversion = {
        "from": donation.currency,
        "to": currency,
        "fromRate": source.rate,
        "toRate": target.rate,
        "rateDate": source.rate_date.isoformat(),
        "ratesDigest": rates.digest(db),
    }
    return money.floor(exact), conversion


def _new_request(
    program: GivingProgram,
    *,
    user_id: str,
    period: dt.date,
    computed: int,
    amount: int,
    reason: str | None,
    **source: object,
) -> GivingRequest:
    """A request under the program's current version, in its currency, for `computed` of which the
    ledger reserved `amount` (capped when that is less, unless `reason` makes it ineligible), with
    what its `source` (the gift matched or the hours granted) and recipient say."""
    return GivingRequest(
        organization_id=program.organization_id,
        program_id=program.id,
        program_version=program.version,
        kind=program.kind,
        user_id=user_id,
        period_start=period,
        computed_amount=computed,
        amount=amount,
        currency=program.currency,
        capped=reason is None and amount < computed,
        **source,
    )


def _open(
    db: Session,
    request: GivingRequest,
    program: GivingProgram,
    reason: str | None,
    *,
    actor_id: str | None,
    claims: list[str] | None = None,
    conversion: Conversion | None = None,
) -> list[Change]:
    """Store a new request: ineligible with its reason (claiming nothing), approved at once when the
    program says so, else requested; a grant claims the check-ins `claims`."""
    now = utcnow()
    request.status = INELIGIBLE if reason else (APPROVED if program.approval == "auto" else REQUESTED)
    request.reason = reason
    request.created_at = request.updated_at = now
    if request.status == APPROVED:
        request.decided_at = now
    db.add(request)
    db.flush()
    claimed = [] if reason else list(claims or ())
    db.add_all(GivingClaim(check_in_id=check_in_id, request_id=request.id) for check_in_id in claimed)
    db.flush()
    ledger.tally(db, request=request, previous=None)
    data: GivingRequested = {
        "programId": program.id,
        "programVersion": request.program_version,
        "kind": request.kind,
        "status": request.status,
        "reason": reason,
        "computedAmount": request.computed_amount,
        "amount": request.amount,
        "capped": request.capped,
        "currency": request.currency,
        "createdAt": timestamp(now),
    }
    if request.donation_id:
        data["donationId"] = request.donation_id
        data["ratioPercent"] = request.ratio_percent
        data["giftAmount"] = request.gift_amount
        if conversion:
            data["conversion"] = conversion
    else:
        data["checkInIds"] = claimed
        data["ratePerHour"] = request.rate_per_hour
        data["hours"] = request.hours
    outbound = (
        ("giving.request.created", "giving.request.approved")
        if request.status == APPROVED
        else ("giving.request.created",)
    )
    return [Change(request, GIVING_REQUESTED, data, actor_id, outbound)]


def _reverse(db: Session, donation: Donation) -> list[Change]:
    matched = db.scalars(
        select(GivingRequest)
        .where(GivingRequest.donation_id == donation.id, GivingRequest.status.in_(RESERVING))
        .order_by(GivingRequest.program_id)
        .with_for_update()
    ).all()
    changes = []
    now = utcnow()
    for request in matched:
        previous = request.status
        # Paid money has left: it is to be recovered from the charity, and until then it counts.
        request.clawback = previous == PAID
        request.status = REVERSED
        request.reversed_at = request.updated_at = now
        ledger.tally(db, request=request, previous=previous)
        data: GivingReversed = {
            "previousStatus": previous,
            "amount": request.amount,
            "currency": request.currency,
            "clawback": request.clawback,
            "donationId": donation.id,
        }
        changes.append(Change(request, GIVING_REVERSED, data, None))
    db.flush()
    return changes


def record(
    db: Session, organization_id: str, changes: list[Change], *, preceding: typing.Sequence[evidence.Entry] = ()
) -> None:
    """Append the changes' evidence events in one run after `preceding` (the events of what caused
    them), and put their outbound events in the outbox."""
    entries = [evidence.Entry(c.type, ("giving_request", c.request.id), c.actor_id, c.data) for c in changes]
    evidence.append_all(db, organization_id=organization_id, entries=[*preceding, *entries])
    if not any(change.outbound for change in changes):
        return
    consultant_ids = clients.active_consultant_ids(db, organization_id=organization_id)
    for change in changes:
        for type_ in change.outbound:
            for consultant_id in consultant_ids:
                outbox.emit(db, consultant_id=consultant_id, type=type_, data=_outbound(change.request))


def _outbound(request: GivingRequest) -> dict:
    return {
        "organizationId": request.organization_id,
        "requestId": request.id,
        "programId": request.program_id,
        "kind": request.kind,
        "status": request.status,
        "amount": request.amount,
        "currency": request.currency,
    }


def request_grant(
    db: Session,
    *,
    caller: Principal,
    program_id: str,
    hours: float,
    recipient_name: str,
    recipient_registration_number: str | None = None,
) -> GivingRequest:
    """A volunteer's grant request for `hours` of their verified, unclaimed check-ins of the program's current period."""
    program = programs.get_program(db, caller=caller, program_id=program_id)
    if program.kind != programs.VOLUNTEER_GRANT:
        raise invalid("body", "programId", "is not a volunteer_grant program", code="wrong_program_kind")
    if not program.active:
        raise Conflict("The program is not active", code="program_inactive")
    person = db.get_one(User, caller.user_id)
    if not programs.is_eligible(program, person):
        raise Forbidden("You are not eligible for this program", code=NOT_ELIGIBLE)
    now = utcnow()
    period = programs.period_start(program, now)
    start, end = (dt.datetime.combine(day, dt.time(), tzinfo=dt.UTC) for day in (period, programs.period_end(period)))
    # Locking the person's check-ins orders two grant requests of theirs, in any program.
    check_ins = db.execute(
        select(CheckIn.id, CheckIn.hours)
        .where(
            CheckIn.user_id == person.id,
            CheckIn.organization_id == program.organization_id,
            CheckIn.verified.is_(True),
            CheckIn.checked_in_at >= start,
            CheckIn.checked_in_at < end,
        )
        .order_by(CheckIn.checked_in_at, CheckIn.id)
        .with_for_update()
    ).all()
    claimed = set(
        db.scalars(select(GivingClaim.check_in_id).where(GivingClaim.check_in_id.in_([c.id for c in check_ins])))
    )
    verified = sum(c.hours for c in check_ins)
    if verified + HOURS_EPSILON < (program.minimum_hours or 0):
        raise invalid(
            "body",
            "hours",
            f"needs at least {program.minimum_hours:g} verified hours in this period; you have {verified:g}",
            code="below_minimum_hours",
        )
    unclaimed = [c for c in check_ins if c.id not in claimed]
    available = sum(c.hours for c in unclaimed)
    if hours > available + HOURS_EPSILON:
        raise invalid(
            "body",
            "hours",
            f"must not exceed your {available:g} verified, unclaimed hours in this period",
            code="hours_unavailable",
        )
    # Whole check-ins, oldest first, until they cover the hours asked for.
    claims, covered = [], 0.0
    for check_in in unclaimed:
        if covered + HOURS_EPSILON >= hours:
            break
        claims.append(check_in.id)
        covered += check_in.hours
    computed = int((Decimal(repr(hours)) * _rule(program.rate_per_hour)).to_integral_value(ROUND_FLOOR))
    amount, reason = ledger.reserve(db, program=program, period=period, user_id=person.id, wanted=computed)
    request = _new_request(
        program,
        user_id=caller.user_id,
        period=period,
        computed=computed,
        amount=amount,
        reason=reason,
        hours=hours,
        rate_per_hour=program.rate_per_hour,
        recipient_name=recipient_name.strip(),
        recipient_registration_number=free_text.optional(recipient_registration_number),
    )
    record(db, request.organization_id, _open(db, request, program, reason, actor_id=caller.user_id, claims=claims))
    return request


def decide(
    db: Session,
    *,
    caller: Principal,
    request_id: str,
    decision: str,
    reason: str | None = None,
    note: str | None = None,
) -> GivingRequest:
    """An admin's or manager's approval or decline of a request awaiting review; never their own."""
    request = _locked(db, caller, request_id)
    if request.user_id == caller.user_id:
        raise Forbidden("Nobody decides their own giving request", code="conflict_of_interest")
    if request.status != REQUESTED:
        raise Conflict(f"The request is {request.status}; only a requested one is decided", code="invalid_transition")
    if decision == "decline" and not reason:
        raise invalid("body", "reason", "is required to decline")
    now = utcnow()
    if decision == "decline":
        db.execute(
            delete(GivingClaim).where(GivingClaim.request_id == request.id).execution_options(synchronize_session=False)
        )
        request.status = DECLINED
    else:
        request.status = APPROVED
    ledger.tally(db, request=request, previous=REQUESTED)
    request.decided_by, request.decided_at, request.updated_at = caller.user_id, now, now
    request.decision_reason = reason
    request.decision_note = free_text.optional(note)
    db.flush()
    data: GivingDecided = {
        "decision": decision,
        "status": request.status,
        "amount": request.amount,
        "currency": request.currency,
    }
    outbound = ("giving.request.approved",) if request.status == APPROVED else ()
    record(db, request.organization_id, [Change(request, GIVING_DECIDED, data, caller.user_id, outbound)])
    return request


def pay(db: Session, *, caller: Principal, request_id: str, reference: str) -> GivingRequest:
    """An admin records the payout of an approved request, with its payment reference."""
    request = _locked(db, caller, request_id)
    if request.user_id == caller.user_id:
        raise Forbidden("Nobody records the payout of their own giving request", code="conflict_of_interest")
    if request.status != APPROVED:
        raise Conflict(f"The request is {request.status}; only an approved one is paid", code="invalid_transition")
    now = utcnow()
    request.status = PAID
    ledger.tally(db, request=request, previous=APPROVED)
    request.payout_reference = reference.strip()
    request.paid_by, request.paid_at, request.updated_at = caller.user_id, now, now
    db.flush()
    data: GivingPaid = {"amount": request.amount, "currency": request.currency}
    record(
        db,
        request.organization_id,
        [Change(request, GIVING_PAID, data, caller.user_id, ("giving.request.paid",))],
    )
    return request


def _locked(db: Session, caller: Principal, request_id: str) -> GivingRequest:
    request = db.scalar(
        select(GivingRequest)
        .where(GivingRequest.id == request_id, GivingRequest.organization_id == caller.organization_id)
        .with_for_update()
    )
    if request is None:
        raise NotFound("No such giving request")
    return request


def _visible(caller: Principal) -> Select[GivingRequest]:
    """Admins and managers see the organization's requests, members their own."""
    statement = select(GivingRequest).where(GivingRequest.organization_id == caller.organization_id)
    if not caller.is_organiser:
        statement = statement.where(GivingRequest.user_id == caller.user_id)
    return statement


def list_requests(
    db: Session,
    *,
    caller: Principal,
    limit: int,
    cursor: str | None = None,
    status: str | None = None,
    program_id: str | None = None,
) -> tuple[list[GivingRequest], str | None]:
    """The requests the caller may see, newest first, one page at a time."""
    statement = _visible(caller)
    if status is not None:
        statement = statement.where(GivingRequest.status == status)
    if program_id is not None:
        statement = statement.where(GivingRequest.program_id == canonical_id(program_id))
    return pagination.page(
        db, statement, timestamp=GivingRequest.created_at, record_id=GivingRequest.id, limit=limit, cursor=cursor
    )


def get_request(db: Session, *, caller: Principal, request_id: str) -> GivingRequest:
    """One request the caller may see; any other answers 404."""
    request = db.scalar(_visible(caller).where(GivingRequest.id == request_id))
    if request is None:
        raise NotFound("No such giving request")
    return request


def claimed_check_ins(db: Session, *, request_ids: list[str]) -> dict[str, list[str]]:
    """The check-ins each request claimed, by request id."""
    claimed: dict[str, list[str]] = {request_id: [] for request_id in request_ids}
    rows = db.execute(
        select(GivingClaim.request_id, GivingClaim.check_in_id)
        .join(CheckIn, CheckIn.id == GivingClaim.check_in_id)
        .where(GivingClaim.request_id.in_(request_ids))
        .order_by(CheckIn.checked_in_at, CheckIn.id)
    )
    for request_id, check_in_id in rows:
        claimed[request_id].append(check_in_id)
    return claimed


def _rule(value: _T | None) -> _T:
    """A rule of its program's kind, which create_program always sets (programs.DEFAULTS)."""
    if value is None:
        raise RuntimeError("a giving program lacks a rule of its kind")
    return value
