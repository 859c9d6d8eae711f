"""Caps and budgets, reserved under row locks so that concurrent requests never overspend (docs/decisions.md §14).

A reservation locks the person's (program, period) row, then the program's period row, in
that order and in program order when a donation meets several programs, and holds both
until the transaction ends; every giving change takes them before the evidence log's head,
so two transactions never wait on each other in a circle. A row is read and locked in one
statement, an upsert (`INSERT … ON CONFLICT DO UPDATE … RETURNING`), which on PostgreSQL locks
the row as `SELECT … FOR UPDATE` would and makes it when missing. SQLite serialises writers
anyway (BEGIN IMMEDIATE).
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from kindling.donations.models import GivingLedger, GivingPeriod, GivingProgram, GivingRequest

PERSON_CAP_REACHED, BUDGET_EXHAUSTED = "person_cap_reached", "budget_exhausted"
# The statuses whose amounts the period tallies, and those whose grant hours count as granted.
AMOUNTS = ("requested", "approved", "paid")
GRANTED = ("approved", "paid")


def reserve(
    db: Session, *, program: GivingProgram, period: dt.date, user_id: str, wanted: int
) -> tuple[int, str | None]:
    """Reserve up to `wanted` of what is left of the person's cap and of the budget: the amount
    reserved, and why nothing could be (or None)."""
    person = {"program_id": program.id, "period_start": period, "user_id": user_id}
    budget = {"program_id": program.id, "period_start": period}
    used_by_person = _locked(db, GivingLedger, person)
    used_of_budget = _locked(db, GivingPeriod, budget)
    left_for_person = program.per_person_cap - used_by_person
    if left_for_person <= 0:
        return 0, PERSON_CAP_REACHED
    left_of_budget = None if program.budget is None else program.budget - used_of_budget
    if left_of_budget is not None and left_of_budget <= 0:
        return 0, BUDGET_EXHAUSTED
    amount = min(wanted, left_for_person, *(() if left_of_budget is None else (left_of_budget,)))
    _add(db, GivingLedger, person, amount)
    _add(db, GivingPeriod, budget, amount)
    return amount, None


def release(db: Session, *, program_id: str, period: dt.date, user_id: str, amount: int) -> None:
    """Give back a reservation (a declined or reversed request), under the same locks."""
    person = {"program_id": program_id, "period_start": period, "user_id": user_id}
    budget = {"program_id": program_id, "period_start": period}
    _locked(db, GivingLedger, person)
    _locked(db, GivingPeriod, budget)
    _add(db, GivingLedger, person, -amount)
    _add(db, GivingPeriod, budget, -amount)


def tally(db: Session, *, request: GivingRequest, previous: str | None) -> None:
    """Move a request from `previous` (None when it is new) to its status in its period's tallies,
    which the summary reads (under the period row's lock, taken after the person's)."""
    deltas: dict[str, float] = {}
    for status, sign in ((previous, -1), (request.status, 1)):
        if status is not None:
            deltas[f"{status}_count"] = deltas.get(f"{status}_count", 0) + sign
            if status in AMOUNTS:
                deltas[f"{status}_amount"] = deltas.get(f"{status}_amount", 0) + sign * request.amount
    if request.hours and (previous in GRANTED) != (request.status in GRANTED):
        deltas["granted_hours"] = request.hours if request.status in GRANTED else -request.hours
    # One statement: a new period row starts from these deltas, an existing one adds them.
    key = {"program_id": request.program_id, "period_start": request.period_start}
    statement = _insert(db, GivingPeriod).values(**key, **deltas)
    db.execute(
        statement.on_conflict_do_update(
            index_elements=list(key), set_={name: getattr(GivingPeriod, name) + delta for name, delta in deltas.items()}
        )
    )


def _locked(db: Session, model, key: dict) -> int:
    """The row's reserved amount, made if missing, locked until the transaction ends: the upsert
    takes the row's lock and returns what the last transaction to hold it committed."""
    statement = _insert(db, model).values(**key)
    statement = statement.on_conflict_do_update(index_elements=list(key), set_={"reserved": model.reserved})
    return db.execute(statement.returning(model.reserved)).scalar_one()


def _insert(db: Session, model):
    return (postgresql if db.get_bind().dialect.name == "postgresql" else sqlite).insert(model)


def _add(db: Session, model, key: dict, amount: int) -> None:
    db.execute(update(model).filter_by(**key).values(reserved=model.reserved + amount))
