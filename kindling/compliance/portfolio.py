"""Portfolio analytics of a consultant's active clients (docs/decisions.md §4): one row per client."""

from __future__ import annotations

import dataclasses
import datetime as dt
from decimal import ROUND_HALF_UP, Decimal

from sqlalchemy.orm import Session

from kindling.compliance import metrics
from kindling.consulting import clients
from kindling.platform import money, periods
from kindling.platform.exports import ExportFile, csv_text
from kindling.platform.periods import Window

CSV_HEADER = ("Client", "Kindness Acts", "Volunteer Hours", "Donations", "Compliance Rate")
CENT = Decimal("0.01")


@dataclasses.dataclass(frozen=True)
class Row:
    organization_id: str
    client: str
    kindness_acts: int
    volunteer_hours: Decimal  # of verified check-ins, to 1 decimal
    donations: Decimal  # succeeded, in major units of `currency`, to 2 decimals
    matched_giving: Decimal  # the client's approved and paid matches (docs/decisions.md §14), the same way
    currency: str  # ISO 4217, of both amounts: the one asked for, else the client's reporting currency
    compliance_rate: float
    # The succeeded donations as given, per currency in its minor units.
    original: dict[str, int] = dataclasses.field(default_factory=dict)
    # Per figure ("donations", "matchedGiving"): amounts without an ECB quote, per currency.
    unconverted: dict[str, dict[str, int]] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class Portfolio:
    window: Window
    rows: list[Row]

    @property
    def generated_at(self) -> dt.datetime:
        return self.window.end


def build_portfolio(
    db: Session,
    *,
    consultant_id: str,
    period: str = periods.DEFAULT_PERIOD,
    now: dt.datetime | None = None,
    currency: str | None = None,
) -> Portfolio:
    """The consultant's active clients by name, each with its figures over the rolling period, its
    money in `currency` (each gift converted at its day's ECB quotes) or else its own reporting currency."""
    if currency is not None:
        money.checked(currency, location="query")
    window = periods.window(period, now=now)
    organizations = [
        relationship.organization for relationship in clients.list_clients(db, consultant_id=consultant_id)
    ]
    figures = metrics.activity(db, organization_ids=[o.id for o in organizations], window=window, currency=currency)
    rows = []
    for organization in organizations:
        activity = figures[organization.id]
        unconverted = {"donations": activity.unconverted.get("donated", {})}
        unconverted["matchedGiving"] = activity.unconverted.get("matched", {})
        rows.append(
            Row(
                organization_id=organization.id,
                client=organization.name,
                kindness_acts=activity.kindness.total,
                volunteer_hours=metrics.rounded(activity.volunteer_hours, 1),
                donations=_major(activity.donated_minor_units, activity.currency),
                matched_giving=_major(activity.matched_minor_units, activity.currency),
                currency=activity.currency,
                compliance_rate=activity.compliance_rate,
                original=activity.donated_by_currency,
                unconverted={name: dict(sorted(sums.items())) for name, sums in unconverted.items()},
            )
        )
    return Portfolio(window=window, rows=rows)


def _major(minor: int, currency: str) -> Decimal:
    return money.major_units(minor, currency).quantize(CENT, ROUND_HALF_UP)


def portfolio_csv(portfolio: Portfolio) -> ExportFile:
    """The portfolio as a CSV file (header `Client,Kindness Acts,Volunteer Hours,Donations,Compliance Rate`)."""
    text = csv_text(
        CSV_HEADER,
        (
            (row.client, row.kindness_acts, row.volunteer_hours, row.donations, f"{row.compliance_rate:.1f}")
            for row in portfolio.rows
        ),
    )
    name = f"kindling-portfolio-{portfolio.window.period}-{portfolio.generated_at:%Y-%m-%d}.csv"
    return ExportFile(filename=name, media_type="text/csv; charset=utf-8", content=text.encode())
