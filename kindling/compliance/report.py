"""A compliance report as data: what the CSV, JSON and PDF renderings of one report share."""

from __future__ import annotations

import dataclasses
import datetime as dt

from kindling.accounts.models import Organization
from kindling.compliance import Framework
from kindling.compliance.metrics import Evidence, ExternalValidation, Window


@dataclasses.dataclass(frozen=True)
class Line:
    """One indicator of the report: the framework's code and title, and the metric's value and evidence."""

    code: str
    title: str
    metric: str
    value: int | float | None  # None: withheld, no week of the period's survey is published
    unit: str
    evidence: Evidence


@dataclasses.dataclass(frozen=True)
class Report:
    framework: Framework
    organization: Organization
    window: Window
    compliance_rate: float
    lines: tuple[Line, ...]
    external_validation: ExternalValidation

    @property
    def generated_at(self) -> dt.datetime:
        return self.window.end
