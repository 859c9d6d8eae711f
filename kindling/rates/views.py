"""The reference rates' handler."""

from __future__ import annotations

import datetime as dt

from kindling.errors import NotFound, invalid
from kindling.platform import access, money
from kindling.platform.request import Reply, db
from kindling.rates import service as rates


def get_rate(token_info: dict, date: str, currency: str) -> Reply:
    access.principal(token_info)
    try:
        on = dt.date.fromisoformat(date)
    except ValueError:
        raise invalid("query", "date", "must be a date, YYYY-MM-DD") from None
    session = db()
    found = rates.quote(session, currency=money.checked(currency, location="query"), on=on)
    if found is None:
        raise NotFound(f"The ECB published no {currency} rate on or before {on}", code="rate_unavailable")
    body = {
        "currency": currency,
        "date": on.isoformat(),
        "rateDate": found.rate_date.isoformat(),
        "rate": found.rate,
        "source": rates.SOURCE,
        "ratesDigest": rates.digest(session),
    }
    return {"data": body}, 200
