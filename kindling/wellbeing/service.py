"""Wellbeing survey responses, their sentiment, and aggregates that move in steps of five people.

`anonymous` responses stay linked to their author, because the author lists and reads
its own and each person counts once toward the minimum group size; they are shown in
organization aggregates only and must be left out of any view that names people. No
admin view names people today, so in this API the two kinds are equally private.

Aggregates are built from calendar weeks (docs/decisions.md §7). A week is published once
5 distinct people have answered in it, and published again only when 5 more distinct
people have answered since its last publication; in between its stored figures are
served as they are. So two aggregates an admin can read differ by the answers of 0 or of
at least 5 people, and comparing them never isolates one person. Publication happens as a
response is recorded, in its transaction, under a lock on the week's row.

Steps of five count accounts, and an admin can make accounts: so each publication's figures
also carry differential-privacy noise (kindling/wellbeing/noise.py), and the energy
average and the sentiment split each rest on their own five people.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
from collections.abc import Collection
from decimal import ROUND_HALF_UP, Decimal

from sqlalchemy import func, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session
from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

from kindling.errors import Forbidden, NotFound
from kindling.evidence import log as evidence
from kindling.platform import pagination
from kindling.platform.access import Principal
from kindling.platform.base import utcnow
from kindling.platform.periods import Window, week_of
from kindling.wellbeing import noise
from kindling.wellbeing.models import WellbeingResponse, WellbeingWeek

MINIMUM_GROUP_SIZE = noise.MINIMUM_GROUP_SIZE
# VADER's own recommended cut-offs for its compound score.
POSITIVE_FROM = 0.05
NEGATIVE_TO = -0.05
SENTIMENT_LABELS = noise.SENTIMENT_LABELS


@dataclasses.dataclass(frozen=True)
class Sentiment:
    label: str
    compound: float


@dataclasses.dataclass(frozen=True)
class Figures:
    """Counts, averages (2 decimals, half up) and the sentiment split of published weeks."""

    respondents: int  # distinct people
    responses: int
    average_mood: float | None
    average_stress: float | None
    average_energy: float | None  # None while fewer than five people gave an energy value
    sentiment: dict[str, int] | None  # None while fewer than five people commented


@dataclasses.dataclass(frozen=True)
class Week:
    start: dt.date
    figures: Figures | None  # None while the week is not published


@dataclasses.dataclass(frozen=True)
class Summary:
    """An organization's published wellbeing figures over a period of calendar weeks."""

    period: str
    start: dt.datetime  # Monday 00:00 UTC of the first week
    end: dt.datetime  # Monday 00:00 UTC after the last week, exclusive
    figures: Figures
    weeks: list[Week]


@functools.cache
def _analyzer() -> SentimentIntensityAnalyzer:
    # Loading the lexicon takes a while; once per process is enough (scoring is read-only).
    return SentimentIntensityAnalyzer()


def sentiment_of(text: str | None) -> Sentiment:
    """VADER's compound score of the text and its label; no text is neutral (compound 0)."""
    compound = _analyzer().polarity_scores(text)["compound"] if text else 0.0
    return Sentiment(label=sentiment_label(compound), compound=compound)


def sentiment_label(compound: float) -> str:
    """The label of a compound score, by VADER's cut-offs."""
    if compound >= POSITIVE_FROM:
        return "positive"
    if compound <= NEGATIVE_TO:
        return "negative"
    return "neutral"


def create_response(
    db: Session,
    *,
    caller: Principal,
    mood: int,
    stress: int,
    energy: int | None = None,
    comment: str | None = None,
    anonymous: bool = False,
    now: dt.datetime | None = None,
) -> WellbeingResponse:
    """Record the caller's survey response with the sentiment of its comment, and publish
    its week's figures when the response makes them due."""
    comment = (comment.strip() or None) if comment is not None else None
    sentiment = sentiment_of(comment)
    at = now or utcnow()
    week = _locked_week(db, organization_id=caller.member_of, week_start=week_of(at))
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
        created_at=at,
        week_start=week.week_start,
    )
    db.add(response)
    db.flush()
    _publish_if_due(db, week=week, now=at)
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
        db,
        _own(caller),
        timestamp=WellbeingResponse.created_at,
        record_id=WellbeingResponse.id,
        limit=limit,
        cursor=cursor,
    )


def get_own_response(db: Session, *, caller: Principal, response_id: str) -> WellbeingResponse:
    """One of the caller's own responses; anyone else's, an admin's request included, answers 404."""
    response = db.scalar(_own(caller).where(WellbeingResponse.id == response_id))
    if response is None:
        raise NotFound("No such wellbeing response")
    return response


def _locked_week(db: Session, *, organization_id: str, week_start: dt.date) -> WellbeingWeek:
    """The organization's row for the week, created if need be, locked until the transaction ends.

    Two responses recorded at once queue here, so the second counts the first's answer
    (or its publication) and no publication is skipped or made twice. SQLite has no row
    locks; its transactions take the database's write lock when they begin.
    """
    insert = postgresql.insert if db.get_bind().dialect.name == "postgresql" else sqlite.insert
    db.execute(
        insert(WellbeingWeek).values(organization_id=organization_id, week_start=week_start).on_conflict_do_nothing()
    )
    return db.scalars(
        select(WellbeingWeek)
        .where(WellbeingWeek.organization_id == organization_id, WellbeingWeek.week_start == week_start)
        .with_for_update()
        .execution_options(populate_existing=True)
    ).one()


def _publish_if_due(db: Session, *, week: WellbeingWeek, now: dt.datetime) -> bool:
    """Publish the locked week's figures, with noise, from all its responses when at least
    MINIMUM_GROUP_SIZE distinct people answered since its last publication (or ever, for
    the first); whether it did. The figures go into the evidence log as published."""
    of_week = (
        WellbeingResponse.organization_id == week.organization_id,
        WellbeingResponse.week_start == week.week_start,
    )
    unpublished = WellbeingResponse.published_in.is_(None)
    newcomers = db.execute(
        select(func.count(func.distinct(WellbeingResponse.user_id))).where(*of_week, unpublished)
    ).scalar_one()
    if newcomers < MINIMUM_GROUP_SIZE:
        return False
    commented = WellbeingResponse.comment.is_not(None)
    people = [
        noise.Person(
            mood=float(mood),
            stress=float(stress),
            energy=None if energy is None else float(energy),
            answers=answers,
            sentiment=None if compound is None else sentiment_label(float(compound)),
        )
        for mood, stress, energy, answers, compound in db.execute(
            select(
                func.avg(WellbeingResponse.mood),
                func.avg(WellbeingResponse.stress),
                func.avg(WellbeingResponse.energy),
                func.count(),
                func.avg(WellbeingResponse.sentiment_compound).filter(commented),
            )
            .where(*of_week)
            .group_by(WellbeingResponse.user_id)
        )
    ]
    figures = noise.release(people)
    week.respondents = figures.respondents
    week.responses = figures.responses
    week.mood_average = _hundredths(figures.mood_average)
    week.stress_average = _hundredths(figures.stress_average)
    week.energy_respondents = figures.energy_respondents
    week.energy_average = _hundredths(figures.energy_average)
    week.positive, week.neutral, week.negative = (
        (figures.sentiment[label] for label in SENTIMENT_LABELS) if figures.sentiment else (None, None, None)
    )
    week.epsilon = noise.EPSILON
    week.revision += 1
    week.published_at = now
    db.execute(update(WellbeingResponse).where(*of_week, unpublished).values(published_in=week.revision))
    db.flush()
    evidence.append(
        db,
        organization_id=week.organization_id,
        type=evidence.WELLBEING_PUBLISHED,
        subject=("wellbeing_week", week.week_start.isoformat()),
        # Nobody's id: the author of the answer that made the week due is one of its people.
        actor_id=None,
        data=published_data(week),
    )
    return True


def organization_summary(db: Session, *, caller: Principal, window: Window) -> Summary | None:
    """The caller's organization's figures over `window`: for its admins only."""
    if not caller.is_admin:
        raise Forbidden("Only an organization admin reads its wellbeing figures")
    return summarize(db, organization_ids=[caller.member_of], window=window)[caller.member_of]


def published_data(week: WellbeingWeek) -> dict:
    """A published week's figures as its `wellbeing.published` event carries them."""
    return {
        "weekStart": week.week_start.isoformat(),
        "revision": week.revision,
        "respondents": week.respondents,
        "responses": week.responses,
        "averages": {"mood": week.mood_average, "stress": week.stress_average, "energy": week.energy_average},
        "energyRespondents": week.energy_respondents,
        "sentiment": None if week.positive is None else {label: getattr(week, label) for label in SENTIMENT_LABELS},
        "privacy": {"epsilon": week.epsilon, "mechanism": noise.MECHANISM if week.epsilon else None},
    }


def summarize(db: Session, *, organization_ids: Collection[str], window: Window) -> dict[str, Summary | None]:
    """Each organization's published figures over the calendar weeks of the window's period,
    or None when none of those weeks is published.

    Built from the stored weeks alone, as published: averages weighted by each week's
    people, `responses` and the sentiment split added up, and `respondents` the most people
    of one week (distinct people across weeks would be a new release of the answers).
    """
    ids = list(organization_ids)
    if not ids:
        return {}
    mondays = window.weeks
    stored: dict[str, dict[dt.date, WellbeingWeek]] = {organization_id: {} for organization_id in ids}
    for week in db.scalars(
        select(WellbeingWeek).where(
            WellbeingWeek.organization_id.in_(ids), WellbeingWeek.week_start.in_(mondays), WellbeingWeek.revision > 0
        )
    ):
        stored[week.organization_id][week.week_start] = week
    result: dict[str, Summary | None] = {}
    for organization_id in ids:
        weeks = stored[organization_id]
        if not weeks:
            result[organization_id] = None
            continue
        result[organization_id] = Summary(
            period=window.period,
            start=window.weeks_start,
            end=window.weeks_end,
            figures=figures_of(list(weeks.values())),
            weeks=[
                Week(start=monday, figures=figures_of([weeks[monday]]) if monday in weeks else None)
                for monday in mondays
            ],
        )
    return result


def figures_of(weeks: list[WellbeingWeek]) -> Figures:
    """The figures of published weeks taken together."""
    with_energy = [week for week in weeks if week.energy_average is not None]
    with_sentiment = [week for week in weeks if week.positive is not None]
    return Figures(
        respondents=max(week.respondents for week in weeks),
        responses=sum(week.responses for week in weeks),
        average_mood=_weighted([(week.mood_average, week.respondents) for week in weeks]),
        average_stress=_weighted([(week.stress_average, week.respondents) for week in weeks]),
        average_energy=_weighted([(week.energy_average, week.energy_respondents) for week in with_energy]),
        sentiment={label: sum(getattr(week, label) for week in with_sentiment) for label in SENTIMENT_LABELS}
        if with_sentiment
        else None,
    )


def _weighted(values: list[tuple[float | None, int | None]]) -> float | None:
    # Decimal arithmetic, so the figure depends on the stored values alone, never on float noise.
    weighted = [(Decimal(repr(value)), weight) for value, weight in values if value is not None and weight]
    total = sum((value * weight for value, weight in weighted), Decimal(0))
    count = sum(weight for _, weight in weighted)
    return None if not count else float((total / count).quantize(Decimal("0.01"), ROUND_HALF_UP))


def _hundredths(value: float | None) -> float | None:
    return None if value is None else float(Decimal(repr(value)).quantize(Decimal("0.01"), ROUND_HALF_UP))
