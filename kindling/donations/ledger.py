"""Caps and budgets, reserved under row locks so that concurrent requests never overspend (docs/decisions.md §14).

A person's (program, period) row holds what their requests reserve, and the program's period
row what the budget's do, with the period's tallies. `reserve` takes the person's row, then the
period's when the program has a budget; `tally` then moves a request's amounts and counts into
them, in the same order. Rows are taken in program order when a donation meets several programs,
and always before the evidence log's head, so two transactions never wait on each other in a
circle. Rows are locked by upserts (`INSERT … ON CONFLICT DO UPDATE`), which on PostgreSQL lock
the row as `SELECT … FOR UPDATE` would, even when their condition leaves it unchanged, and make
it when missing. SQLite serialises writers anyway (BEGIN IMMEDIATE).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import typing

from sqlalchemy import Executable, Table, bindparam
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
    """Reserve up to `wanted` of what is left of the person's cap and of the budget, for a new
    request, in the person's row: the amount reserved, and why nothing could be (or None). The
    rows stay locked until the transaction ends; `tally` then counts the request in the period's."""
    statements = _statements(db.get_bind().dialect.name)
    person = {"program_id": program.id, "period_start": period, "user_id": user_id}
    # Most requests fit in what is left: one statement reserves them whole.
    amount = min(wanted, program.per_person_cap)
    claim = person | {"reserved": amount, "cap": program.per_person_cap}
    if amount <= 0 or db.execute(statements.claim, claim).first() is None:
        # It did not fit (or there is nothing to fit): reserve what is left, under the row's lock.
        left = program.per_person_cap - db.execute(statements.lock_person, person).scalar_one()
        if left <= 0:
            return 0, PERSON_CAP_REACHED
        amount = min(wanted, left)
        if amount > 0:
            _add_to_person(db, person, amount)
    if program.budget is None:
        return amount, None
    left_of_budget = (
        program.budget
        - db.execute(statements.lock_period, {"program_id": program.id, "period_start": period}).scalar_one()
    )
    if left_of_budget < amount:
        _add_to_person(db, person, max(left_of_budget, 0) - amount)
    if left_of_budget <= 0:
        return 0, BUDGET_EXHAUSTED
    return min(amount, left_of_budget), None


def _holds(request: GivingRequest) -> bool:
    """Whether the request's amount counts against the cap and the budget: while it is open or
    paid, and once reversed after payment, until the money is recovered (a clawback)."""
    return request.status in AMOUNTS or (request.status == "reversed" and request.clawback)


def tally(db: Session, *, request: GivingRequest, previous: str | None) -> None:
    """Move a request from `previous` (None when it is new; never a reversed one) to its status:
    in what the person's row reserves (a new request's `reserve` did), in what the period's
    reserves, and in the period's tallies, which the summary reads."""
    reserved = request.amount * (_holds(request) - (previous in AMOUNTS))
    if reserved and previous is not None:
        person = {"program_id": request.program_id, "period_start": request.period_start, "user_id": request.user_id}
        _add_to_person(db, person, reserved)
    deltas: dict[str, float] = dict.fromkeys(TALLIES, 0.0)
    deltas["reserved"] = reserved
    for status, sign in ((previous, -1), (request.status, 1)):
        if status is not None:
            deltas[f"{status}_count"] += sign
            if status in AMOUNTS:
                deltas[f"{status}_amount"] += sign * request.amount
    if request.hours and (previous in GRANTED) != (request.status in GRANTED):
        deltas["granted_hours"] = request.hours if request.status in GRANTED else -request.hours
    key = {"program_id": request.program_id, "period_start": request.period_start}
    db.execute(_statements(db.get_bind().dialect.name).tally_period, key | deltas)


def _add_to_person(db: Session, person: dict, amount: int) -> None:
    db.execute(_statements(db.get_bind().dialect.name).add_to_person, person | {"reserved": amount})


# What a period row adds up, besides `reserved`.
TALLIES = (
    *(f"{status}_count" for status in ("requested", "approved", "paid", "declined", "reversed", "ineligible")),
    *(f"{status}_amount" for status in AMOUNTS),
    "granted_hours",
)


@dataclasses.dataclass(frozen=True)
class _Statements:
    claim: Executable
    lock_person: Executable
    lock_period: Executable
    add_to_person: Executable
    tally_period: Executable


@functools.cache
def _statements(dialect: str) -> _Statements:
    """The ledger's statements for a dialect, built once: they run in every giving change, where
    building them each time cost more than running them. They name the tables, not the ORM
    classes, whose statements take longer to run."""
    insert = (postgresql if dialect == "postgresql" else sqlite).insert
    ledgers, periods = (typing.cast(Table, model.__table__) for model in (GivingLedger, GivingPeriod))
    claim = insert(ledgers)
    period = insert(periods)

    def lock(table: Table, upsert: postgresql.Insert | sqlite.Insert, key: list[str]) -> Executable:
        # An upsert that changes nothing: it takes the row's lock, making the row if missing, and
        # returns what the last transaction to hold it committed.
        return upsert.on_conflict_do_update(index_elements=key, set_={"reserved": table.c.reserved}).returning(
            table.c.reserved
        )

    return _Statements(
        # Adds `reserved` to the person's row (making it) when the sum stays within `cap`; no row
        # returned means it would not, and the row is left as it was, locked.
        claim=claim.on_conflict_do_update(
            index_elements=["program_id", "period_start", "user_id"],
            set_={"reserved": ledgers.c.reserved + claim.excluded.reserved},
            where=ledgers.c.reserved + claim.excluded.reserved <= bindparam("cap"),
        ).returning(ledgers.c.reserved),
        lock_person=lock(ledgers, claim, ["program_id", "period_start", "user_id"]),
        lock_period=lock(periods, period, ["program_id", "period_start"]),
        add_to_person=claim.on_conflict_do_update(
            index_elements=["program_id", "period_start", "user_id"],
            set_={"reserved": ledgers.c.reserved + claim.excluded.reserved},
        ),
        # A new period row starts from the deltas, an existing one adds them.
        tally_period=period.on_conflict_do_update(
            index_elements=["program_id", "period_start"],
            set_={name: periods.c[name] + period.excluded[name] for name in ("reserved", *TALLIES)},
        ),
    )
