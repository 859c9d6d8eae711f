"""Volunteer opportunities and check-ins verified by location, venue code or an organiser (docs/decisions.md §7)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
from decimal import ROUND_HALF_UP, Decimal

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from kindling.consulting import milestones
from kindling.errors import Conflict, Forbidden, NotFound, invalid
from kindling.evidence import log as evidence
from kindling.platform import free_text, pagination
from kindling.platform.access import Principal
from kindling.platform.base import utcnow
from kindling.volunteering import check_in_codes
from kindling.volunteering.events import (
    CHECK_IN_APPROVED,
    CHECK_IN_CHECKED_OUT,
    CHECK_IN_RECORDED,
    CheckInApproved,
    CheckInCheckedOut,
    CheckInRecorded,
)
from kindling.volunteering.models import CheckIn, VolunteerOpportunity

# The IUGG mean Earth radius; haversine on a sphere is within about 0.5 % of the ellipsoid.
EARTH_RADIUS_METERS = 6_371_008.8
DEFAULT_RADIUS_METERS = 200
MAX_LENGTH = dt.timedelta(days=14)
CHECK_IN_OPENS_BEFORE = dt.timedelta(minutes=30)
# A poor GPS fix widens the fence, but never by more than this.
MAX_ACCURACY_ALLOWANCE_METERS = 100.0
EARLIEST = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
# Nobody volunteers more than this in one go: a longer stay is a forgotten check-out.
MAX_HOURS = 12


@dataclasses.dataclass(frozen=True)
class CheckInCounts:
    total: int
    verified: int


@dataclasses.dataclass(frozen=True)
class OpportunityView:
    """An opportunity as one caller sees it."""

    opportunity: VolunteerOpportunity
    own_check_in: CheckIn | None
    counts: CheckInCounts | None  # organisers only


def haversine_meters(latitude1: float, longitude1: float, latitude2: float, longitude2: float) -> float:
    """Great-circle distance between two WGS 84 points, in metres."""
    phi1, phi2 = math.radians(latitude1), math.radians(latitude2)
    d_phi = phi2 - phi1
    d_lambda = math.radians(longitude2 - longitude1)
    a = math.sin(d_phi / 2) ** 2 + math.cos(phi1) * math.cos(phi2) * math.sin(d_lambda / 2) ** 2
    return 2 * EARTH_RADIUS_METERS * math.asin(min(1.0, math.sqrt(a)))


def is_verified(distance_meters: float, radius_meters: float, accuracy_meters: float | None) -> bool:
    """Inside the fence, widened by the reported GPS accuracy up to 100 m."""
    allowance = min(accuracy_meters or 0.0, MAX_ACCURACY_ALLOWANCE_METERS)
    return distance_meters <= radius_meters + allowance


def create_opportunity(
    db: Session,
    *,
    organization_id: str,
    created_by: str,
    title: str,
    starts_at: dt.datetime,
    ends_at: dt.datetime,
    latitude: float,
    longitude: float,
    radius_meters: int = DEFAULT_RADIUS_METERS,
    description: str | None = None,
    require_code: bool = False,
) -> VolunteerOpportunity:
    """A new opportunity of the organization; it lasts more than nothing and at most 14 days."""
    if starts_at < EARLIEST:
        raise invalid("body", "startsAt", "must be in 1970 or later")
    if ends_at <= starts_at:
        raise invalid("body", "endsAt", "must be after startsAt")
    if ends_at - starts_at > MAX_LENGTH:
        raise invalid("body", "endsAt", "must be at most 14 days after startsAt")
    opportunity = VolunteerOpportunity(
        organization_id=organization_id,
        created_by=created_by,
        title=title.strip(),
        description=free_text.optional(description),
        starts_at=starts_at,
        ends_at=ends_at,
        latitude=latitude,
        longitude=longitude,
        radius_meters=radius_meters,
        require_code=require_code,
        code_secret=check_in_codes.new_secret(),
    )
    db.add(opportunity)
    db.flush()
    return opportunity


def list_opportunities(
    db: Session, *, organization_id: str, limit: int, cursor: str | None = None
) -> tuple[list[VolunteerOpportunity], str | None]:
    """The organization's opportunities, latest start first, one page at a time."""
    statement = select(VolunteerOpportunity).where(VolunteerOpportunity.organization_id == organization_id)
    return pagination.page(
        db,
        statement,
        timestamp=VolunteerOpportunity.starts_at,
        record_id=VolunteerOpportunity.id,
        limit=limit,
        cursor=cursor,
    )


def get_opportunity(db: Session, *, organization_id: str, opportunity_id: str) -> VolunteerOpportunity:
    """One opportunity of the organization; any other answers 404."""
    opportunity = db.get(VolunteerOpportunity, opportunity_id)
    if opportunity is None or opportunity.organization_id != organization_id:
        raise NotFound("No such volunteer opportunity")
    return opportunity


def view_opportunity(db: Session, *, caller: Principal, opportunity_id: str) -> OpportunityView:
    """An opportunity with the caller's own check-in, and the check-in counts for organisers."""
    opportunity = get_opportunity(db, organization_id=caller.member_of, opportunity_id=opportunity_id)
    own = db.scalar(select(CheckIn).where(CheckIn.opportunity_id == opportunity.id, CheckIn.user_id == caller.user_id))
    counts = None
    if caller.is_organiser:
        total, verified = db.execute(
            select(func.count(), func.count().filter(CheckIn.verified)).where(CheckIn.opportunity_id == opportunity.id)
        ).one()
        counts = CheckInCounts(total=total, verified=verified)
    return OpportunityView(opportunity=opportunity, own_check_in=own, counts=counts)


def show_check_in_code(
    db: Session, *, caller: Principal, opportunity_id: str, now: dt.datetime | None = None
) -> check_in_codes.ShownCode:
    """The code an organiser shows at the venue now."""
    opportunity = get_opportunity(db, organization_id=caller.member_of, opportunity_id=opportunity_id)
    return check_in_codes.show(opportunity.code_secret, now or utcnow())


def check_in(
    db: Session,
    *,
    caller: Principal,
    opportunity_id: str,
    latitude: float,
    longitude: float,
    accuracy_meters: float | None = None,
    code: str | None = None,
    now: dt.datetime | None = None,
) -> CheckIn:
    """Record the caller's one check-in at an opportunity; kept even when it is not verified.

    It is verified when made inside the geofence and, if the opportunity requires it, with the
    code shown at the venue; a wrong code is recorded as such, not refused.
    """
    opportunity = get_opportunity(db, organization_id=caller.member_of, opportunity_id=opportunity_id)
    now = now or utcnow()
    opens_at = opportunity.starts_at - CHECK_IN_OPENS_BEFORE
    if not opens_at <= now <= opportunity.ends_at:
        raise Conflict(
            "Check-in is open from 30 minutes before the start until the end of the opportunity",
            code="outside_check_in_window",
            details={"opensAt": opens_at.isoformat(), "closesAt": opportunity.ends_at.isoformat()},
        )
    distance = haversine_meters(opportunity.latitude, opportunity.longitude, latitude, longitude)
    location_verified = is_verified(distance, opportunity.radius_meters, accuracy_meters)
    code_verified = None if code is None else check_in_codes.accepts(opportunity.code_secret, code, now)
    record = CheckIn(
        opportunity_id=opportunity.id,
        organization_id=opportunity.organization_id,
        user_id=caller.user_id,
        checked_in_at=now,
        latitude=latitude,
        longitude=longitude,
        accuracy_meters=accuracy_meters,
        distance_meters=distance,
        location_verified=location_verified,
        code_verified=code_verified,
        verified=location_verified and (code_verified is True or not opportunity.require_code),
        hours=0.0,
    )
    try:
        with db.begin_nested():
            db.add(record)
    except IntegrityError:  # the unique (opportunity, user) pair: this member already checked in
        raise Conflict("You have already checked in to this opportunity", code="already_checked_in") from None
    data: CheckInRecorded = {
        "opportunityId": opportunity.id,
        "distanceMeters": round(distance, 1),
        "code": code_verified,
        "verified": record.verified,
        "checkedInAt": evidence.timestamp(now),
        "startsAt": evidence.timestamp(opportunity.starts_at),
        "endsAt": evidence.timestamp(opportunity.ends_at),
        "hours": 0,
    }
    evidence.append(
        db,
        organization_id=record.organization_id,
        type=CHECK_IN_RECORDED,
        subject=("check_in", record.id),
        actor_id=caller.user_id,
        data=data,
    )
    return record


def hours_between(start: dt.datetime, end: dt.datetime) -> float:
    """Hours from `start` to `end`, to 2 decimals rounded half up, at most 12 and never negative."""
    seconds = max(0, min((end - start).total_seconds(), MAX_HOURS * 3600))
    return float((Decimal(seconds) / 3600).quantize(Decimal("0.01"), ROUND_HALF_UP))


def most_hours(record: CheckIn, opportunity: VolunteerOpportunity) -> float:
    """The most a check-in can count: from check-in (or the start) to the end of the opportunity, at most 12."""
    return hours_between(max(record.checked_in_at, opportunity.starts_at), opportunity.ends_at)


def check_out(db: Session, *, caller: Principal, opportunity_id: str, now: dt.datetime | None = None) -> CheckIn:
    """The caller leaves: their check-in counts the hours from check-in to now, within the opportunity's window."""
    opportunity = get_opportunity(db, organization_id=caller.member_of, opportunity_id=opportunity_id)
    record = db.scalar(
        select(CheckIn)
        .where(CheckIn.opportunity_id == opportunity.id, CheckIn.user_id == caller.user_id)
        .with_for_update()
        .execution_options(populate_existing=True)
    )
    if record is None:
        # The opportunity exists (404 says it does not): the caller's own state is what is missing.
        raise Conflict("You have not checked in to this opportunity", code="not_checked_in")
    if record.checked_out_at is not None:
        raise Conflict("You have already checked out of this opportunity", code="already_checked_out")
    if record.approved_at is not None and record.hours:
        raise Conflict("An organiser has already set this check-in's hours", code="hours_already_set")
    now = now or utcnow()
    record.checked_out_at = now
    record.hours = hours_between(max(record.checked_in_at, opportunity.starts_at), min(now, opportunity.ends_at))
    db.flush()
    data: CheckInCheckedOut = {
        "opportunityId": opportunity.id,
        "checkedOutAt": evidence.timestamp(now),
        "hours": record.hours,
    }
    evidence.append(
        db,
        organization_id=record.organization_id,
        type=CHECK_IN_CHECKED_OUT,
        subject=("check_in", record.id),
        actor_id=caller.user_id,
        data=data,
    )
    if record.verified:
        _record_hour_milestones(db, organization_id=record.organization_id)
    return record


def approve_check_in(
    db: Session,
    *,
    caller: Principal,
    opportunity_id: str,
    check_in_id: str,
    note: str,
    hours: float | None = None,
) -> CheckIn:
    """An organiser's approval, with the note that says why, which makes an unverified check-in
    verified evidence, and may set the hours of one without a check-out."""
    note = note.strip()
    if not note:
        raise invalid("body", "note", "must say why the check-in is approved")
    opportunity = get_opportunity(db, organization_id=caller.member_of, opportunity_id=opportunity_id)
    record = db.get(CheckIn, check_in_id, with_for_update=True, populate_existing=True)
    if record is None or record.opportunity_id != opportunity.id:
        raise NotFound("No such check-in at this opportunity")
    if record.user_id == caller.user_id:
        raise Forbidden("Nobody approves their own check-in", code="own_check_in")
    if record.verified:
        raise Conflict("This check-in is already verified", code="already_verified")
    if hours is not None:
        if record.checked_out_at is not None:
            raise Conflict(
                "The volunteer checked out: the check-in's hours are the time they were there",
                code="already_checked_out",
            )
        most = most_hours(record, opportunity)
        if hours > most:
            raise invalid(
                "body",
                "hours",
                f"must be at most {most:g}: the time from check-in to the end of the opportunity, and at most {MAX_HOURS}",
            )
        record.hours = float(Decimal(repr(hours)).quantize(Decimal("0.01"), ROUND_HALF_UP))
    record.verified = True
    record.approved_by = caller.user_id
    record.approved_at = utcnow()
    record.approval_note = note
    db.flush()
    data: CheckInApproved = {"opportunityId": opportunity.id, "verified": True, "hours": record.hours}
    evidence.append(
        db,
        organization_id=record.organization_id,
        type=CHECK_IN_APPROVED,
        subject=("check_in", record.id),
        actor_id=caller.user_id,
        data=data,
    )
    _record_hour_milestones(db, organization_id=record.organization_id)
    return record


def list_check_ins(
    db: Session, *, caller: Principal, opportunity_id: str, limit: int, cursor: str | None = None
) -> tuple[list[CheckIn], str | None]:
    """An opportunity's check-ins, newest first, one page at a time."""
    opportunity = get_opportunity(db, organization_id=caller.member_of, opportunity_id=opportunity_id)
    statement = select(CheckIn).where(CheckIn.opportunity_id == opportunity.id)
    return pagination.page(
        db, statement, timestamp=CheckIn.checked_in_at, record_id=CheckIn.id, limit=limit, cursor=cursor
    )


def _record_hour_milestones(db: Session, *, organization_id: str) -> None:
    # Only verified check-ins are evidence, so only they count towards hour milestones.
    hours = db.scalar(
        select(func.sum(CheckIn.hours)).where(CheckIn.organization_id == organization_id, CheckIn.verified.is_(True))
    )
    milestones.record_milestones(db, organization_id=organization_id, volunteer_hours_total=hours)
