"""Wellbeing survey responses, their sentiment, and privacy-preserving aggregates (DESIGN §7).

`anonymous` responses stay linked to their author, because the author lists and reads
its own and each person counts once toward the minimum group size; they are shown in
organization aggregates only and must be left out of any view that names people. No
admin view names people today, so in this API the two kinds are equally private.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools

from sqlalchemy import Date, String, cast, func, select
from sqlalchemy.orm import Session
from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

from kindling.access import Principal
from kindling.errors import NotFound
from kindling.persistence.base import utcnow
from kindling.persistence.wellbeing import WellbeingResponse
from kindling import pagination

MINIMUM_GROUP_SIZE = 5
# Rolling windows ending now, as for the portfolio export (DESIGN §4).
PERIOD_DAYS = {"week": 7, "month": 30, "quarter": 90, "year": 365}
DEFAULT_PERIOD = "month"
# VADER's own recommended cut-offs for its compound score.
POSITIVE_FROM = 0.05
NEGATIVE_TO = -0.05
SENTIMENT_LABELS = ("positive", "neutral", "negative")


@dataclasses.dataclass(frozen=True)
class Sentiment:
    label: str
    compound: float


@dataclasses.dataclass(frozen=True)
class Figures:
    """Counts and averages over a set of responses."""

    respondents: int
    responses: int
    average_mood: float | None
    average_stress: float | None
    average_energy: float | None


@dataclasses.dataclass(frozen=True)
class Week:
    start: dt.date
    figures: Figures | None  # None when fewer than the minimum group answered that week


@dataclasses.dataclass(frozen=True)
class Summary:
    """Organization aggregates over a rolling window."""

    period: str
    start: dt.datetime
    end: dt.datetime
    figures: Figures
    sentiment: dict[str, int]
    weeks: list[Week]


@functools.cache
def _analyzer() -> SentimentIntensityAnalyzer:
    # Loading the lexicon takes a while; once per process is enough (scoring is read-only).
    return SentimentIntensityAnalyzer()


def sentiment_of(text: str | None) -> Sentiment:
    """VADER's compound score of the text and its label; no text is neutral (compound 0)."""
    compound = _analyzer().polarity_scores(text)["compound"] if text else 0.0
    if compound >= POSITIVE_FROM:
        label = "positive"
    elif compound <= NEGATIVE_TO:
        label = "negative"
    else:
        label = "neutral"
    return Sentiment(label=label, compound=compound)


def create_response(
    db: Session,
    *,
    caller: Principal,
    mood: int,
    stress: int,
    energy: int | None = None,
    comment: str | None = None,
    anonymous: bool = False,
) -> WellbeingResponse:
    """Record the caller's survey response with the sentiment of its comment."""
    comment = (comment.strip() or None) if comment is not None else None
    sentiment = sentiment_of(comment)
    response = WellbeingResponse(
        organization_id=caller.organization_id,
        user_id=caller.user_id,
        mood=mood,
        stress=stress,
        energy=energy,
        comment=comment,
        anonymous=anonymous,
        sentiment_label=sentiment.label,
        sentiment_compound=sentiment.compound,
    )
    db.add(response)
    db.flush()
    return response


def _own(caller: Principal):
    return select(WellbeingResponse).where(
        WellbeingResponse.organization_id == caller.organization_id, WellbeingResponse.user_id == caller.user_id
    )


def list_own_responses(
    db: Session, *, caller: Principal, limit: int, cursor: str | None = None
) -> tuple[list[WellbeingResponse], str | None]:
    """The caller's own responses, newest first, one page at a time."""
    return pagination.page(
        db, _own(caller), timestamp=WellbeingResponse.created_at, record_id=WellbeingResponse.id, limit=limit, cursor=cursor
    )


def get_own_response(db: Session, *, caller: Principal, response_id: str) -> WellbeingResponse:
    """One of the caller's own responses; anyone else's, an admin's request included, answers 404."""
    response = db.scalar(_own(caller).where(WellbeingResponse.id == response_id))
    if response is None:
        raise NotFound("No such wellbeing response")
    return response


def summarize_organization(
    db: Session, *, organization_id: str, period: str = DEFAULT_PERIOD, now: dt.datetime | None = None
) -> Summary | None:
    """Aggregates of the organization's responses in the rolling window ending now, or None
    when fewer than MINIMUM_GROUP_SIZE distinct people answered in it."""
    end = now or utcnow()
    start = end - dt.timedelta(days=PERIOD_DAYS[period])
    in_window = (
        WellbeingResponse.organization_id == organization_id,
        WellbeingResponse.created_at >= start,
        WellbeingResponse.created_at <= end,
    )
    # Only responses with a comment carry a sentiment worth counting.
    commented = WellbeingResponse.comment.is_not(None)
    sentiment_columns = [
        func.count().filter(commented, WellbeingResponse.sentiment_label == label) for label in SENTIMENT_LABELS
    ]
    totals = db.execute(select(*_figure_columns(), *sentiment_columns).where(*in_window)).one()
    figures = _figures(totals[:5])
    if figures.respondents < MINIMUM_GROUP_SIZE:
        return None
    sentiment = dict(zip(SENTIMENT_LABELS, totals[5:]))
    week = _week_start(db)
    by_week = {
        _as_date(week_row[0]): _figures(week_row[1:])
        for week_row in db.execute(select(week, *_figure_columns()).where(*in_window).group_by(week))
    }
    weeks = []
    monday = start.date() - dt.timedelta(days=start.weekday())
    while monday <= end.date():
        week_figures = by_week.get(monday)
        if week_figures is not None and week_figures.respondents < MINIMUM_GROUP_SIZE:
            week_figures = None
        weeks.append(Week(start=monday, figures=week_figures))
        monday += dt.timedelta(days=7)
    return Summary(period=period, start=start, end=end, figures=figures, sentiment=sentiment, weeks=weeks)


def _figure_columns():
    return (
        func.count(func.distinct(WellbeingResponse.user_id)),
        func.count(),
        func.avg(WellbeingResponse.mood),
        func.avg(WellbeingResponse.stress),
        func.avg(WellbeingResponse.energy),
    )


def _figures(row) -> Figures:
    respondents, responses, mood, stress, energy = row
    return Figures(
        respondents=respondents,
        responses=responses,
        average_mood=_rounded(mood),
        average_stress=_rounded(stress),
        average_energy=_rounded(energy),
    )


def _rounded(value) -> float | None:
    return None if value is None else round(float(value), 2)


def _week_start(db: Session):
    """The Monday (UTC) of a response's ISO week, as SQL for the session's dialect."""
    if db.get_bind().dialect.name == "postgresql":
        return cast(func.date_trunc("week", func.timezone("UTC", WellbeingResponse.created_at)), Date)
    # SQLite keeps UTC text; step back to the Monday on or before the day.
    return func.date(WellbeingResponse.created_at, "-6 days", "weekday 1", type_=String)


def _as_date(value) -> dt.date:
    return dt.date.fromisoformat(value) if isinstance(value, str) else value
