"""A compliance report as data, which the CSV, JSON and PDF renderings of one report share (it has no
table: a report is measured anew each time it is asked for)."""

from __future__ import annotations

import dataclasses
import datetime as dt

from kindling.accounts.models import Organization
from kindling.compliance import Framework
from kindling.compliance.metrics import Evidence, ExternalValidation, Window
from kindling.rates.service import Quote


@dataclasses.dataclass(frozen=True)
class Line:
    """One indicator of the report: the framework's code and title, and the metric's value and evidence."""

    code: str
    title: str
    metric: str
    value: int | float | None  # None: withheld, no week of the period's survey is published
    unit: str
    evidence: Evidence
    # A money figure's amounts in currencies without a quote, per currency in its minor units
    # (empty when none); None for every other figure.
    unconverted: dict[str, int] | None = None


@dataclasses.dataclass(frozen=True)
class Report:
    framework: Framework
    organization: Organization
    window: Window
    compliance_rate: float
    lines: tuple[Line, ...]
    external_validation: ExternalValidation
    # The ECB quotes the money figures were converted at, and the digest of the history they are from.
    rates: tuple[Quote, ...] = ()
    rates_digest: str | None = None

    @property
    def generated_at(self) -> dt.datetime:
        return self.window.end
