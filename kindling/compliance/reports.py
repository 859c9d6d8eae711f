"""Compliance reports: a framework's indicators measured over one organization's period (docs/decisions.md §8, §9)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal

from sqlalchemy.orm import Session

from kindling.accounts.models import Organization
from kindling.compliance import CURRENCY_UNIT, get_framework, metrics
from kindling.compliance.metrics import Activity, Evidence, Wellbeing
from kindling.compliance.models import Line, Report
from kindling.platform import money, periods
from kindling.rates import service as rates

# The money metrics, and the figure of `Activity.unconverted` each reads.
MONEY = {"donation_amount": "donated", "matched_giving_amount": "matched", "volunteer_grant_amount": "granted"}


@dataclasses.dataclass(frozen=True)
class _Figures:
    activity: Activity
    wellbeing: Wellbeing
    currency: str


def build_report(
    db: Session,
    *,
    organization_id: str,
    framework_id: str,
    period: str = periods.DEFAULT_PERIOD,
    now: dt.datetime | None = None,
) -> Report:
    """The organization's report for a framework over the rolling period ending now."""
    framework = get_framework(framework_id)
    organization = db.get_one(Organization, organization_id)
    window = periods.window(period, now=now)
    ids = [organization_id]
    figures = _Figures(
        activity=metrics.activity(db, organization_ids=ids, window=window)[organization_id],
        wellbeing=metrics.wellbeing(db, organization_ids=ids, window=window)[organization_id],
        currency=organization.reporting_currency,
    )
    lines = []
    for indicator in framework.indicators:
        value, evidence = MEASURES[indicator.metric](figures)
        unit = organization.reporting_currency if indicator.unit == CURRENCY_UNIT else indicator.unit
        unconverted = None
        if indicator.metric in MONEY:
            unconverted = dict(sorted(figures.activity.unconverted.get(MONEY[indicator.metric], {}).items()))
        lines.append(Line(indicator.code, indicator.title, indicator.metric, value, unit, evidence, unconverted))
    return Report(
        framework=framework,
        organization=organization,
        window=window,
        compliance_rate=figures.activity.compliance_rate,
        lines=tuple(lines),
        external_validation=metrics.external_validation(db, organization_id=organization_id, window=window),
        rates=figures.activity.rates,
        rates_digest=rates.digest(db),
    )


def _percent(part: int, whole: int) -> float:
    if not whole:
        return 0.0
    return float((Decimal(100 * part) / whole).quantize(Decimal("0.1"), ROUND_HALF_UP))


def _rounded(value: float | None, places: int) -> float | None:
    return None if value is None else float(metrics.rounded(value, places))


def _category(category: str) -> Callable[[_Figures], tuple]:
    def measure(figures: _Figures) -> tuple:
        evidence = figures.activity.kindness_by_category[category]
        return evidence.total, evidence

    return measure


def _survey(
    value: Callable[[Wellbeing], float | None], evidence: Callable[[Wellbeing], Evidence]
) -> Callable[[_Figures], tuple]:
    """A wellbeing measure from the published weeks of the period: no value when none is published."""

    def measure(figures: _Figures) -> tuple:
        survey = figures.wellbeing
        return (None if survey.suppressed else value(survey)), evidence(survey)

    return measure


def _participation(survey: Wellbeing) -> Evidence:
    return Evidence(survey.respondents, survey.active_members)


def _responses(survey: Wellbeing) -> Evidence:
    return Evidence(survey.responses, survey.responses)


# Each metric of the vocabulary (kindling/compliance/frameworks.py): figures -> (value, evidence).
MEASURES: dict[str, Callable[[_Figures], tuple]] = {
    "kindness_acts": lambda f: (f.activity.kindness.total, f.activity.kindness),
    **{f"kindness_acts_{category}": _category(category) for category in metrics.CATEGORIES},
    "verified_kindness_share": lambda f: (
        _percent(f.activity.kindness.verified, f.activity.kindness.total),
        f.activity.kindness,
    ),
    "volunteer_hours": lambda f: (_rounded(f.activity.volunteer_hours, 1), f.activity.check_ins),
    "verified_check_ins": lambda f: (f.activity.check_ins.verified, f.activity.check_ins),
    "volunteer_participants": lambda f: (f.activity.volunteer_participants, f.activity.check_ins),
    "donations_succeeded": lambda f: (f.activity.donations.verified, f.activity.donations),
    "donation_amount": lambda f: (
        float(money.major_units(f.activity.donated_minor_units, f.currency)),
        f.activity.donations,
    ),
    "matched_giving_amount": lambda f: (
        float(money.major_units(f.activity.matched_minor_units, f.currency)),
        f.activity.matches,
    ),
    "volunteer_grant_amount": lambda f: (
        float(money.major_units(f.activity.granted_minor_units, f.currency)),
        f.activity.grants,
    ),
    "wellbeing_participation": _survey(
        # Published respondents may include people who have left since: at most everyone.
        lambda s: min(_percent(s.respondents, s.active_members), 100.0),
        _participation,
    ),
    "wellbeing_mood_average": _survey(lambda s: _rounded(s.mood_average, 2), _responses),
    "wellbeing_stress_average": _survey(lambda s: _rounded(s.stress_average, 2), _responses),
}
