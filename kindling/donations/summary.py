"""The giving summary: what each program has committed and paid in one of its periods (docs/decisions.md §14)."""

from __future__ import annotations

import dataclasses
import datetime as dt

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from kindling.accounts.models import Organization, User
from kindling.donations import giving, programs
from kindling.donations.models import GivingLedger, GivingPeriod, GivingProgram, GivingRequest
from kindling.platform.access import Principal
from kindling.platform.base import utcnow


@dataclasses.dataclass(frozen=True)
class ProgramSummary:
    program: GivingProgram
    period_start: dt.date
    counts: dict[str, int]  # requests by status
    amounts: dict[str, int]  # reserved amounts by status
    hours_granted: float  # of approved and paid grants
    budget_used: int
    people_at_cap: int
    participants: int  # people with a request that reserves money
    eligible_people: int


def summarize(db: Session, *, caller: Principal, year: int | None = None) -> tuple[str, list[ProgramSummary]]:
    """Each program of the organization over its period starting in `year` (default: the one it is in now); and the currency."""
    organization_id = caller.organization_id
    currency = db.scalar(select(Organization.currency).where(Organization.id == organization_id))
    all_programs = db.scalars(
        select(GivingProgram).where(GivingProgram.organization_id == organization_id).order_by(GivingProgram.created_at, GivingProgram.id)
    ).all()
    now = utcnow()
    starts = {
        program.id: dt.date(year, program.period_start_month, 1) if year is not None else programs.period_start(program, now)
        for program in all_programs
    }
    summaries = []
    people = db.execute(select(User).where(User.organization_id == organization_id, User.active.is_(True))).scalars().all()
    for program in all_programs:
        start = starts[program.id]
        in_period = (GivingRequest.program_id == program.id, GivingRequest.period_start == start)
        counts, amounts, hours = {}, {}, 0.0
        for status, count, amount, granted_hours in db.execute(
            select(GivingRequest.status, func.count(), func.coalesce(func.sum(GivingRequest.amount), 0), func.coalesce(func.sum(GivingRequest.hours), 0))
            .where(*in_period)
            .group_by(GivingRequest.status)
        ):
            counts[status], amounts[status] = count, int(amount)
            if status in (giving.APPROVED, giving.PAID):
                hours += float(granted_hours)
        participants = db.scalar(
            select(func.count(func.distinct(GivingRequest.user_id))).where(*in_period, GivingRequest.status.in_(giving.RESERVING))
        )
        budget_used = db.scalar(
            select(GivingPeriod.reserved).where(GivingPeriod.program_id == program.id, GivingPeriod.period_start == start)
        ) or 0
        at_cap = db.scalar(
            select(func.count()).where(
                GivingLedger.program_id == program.id,
                GivingLedger.period_start == start,
                GivingLedger.reserved >= program.per_person_cap,
            )
        )
        summaries.append(
            ProgramSummary(
                program=program,
                period_start=start,
                counts=counts,
                amounts=amounts,
                hours_granted=hours,
                budget_used=int(budget_used),
                people_at_cap=at_cap,
                participants=participants,
                eligible_people=sum(1 for person in people if programs.is_eligible(program, person)),
            )
        )
    return currency, summaries
