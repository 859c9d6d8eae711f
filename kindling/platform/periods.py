"""Reporting periods: the rolling windows of activity reports and the calendar weeks of wellbeing figures.

Activity (kindness acts, check-ins, donations) is counted over a rolling window ending now.
Wellbeing figures are built from whole calendar weeks, Monday 00:00 UTC to the next Monday,
because a week's figures are published once, after it ends, and then served as they were
(docs/decisions.md §7): a period is the closed weeks before the current one.
"""

from __future__ import annotations

import dataclasses
import datetime as dt

from kindling.platform.base import utcnow

DEFAULT_PERIOD = "month"
# Rolling windows ending now, as for the portfolio export.
PERIOD_DAYS = {"week": 7, "month": 30, "quarter": 90, "year": 365}
# Closed calendar weeks of a period: the current week is open, and never part of one.
PERIOD_WEEKS = {"week": 1, "month": 4, "quarter": 13, "year": 52}
WEEK = dt.timedelta(days=7)


@dataclasses.dataclass(frozen=True)
class Window:
    """A rolling period ending at `end`, and the calendar weeks of the same period."""

    period: str
    start: dt.datetime
    end: dt.datetime

    @property
    def weeks(self) -> list[dt.date]:
        """The Mondays of the period's closed calendar weeks, oldest first, the week before the
        week of `end` last."""
        current = week_of(self.end)
        return [current - WEEK * n for n in reversed(range(1, PERIOD_WEEKS[self.period] + 1))]

    @property
    def weeks_start(self) -> dt.datetime:
        """Monday 00:00 UTC of the period's first calendar week."""
        return _midnight(self.weeks[0])

    @property
    def weeks_end(self) -> dt.datetime:
        """Monday 00:00 UTC after the period's last calendar week (exclusive)."""
        return _midnight(self.weeks[-1] + WEEK)


def window(period: str = DEFAULT_PERIOD, *, now: dt.datetime | None = None) -> Window:
    """The rolling window of `period` ending now: week 7 days, month 30, quarter 90, year 365."""
    end = now or utcnow()
    return Window(period=period, start=end - dt.timedelta(days=PERIOD_DAYS[period]), end=end)


def week_of(moment: dt.datetime) -> dt.date:
    """The Monday (UTC) of the calendar week `moment` falls in."""
    day = moment.astimezone(dt.UTC).date()
    return day - dt.timedelta(days=day.weekday())


def _midnight(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(), tzinfo=dt.UTC)
