"""The giving summary: what each program has committed and paid in one of its periods (docs/decisions.md §14)."""

from __future__ import annotations

import dataclasses
import datetime as dt

from sqlalchemy import ColumnElement, and_, case, func, or_, select
from sqlalchemy.orm import Session

from kindling.accounts.models import Organization, User
from kindling.donations import programs
from kindling.donations.models import GivingLedger, GivingPeriod, GivingProgram
from kindling.platform.access import Principal
from kindling.platform.base import utcnow


@dataclasses.dataclass(frozen=True)
class ProgramSummary:
    program: GivingProgram
    period_start: dt.date
    tally: GivingPeriod | None  # None when the period has no request
    people_at_cap: int
    participants: int  # people with a request that reserves money
    eligible_people: int


def summarize(db: Session, *, caller: Principal, year: int | None = None) -> tuple[str, list[ProgramSummary]]:
    """Each program of the organization over its period starting in `year` (default: the one it is in now); and the organization's reporting currency.

    Read from the tallies each period row keeps and the people's ledger rows, never from the
    requests themselves, so it costs the same at any number of requests.
    """
    organization_id = caller.member_of
    currency = db.execute(
        select(Organization.reporting_currency).where(Organization.id == organization_id)
    ).scalar_one()
    all_programs = db.scalars(
        select(GivingProgram)
        .where(GivingProgram.organization_id == organization_id)
        .order_by(GivingProgram.created_at, GivingProgram.id)
    ).all()
    if not all_programs:
        return currency, []
    now = utcnow()
    starts = {
        program.id: dt.date(year, program.period_start_month, 1)
        if year is not None
        else programs.period_start(program, now)
        for program in all_programs
    }
    periods = list(starts.items())
    tallies = {
        row.program_id: row for row in db.scalars(select(GivingPeriod).where(_in_periods(GivingPeriod, periods)))
    }
    caps = {program.id: program.per_person_cap for program in all_programs}
    cap = case(*((GivingLedger.program_id == program_id, limit) for program_id, limit in caps.items()))
    people = {
        program_id: (participants, at_cap)
        for program_id, participants, at_cap in db.execute(
            select(
                GivingLedger.program_id,
                # A request that reserves money reserves at least 1, so these are the people with one.
                func.count().filter(GivingLedger.reserved > 0),
                func.count().filter(GivingLedger.reserved >= cap),
            )
            .where(_in_periods(GivingLedger, periods))
            .group_by(GivingLedger.program_id)
        )
    }
    members = db.scalars(select(User).where(User.organization_id == organization_id, User.active.is_(True))).all()
    return currency, [
        ProgramSummary(
            program=program,
            period_start=starts[program.id],
            tally=tallies.get(program.id),
            participants=people.get(program.id, (0, 0))[0],
            people_at_cap=people.get(program.id, (0, 0))[1],
            eligible_people=sum(1 for person in members if programs.is_eligible(program, person)),
        )
        for program in all_programs
    ]


def _in_periods(model: type[GivingPeriod | GivingLedger], periods: list[tuple[str, dt.date]]) -> ColumnElement[bool]:
    return or_(*(and_(model.program_id == program_id, model.period_start == start) for program_id, start in periods))
