"""Inclusive `startDate`/`endDate` list filters, turned into a half-open UTC range."""

from __future__ import annotations

import datetime as dt

from kindling.errors import invalid

# Stored timestamps have microsecond resolution on every backend.
RESOLUTION = dt.timedelta(microseconds=1)
EARLIEST = dt.datetime.min.replace(tzinfo=dt.UTC)
LATEST = dt.datetime.max.replace(tzinfo=dt.UTC)


def parse_range(start: str | None, end: str | None) -> tuple[dt.datetime | None, dt.datetime | None]:
    """`(since, until)` with since <= t < until for the inclusive filters `start` and `end`.

    Each is an ISO 8601 date (a UTC day) or an RFC 3339 date-time with an offset; a date-only
    `end` covers the whole of its day. A start after the end is a 400.
    """
    since = _instant(start, "startDate", end_of_day=False) if start else None
    until = _instant(end, "endDate", end_of_day=True) if end else None
    if since is not None and until is not None and since >= until:
        raise invalid("query", "startDate", "must not be after endDate")
    return since, until


def _instant(text: str, name: str, *, end_of_day: bool) -> dt.datetime:
    try:
        if "T" not in text:
            moment = dt.datetime.combine(dt.date.fromisoformat(text), dt.time(), tzinfo=dt.UTC)
            length = dt.timedelta(days=1)
        else:
            moment = dt.datetime.fromisoformat(text)
            length = RESOLUTION
    except ValueError:
        raise invalid("query", name, "must be a date or a date-time") from None
    if moment.tzinfo is None:
        raise invalid("query", name, "needs a UTC offset, such as Z or +02:00")
    try:
        moment = moment.astimezone(dt.UTC)
        return moment + length if end_of_day else moment
    except OverflowError:
        # Beyond the first or the last instant a datetime holds: every stored time is on this side.
        return EARLIEST if moment.year == dt.MINYEAR else LATEST
