"""Activity figures of organizations over a rolling period: the one source of report numbers.

Compliance reports (one organization) and the portfolio export (all of a consultant's
clients) read the same grouped queries, so a figure, and above all the compliance rate
(docs/decisions.md §9), is computed in one place for one organization or many.

A record belongs to the window by the moment it was made: a kindness act by `created_at`,
a check-in by `checked_in_at`, a donation by `created_at` (not `succeeded_at`), so that a
period's count of records, the rate's denominator, does not change when a payment settles
later; the donation's status is the one it has now. Windows are closed: start <= t <= end.
Wellbeing figures are the published figures of the period's calendar weeks, the ones the
wellbeing aggregates show (docs/decisions.md §7).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Collection, Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from sqlalchemy import (
    ColumnElement,
    CompoundSelect,
    Select,
    SQLColumnExpression,
    and_,
    case,
    func,
    literal,
    literal_column,
    select,
    union_all,
)
from sqlalchemy.orm import Session

from kindling.accounts.models import Organization, User
from kindling.donations.models import Donation, GivingRequest
from kindling.donations.programs import DONATION_MATCH, VOLUNTEER_GRANT
from kindling.kindness.models import KindnessAct
from kindling.kindness.stats import CATEGORIES
from kindling.kindness.verification_models import Attestation, VerificationDecision
from kindling.platform import money
from kindling.platform.periods import Window
from kindling.rates import service as rates
from kindling.rates.service import Quote
from kindling.volunteering.models import CheckIn
from kindling.wellbeing import service as survey

# An act whose verified level is supervisor verification (3) or above carries evidence (docs/decisions.md §9).
EVIDENCE_LEVEL = 3
# External validation: a third party's attestation (docs/decisions.md §6).
EXTERNAL_LEVEL = 5
SUCCEEDED = "succeeded"
# Giving requests that commit the company's money (docs/decisions.md §14).
PAID = "paid"
COMMITTED = ("approved", PAID)


@dataclasses.dataclass(frozen=True)
class Evidence:
    """How many of `total` records carry verifiable evidence."""

    verified: int
    total: int


@dataclasses.dataclass(frozen=True)
class Activity:
    """One organization's kindness acts, check-ins and donations in a window."""

    kindness: Evidence  # acts with verifiedLevel >= 3, of all acts
    kindness_by_category: dict[str, Evidence]
    check_ins: Evidence  # verified check-ins, of all check-ins
    volunteer_hours: float  # of verified check-ins only, unrounded
    volunteer_participants: int  # people with a verified check-in
    donations: Evidence  # succeeded donations, of all donations
    donated_minor_units: int  # sum of succeeded donations, in minor units of `currency`
    compliance_rate: float  # percent to 1 decimal, 0 without activity (docs/decisions.md §9)
    # The company's own giving (docs/decisions.md §14): approved and paid requests, in
    # `currency`; evidence: those paid (with their payout reference), of them.
    matches: Evidence
    matched_minor_units: int
    grants: Evidence
    granted_minor_units: int
    # The currency of the money figures: each amount in another was converted at the ECB quotes
    # of its own day and rounded half-even, then summed; `rates` are the quotes used.
    currency: str = "USD"
    # Per money figure ("donated", "matched", "granted"): the amounts in currencies without a
    # quote, summed per currency in its minor units.
    unconverted: dict[str, dict[str, int]] = dataclasses.field(default_factory=dict)
    rates: tuple[Quote, ...] = ()
    # The succeeded donations as given: per currency, in its minor units.
    donated_by_currency: dict[str, int] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class Wellbeing:
    """One organization's published wellbeing figures over a period, as the aggregates show them."""

    respondents: int  # the most people of one published week, with its noise, members or not today
    active_members: int
    responses: int
    mood_average: float | None  # 2 decimals
    stress_average: float | None

    @property
    def suppressed(self) -> bool:
        """No week of the period is published (docs/decisions.md §7)."""
        return self.respondents == 0


def activity(
    db: Session, *, organization_ids: Collection[str], window: Window, currency: str | None = None
) -> dict[str, Activity]:
    """Activity figures of each organization, its money in `currency` (by default its reporting
    currency): one statement of grouped queries whatever their number, and one more of the
    amounts in other currencies, converted one by one."""
    if not organization_ids:
        return {}
    ids = list(organization_ids)
    target = Organization.reporting_currency if currency is None else literal(currency)
    kindness = _kindness(ids, window).subquery("kindness")
    check_ins = _check_ins(ids, window).subquery("check_ins")
    donations = _donations(ids, window, target).subquery("donations")
    giving = _giving(ids, window, target).subquery("giving")

    records = (
        _zero_if_null(kindness.c.acts) + _zero_if_null(check_ins.c.check_ins) + _zero_if_null(donations.c.donations)
    )
    evidenced = (
        _zero_if_null(kindness.c.verified_acts)
        + _zero_if_null(check_ins.c.verified)
        + _zero_if_null(donations.c.succeeded)
    )
    # 100.0 is numeric on PostgreSQL and real on SQLite, so the division is never an integer one.
    rate = func.coalesce(func.round(literal_column("100.0") * evidenced / func.nullif(records, 0), 1), 0)
    category_columns = [
        column
        for category in CATEGORIES
        for column in (_zero_if_null(kindness.c[f"{category}_acts"]), _zero_if_null(kindness.c[f"{category}_verified"]))
    ]
    statement = (
        select(
            Organization.id,
            target,
            _zero_if_null(kindness.c.acts),
            _zero_if_null(kindness.c.verified_acts),
            *category_columns,
            _zero_if_null(check_ins.c.check_ins),
            _zero_if_null(check_ins.c.verified),
            _zero_if_null(check_ins.c.hours),
            _zero_if_null(check_ins.c.participants),
            _zero_if_null(donations.c.donations),
            _zero_if_null(donations.c.succeeded),
            _zero_if_null(donations.c.amount),
            rate,
            *(
                _zero_if_null(giving.c[name])
                for name in ("matches", "matches_paid", "matched", "grants", "grants_paid", "granted")
            ),
        )
        .outerjoin(kindness, kindness.c.organization_id == Organization.id)
        .outerjoin(check_ins, check_ins.c.organization_id == Organization.id)
        .outerjoin(donations, donations.c.organization_id == Organization.id)
        .outerjoin(giving, giving.c.organization_id == Organization.id)
        .where(Organization.id.in_(ids))
    )
    figures = {row[0]: _activity(row[2:], currency=row[1]) for row in db.execute(statement)}
    return _converted(db, figures, _foreign(ids, window, target))


def _foreign(ids: list[str], window: Window, target: SQLColumnExpression[str]) -> CompoundSelect:
    """Succeeded donations and committed requests of the window in another currency than `target`."""
    donations = (
        select(
            Donation.organization_id,
            literal("donated").label("figure"),
            Donation.currency,
            Donation.created_at,
            Donation.amount,
        )
        .join(Organization, Organization.id == Donation.organization_id)
        .where(
            Donation.organization_id.in_(ids),
            _made_in(window, Donation.created_at),
            Donation.status == SUCCEEDED,
            Donation.currency != target,
        )
    )
    requests = (
        select(
            GivingRequest.organization_id,
            case((GivingRequest.kind == DONATION_MATCH, literal("matched")), else_=literal("granted")),
            GivingRequest.currency,
            GivingRequest.created_at,
            GivingRequest.amount,
        )
        .join(Organization, Organization.id == GivingRequest.organization_id)
        .where(
            GivingRequest.organization_id.in_(ids),
            _made_in(window, GivingRequest.created_at),
            GivingRequest.status.in_(COMMITTED),
            GivingRequest.currency != target,
        )
    )
    return union_all(donations, requests)


def _converted(db: Session, figures: dict[str, Activity], foreign: CompoundSelect) -> dict[str, Activity]:
    """Add each amount in another currency to its figure, converted half-even at the quotes of its
    UTC day; an amount without a quote goes to `unconverted` instead."""
    converter = rates.Converter(db)
    added: dict[str, dict[str, int]] = {}
    unconverted: dict[str, dict[str, dict[str, int]]] = {}
    used: dict[str, set[Quote]] = {}
    given = {
        organization_id: {figure.currency: figure.donated_minor_units} if figure.donated_minor_units else {}
        for organization_id, figure in figures.items()
    }
    for organization_id, figure, source, created_at, amount in db.execute(foreign):
        if figure == "donated":
            given[organization_id][source] = given[organization_id].get(source, 0) + amount
        target = figures[organization_id].currency
        quotes = converter.quotes(source=source, target=target, on=created_at.astimezone(dt.UTC).date())
        if quotes is None:
            by_currency = unconverted.setdefault(organization_id, {}).setdefault(figure, {})
            by_currency[source] = by_currency.get(source, 0) + amount
            continue
        exact = money.converted(
            amount, source=source, target=target, source_rate=quotes[0].rate, target_rate=quotes[1].rate
        )
        sums = added.setdefault(organization_id, {})
        sums[figure] = sums.get(figure, 0) + money.half_even(exact)
        used.setdefault(organization_id, set()).update(quotes)
    return {
        organization_id: dataclasses.replace(
            figure,
            donated_minor_units=figure.donated_minor_units + added.get(organization_id, {}).get("donated", 0),
            matched_minor_units=figure.matched_minor_units + added.get(organization_id, {}).get("matched", 0),
            granted_minor_units=figure.granted_minor_units + added.get(organization_id, {}).get("granted", 0),
            unconverted=unconverted.get(organization_id, {}),
            rates=tuple(sorted(used.get(organization_id, ()), key=lambda q: (q.currency, q.rate_date))),
            donated_by_currency=dict(sorted(given[organization_id].items())),
        )
        for organization_id, figure in figures.items()
    }


def _made_in(window: Window, made_at: SQLColumnExpression[dt.datetime]) -> ColumnElement[bool]:
    """A record belongs to the window by the moment it was made, and windows are closed."""
    return and_(made_at >= window.start, made_at <= window.end)


def _zero_if_null(column: ColumnElement[Any]) -> ColumnElement[Any]:
    # An organization without records of a kind has no row in that kind's grouped query.
    return func.coalesce(column, 0)


def _kindness(ids: list[str], window: Window) -> Select:
    verified = KindnessAct.verified_level >= EVIDENCE_LEVEL
    by_category = [
        column
        for category in CATEGORIES
        for column in (
            func.count().filter(KindnessAct.category == category).label(f"{category}_acts"),
            func.count().filter(KindnessAct.category == category, verified).label(f"{category}_verified"),
        )
    ]
    return (
        select(
            KindnessAct.organization_id,
            func.count().label("acts"),
            func.count().filter(verified).label("verified_acts"),
            *by_category,
        )
        .where(
            KindnessAct.organization_id.in_(ids),
            _made_in(window, KindnessAct.created_at),
        )
        .group_by(KindnessAct.organization_id)
    )


def _check_ins(ids: list[str], window: Window) -> Select:
    return (
        select(
            CheckIn.organization_id,
            func.count().label("check_ins"),
            func.count().filter(CheckIn.verified).label("verified"),
            # In hundredths, as each check-in's hours are: the sum is exact (docs/evidence.md).
            func.sum(func.round(CheckIn.hours * 100)).filter(CheckIn.verified).label("hours"),
            func.count(func.distinct(CheckIn.user_id)).filter(CheckIn.verified).label("participants"),
        )
        .where(
            CheckIn.organization_id.in_(ids),
            _made_in(window, CheckIn.checked_in_at),
        )
        .group_by(CheckIn.organization_id)
    )


def _donations(ids: list[str], window: Window, target: SQLColumnExpression[str]) -> Select:
    succeeded = Donation.status == SUCCEEDED
    return (
        select(
            Donation.organization_id,
            func.count().label("donations"),
            func.count().filter(succeeded).label("succeeded"),
            # Amounts in other currencies are converted one by one (_converted).
            func.sum(Donation.amount).filter(succeeded, Donation.currency == target).label("amount"),
        )
        .join(Organization, Organization.id == Donation.organization_id)
        .where(
            Donation.organization_id.in_(ids),
            _made_in(window, Donation.created_at),
        )
        .group_by(Donation.organization_id)
    )


def _giving(ids: list[str], window: Window, target: SQLColumnExpression[str]) -> Select:
    committed = GivingRequest.status.in_(COMMITTED)
    # A payout is recorded with its reference (giving.paid), so a paid request carries one: the
    # status alone, which the log holds, makes the evidence (docs/evidence.md).
    paid = GivingRequest.status == PAID
    columns = []
    for kind, requests, paid_requests, amount in (
        (DONATION_MATCH, "matches", "matches_paid", "matched"),
        (VOLUNTEER_GRANT, "grants", "grants_paid", "granted"),
    ):
        of_kind = GivingRequest.kind == kind
        columns += [
            func.count().filter(of_kind, committed).label(requests),
            func.count().filter(of_kind, paid).label(paid_requests),
            func.sum(GivingRequest.amount).filter(of_kind, committed, GivingRequest.currency == target).label(amount),
        ]
    return (
        select(GivingRequest.organization_id, *columns)
        .join(Organization, Organization.id == GivingRequest.organization_id)
        .where(
            GivingRequest.organization_id.in_(ids),
            _made_in(window, GivingRequest.created_at),
        )
        .group_by(GivingRequest.organization_id)
    )


def _activity(row: Sequence[Any], *, currency: str) -> Activity:
    acts, verified_acts, *rest = row
    by_category = {category: Evidence(rest[2 * n + 1], rest[2 * n]) for n, category in enumerate(CATEGORIES)}
    check_ins, verified, hours, participants, donations, succeeded, amount, rate, *giving = rest[2 * len(CATEGORIES) :]
    matches, matches_paid, matched, grants, grants_paid, granted = giving
    return Activity(
        kindness=Evidence(verified_acts, acts),
        kindness_by_category=by_category,
        check_ins=Evidence(verified, check_ins),
        volunteer_hours=float(Decimal(int(hours)) / 100),
        volunteer_participants=participants,
        donations=Evidence(succeeded, donations),
        donated_minor_units=int(amount),
        compliance_rate=float(rate),
        matches=Evidence(matches_paid, matches),
        matched_minor_units=int(matched),
        grants=Evidence(grants_paid, grants),
        granted_minor_units=int(granted),
        currency=currency,
    )


@dataclasses.dataclass(frozen=True)
class ExternalValidation:
    """How concentrated one organization's external validation (level 5) is (docs/evidence.md).

    `acts`: the window's acts at verified level 5; `attesters`: the distinct attesterKeys that
    confirmed them; `largest_share`: the fraction of those acts confirmed by the most frequent
    key, rounded half up to 4 decimals (0 without acts)."""

    acts: int
    attesters: int
    largest_share: float


def external_validation(db: Session, *, organization_id: str, window: Window) -> ExternalValidation:
    """The level-5 acts of the window and who confirmed them, by attesterKey."""
    statement = (
        select(Attestation.attester_key, func.count())
        .select_from(KindnessAct)
        # Outer joins: an act the log imported at level 5 may have no attestation on record.
        .outerjoin(
            VerificationDecision,
            (VerificationDecision.act_id == KindnessAct.id) & (VerificationDecision.level == EXTERNAL_LEVEL),
        )
        .outerjoin(Attestation, Attestation.id == VerificationDecision.attestation_id)
        .where(
            KindnessAct.organization_id == organization_id,
            KindnessAct.verified_level == EXTERNAL_LEVEL,
            _made_in(window, KindnessAct.created_at),
        )
        .group_by(Attestation.attester_key)
    )
    return concentration(dict(db.execute(statement).all()))


def concentration(acts_by_key: dict[str | None, int]) -> ExternalValidation:
    """`ExternalValidation` from the number of acts each attesterKey confirmed; answers given
    before attestations were mailed, and acts imported at level 5, have no key (None): they
    count as acts of no attester."""
    acts = sum(acts_by_key.values())
    keyed = [count for key, count in acts_by_key.items() if key is not None]
    largest = max(keyed, default=0)
    share = Decimal(0) if not acts else (Decimal(largest) / acts).quantize(Decimal("0.0001"), ROUND_HALF_UP)
    return ExternalValidation(acts=acts, attesters=len(keyed), largest_share=float(share))


def wellbeing(db: Session, *, organization_ids: Collection[str], window: Window) -> dict[str, Wellbeing]:
    """Wellbeing figures of each organization: its published weeks and its active members."""
    if not organization_ids:
        return {}
    ids = list(organization_ids)
    published = survey.summarize(db, organization_ids=ids, window=window)
    members = dict(
        db.execute(
            select(User.organization_id, func.count())
            .where(User.organization_id.in_(ids), User.active.is_(True))
            .group_by(User.organization_id)
        ).all()
    )
    result = {}
    for organization_id in ids:
        summary = published[organization_id]
        figures = summary.figures if summary else survey.Figures(0, 0, None, None, None, None)
        result[organization_id] = Wellbeing(
            respondents=figures.respondents,
            active_members=members.get(organization_id, 0),
            responses=figures.responses,
            mood_average=figures.average_mood,
            stress_average=figures.average_stress,
        )
    return result


def rounded(value: float, places: int) -> Decimal:
    """A figure rounded half up to `places` decimals, as every report prints it."""
    return Decimal(repr(value)).quantize(Decimal(1).scaleb(-places), ROUND_HALF_UP)
