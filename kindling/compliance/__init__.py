"""Compliance reporting: frameworks, their disclosure codes and the metrics that evidence them."""

from .frameworks import (
    CURRENCY_UNIT,
    METRICS,
    Framework,
    Indicator,
    InvalidFrameworks,
    Metric,
    get_framework,
    load_frameworks,
    read_frameworks,
)

__all__ = [
    "CURRENCY_UNIT",
    "METRICS",
    "Framework",
    "Indicator",
    "InvalidFrameworks",
    "Metric",
    "get_framework",
    "load_frameworks",
    "read_frameworks",
]
