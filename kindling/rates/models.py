"""The imported ECB reference history: one quote per currency and publication day, and the import it came from."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import Date, String
from sqlalchemy.orm import Mapped, mapped_column

from kindling.platform.base import Base, utcnow


class ExchangeRate(Base):
    """The ECB's quote of one currency on one publication day: units of it per 1 EUR."""

    __tablename__ = "exchange_rates"

    currency: Mapped[str] = mapped_column(String(3), primary_key=True)
    rate_date: Mapped[dt.date] = mapped_column(Date, primary_key=True)
    # The decimal string the ECB publishes ("1.1172"), never a float: conversions are exact fractions of it.
    rate: Mapped[str] = mapped_column(String(32))


class RateImport(Base):
    """The import the table holds; an import replaces the table, and this row, whole."""

    __tablename__ = "rate_imports"

    # SHA-256 (hex) of the imported CSV's bytes: an auditor hashes the ECB's file to compare.
    digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    source: Mapped[str] = mapped_column(String(255))
    imported_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
