"""Giving programs: matching gifts and volunteer grants, set by an organization's admins (docs/decisions.md §14)."""

from __future__ import annotations

import datetime as dt
import typing

from sqlalchemy import select
from sqlalchemy.orm import Session

from kindling.accounts.models import Organization, User
from kindling.donations.events import GIVING_PROGRAM_SET, GivingProgramSet
from kindling.donations.models import GivingProgram
from kindling.errors import NotFound, field_error, refused
from kindling.evidence import log as evidence
from kindling.platform import free_text, money, pagination
from kindling.platform.access import Principal
from kindling.platform.base import utcnow

DONATION_MATCH, VOLUNTEER_GRANT = "donation_match", "volunteer_grant"
# The rule fields of each kind (attribute -> API name); the other kind's fields are refused.
KIND_FIELDS = {
    DONATION_MATCH: {
        "ratio_percent": "ratioPercent",
        "minimum_gift": "minimumGift",
        "maximum_match_per_gift": "maximumMatchPerGift",
    },
    VOLUNTEER_GRANT: {"rate_per_hour": "ratePerHour", "minimum_hours": "minimumHours"},
}
REQUIRED = {DONATION_MATCH: ("ratio_percent",), VOLUNTEER_GRANT: ("rate_per_hour",)}
DEFAULTS: dict[str, dict[str, typing.Any]] = {
    DONATION_MATCH: {"minimum_gift": 1},
    VOLUNTEER_GRANT: {"minimum_hours": 0.0},
}


def create_program(
    db: Session,
    *,
    caller: Principal,
    name: str,
    kind: str,
    per_person_cap: int,
    active: bool = True,
    period_start_month: int = 1,
    approval: str = "review",
    description: str | None = None,
    budget: int | None = None,
    eligible_roles: list[str] | None = None,
    eligible_departments: list[str] | None = None,
    currency: str | None = None,
    **rules: float | None,
) -> GivingProgram:
    """A new program of the caller's organization, in `currency` (by default the organization's
    reporting currency, for good), recorded in the evidence log at version 1."""
    _check_rules(kind, rules)
    _check_new(kind, rules)
    if currency is None:
        currency = db.execute(
            select(Organization.reporting_currency).where(Organization.id == caller.organization_id)
        ).scalar_one()
    now = utcnow()
    program = GivingProgram(
        organization_id=caller.organization_id,
        currency=money.checked(currency),
        name=name.strip(),
        description=free_text.optional(description),
        kind=kind,
        active=active,
        period_start_month=period_start_month,
        per_person_cap=per_person_cap,
        budget=budget,
        approval=approval,
        eligible_roles=_distinct(eligible_roles),
        eligible_departments=_distinct(eligible_departments),
        version=1,
        created_by=caller.user_id,
        created_at=now,
        updated_at=now,
        **{**DEFAULTS[kind], **rules},
    )
    db.add(program)
    db.flush()
    _record(db, program, caller)
    return program


def update_program(db: Session, *, caller: Principal, program_id: str, changes: dict) -> GivingProgram:
    """Change a program; a real change makes a new version, which applies to requests made after it."""
    program = _get(db, caller, program_id, lock=True)
    _check_rules(program.kind, {key: value for key, value in changes.items() if key in _rule_fields()})
    if "name" in changes:
        changes["name"] = changes["name"].strip()
    if "description" in changes:
        changes["description"] = free_text.optional(changes["description"])
    for key in ("eligible_roles", "eligible_departments"):
        if key in changes:
            changes[key] = _distinct(changes[key])
    changed = {key: value for key, value in changes.items() if getattr(program, key) != value}
    if not changed:
        return program
    for key, value in changed.items():
        setattr(program, key, value)
    program.version += 1
    program.updated_at = utcnow()
    db.flush()
    _record(db, program, caller)
    return program


def list_programs(
    db: Session,
    *,
    caller: Principal,
    limit: int,
    cursor: str | None = None,
    kind: str | None = None,
    active: bool | None = None,
) -> tuple[list[GivingProgram], str | None]:
    """The organization's programs, newest first; every member reads the rules that apply to them."""
    statement = select(GivingProgram).where(GivingProgram.organization_id == caller.organization_id)
    if kind is not None:
        statement = statement.where(GivingProgram.kind == kind)
    if active is not None:
        statement = statement.where(GivingProgram.active.is_(active))
    return pagination.page(
        db, statement, timestamp=GivingProgram.created_at, record_id=GivingProgram.id, limit=limit, cursor=cursor
    )


def get_program(db: Session, *, caller: Principal, program_id: str) -> GivingProgram:
    """One program of the caller's organization; any other id answers 404."""
    return _get(db, caller, program_id)


def _get(db: Session, caller: Principal, program_id: str, *, lock: bool = False) -> GivingProgram:
    statement = select(GivingProgram).where(
        GivingProgram.id == program_id, GivingProgram.organization_id == caller.organization_id
    )
    program = db.scalar(statement.with_for_update() if lock else statement)
    if program is None:
        raise NotFound("No such giving program")
    return program


def department_of(user: User) -> str | None:
    """The person's department as the directory (SCIM, docs/decisions.md §13) last set it; None
    for someone it never named, who is outside every program limited to departments."""
    return user.department


def is_eligible(program: GivingProgram, user: User) -> bool:
    """Whether the person may receive the program's money: active, and in its roles and departments."""
    if not user.active or user.organization_id != program.organization_id:
        return False
    if program.eligible_roles is not None and user.role not in program.eligible_roles:
        return False
    return program.eligible_departments is None or department_of(user) in program.eligible_departments


def period_start(program: GivingProgram, moment: dt.datetime) -> dt.date:
    """The first day of the program's year (from `periodStartMonth`, UTC) that `moment` falls in."""
    moment = moment.astimezone(dt.UTC)
    year = moment.year if moment.month >= program.period_start_month else moment.year - 1
    return dt.date(year, program.period_start_month, 1)


def period_end(start: dt.date) -> dt.date:
    """The first day after the period starting on `start`."""
    return start.replace(year=start.year + 1)


def _rule_fields() -> set[str]:
    return {*KIND_FIELDS[DONATION_MATCH], *KIND_FIELDS[VOLUNTEER_GRANT]}


def _check_rules(kind: str, rules: dict) -> None:
    """The rule fields given belong to `kind`, and a new program has the ones it needs."""
    errors = [
        field_error("body", name, f"is not a rule of a {kind} program")
        for other, fields in KIND_FIELDS.items()
        if other != kind
        for attribute, name in fields.items()
        if rules.get(attribute) is not None
    ]
    if errors:
        raise refused(errors)


def _check_new(kind: str, rules: dict) -> None:
    missing = [KIND_FIELDS[kind][field] for field in REQUIRED[kind] if rules.get(field) is None]
    if missing:
        raise refused([field_error("body", name, f"is required for a {kind} program") for name in missing])


def _record(db: Session, program: GivingProgram, caller: Principal) -> None:
    # Cast: the kind's rules are named by KIND_FIELDS, which the API's fields are named by too.
    data = typing.cast(
        GivingProgramSet,
        {
            "version": program.version,
            "kind": program.kind,
            "active": program.active,
            "approval": program.approval,
            "periodStartMonth": program.period_start_month,
            "perPersonCap": program.per_person_cap,
            "budget": program.budget,
            **{name: getattr(program, field) for field, name in KIND_FIELDS[program.kind].items()},
            "currency": program.currency,
        },
    )
    evidence.append(
        db,
        organization_id=program.organization_id,
        type=GIVING_PROGRAM_SET,
        subject=("giving_program", program.id),
        actor_id=caller.user_id,
        data=data,
    )


def _distinct(values: list[str] | None) -> list[str] | None:
    return None if values is None else list(dict.fromkeys(value.strip() for value in values))
