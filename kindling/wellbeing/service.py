"""Wellbeing survey responses, their sentiment, and weekly figures published once, after each week ends.

`anonymous` responses stay linked to their author, because the author lists and reads
its own and each person counts once toward the minimum group size; they are shown in
organization aggregates only and must be left out of any view that names people. No
admin view names people today, so in this API the two kinds are equally private.

Aggregates are built from calendar weeks (docs/decisions.md §7). A week is published once,
after it ends (Monday 00:00 UTC), when at least 5 distinct people answered in it: by the
worker's hourly chore or by the first read of a period holding it, whichever comes first,
under a lock on the week's row, so exactly one publication is made across processes. The
open week is never published, and a published week never again: an answer counts to the
week it is given in, so answering again releases nothing new, and each week spends its
privacy budget once. Weeks published before this rule keep their latest revision.

Steps of five count accounts, and an admin can make accounts: so each publication's figures
also carry differential-privacy noise (kindling/wellbeing/noise.py), and the energy
average and the sentiment split each rest on their own five people.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
from collections.abc import Callable, Collection
from decimal import ROUND_HALF_UP, Decimal

from sqlalchemy import Select, and_, func, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session
from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

from kindling.errors import Forbidden, NotFound
from kindling.evidence import log as evidence
from kindling.platform import free_text, pagination, periods
from kindling.platform.access import Principal
from kindling.platform.base import utcnow
from kindling.platform.periods import Window, week_of
from kindling.wellbeing import noise
from kindling.wellbeing.events import WELLBEING_PUBLISHED, WellbeingPublished
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
    # The privacy budget its publications spent together; None unpublished, or published without noise.
    epsilon_spent: float | None


@dataclasses.dataclass(frozen=True)
class Summary:
    """An organization's published wellbeing figures over a period of calendar weeks."""

    period: str
    start: dt.datetime  # Monday 00:00 UTC of the first week
    end: dt.datetime  # Monday 00:00 UTC after the last week, exclusive
    figures: Figures
    weeks: list[Week]
    # What the period's published weeks spent together, the budget of someone who answered in
    # each of them; None when one of them was published without noise.
    epsilon_spent: float | None


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
    """Record the caller's survey response with the sentiment of its comment, in the week it
    is given in (`now`, default the present). It publishes nothing: weeks are published after
    they end (publish_closed_weeks)."""
    comment = free_text.optional(comment)
    sentiment = sentiment_of(comment)
    at = now or periods.utcnow()
    week = _locked_week(db, organization_id=caller.member_of, week_start=week_of(at))
    if week.revision and week.week_start < week_of(periods.utcnow()):
        # Its week ended and was published while the answer waited for the week's lock: the
        # answer is given now, in the open week, and the published week stays as it was.
        at = periods.utcnow()
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
    return response


def _own(caller: Principal) -> Select[WellbeingResponse]:
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


def response_body(response: WellbeingResponse) -> dict:
    """A response as its author reads it, in the API and in their copy of their data: nobody else reads it."""
    return {
        "id": response.id,
        "mood": response.mood,
        "stress": response.stress,
        "energy": response.energy,
        "comment": response.comment,
        "anonymous": response.anonymous,
        "sentiment": {"label": response.sentiment_label, "compound": response.sentiment_compound},
        "createdAt": response.created_at,
    }


def _locked_week(db: Session, *, organization_id: str, week_start: dt.date) -> WellbeingWeek:
    """The organization's row for the week, created if need be, locked until the transaction ends.

    An answer and the week's publication queue here: an answer locked first is counted by
    the publication, and one locked after sees the week published. Two publishers queue too,
    and the second finds the week published. SQLite has no row locks; its transactions take
    the database's write lock when they begin.
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


def publish_closed_weeks(
    db: Session,
    *,
    before: dt.date,
    organization_ids: Collection[str] | None = None,
    weeks: Collection[dt.date] | None = None,
) -> int:
    """Publish each week before the Monday `before` (of the given organizations and Mondays;
    all by default) that at least MINIMUM_GROUP_SIZE distinct people answered in and that was
    never published; how many weeks it published."""
    row = and_(
        WellbeingWeek.organization_id == WellbeingResponse.organization_id,
        WellbeingWeek.week_start == WellbeingResponse.week_start,
    )
    due = (
        select(WellbeingResponse.organization_id, WellbeingResponse.week_start)
        .outerjoin(WellbeingWeek, row)
        .where(
            WellbeingResponse.published_in.is_(None),
            WellbeingResponse.week_start < before,
            or_(WellbeingWeek.revision.is_(None), WellbeingWeek.revision == 0),
        )
        .group_by(WellbeingResponse.organization_id, WellbeingResponse.week_start)
        .having(func.count(func.distinct(WellbeingResponse.user_id)) >= MINIMUM_GROUP_SIZE)
        # Locks are taken in one order everywhere, so two publishers never wait on each other in a cycle.
        .order_by(WellbeingResponse.organization_id, WellbeingResponse.week_start)
    )
    if organization_ids is not None:
        due = due.where(WellbeingResponse.organization_id.in_(list(organization_ids)))
    if weeks is not None:
        due = due.where(WellbeingResponse.week_start.in_(list(weeks)))
    published = 0
    for organization_id, week_start in db.execute(due).all():
        published += _publish(db, week=_locked_week(db, organization_id=organization_id, week_start=week_start))
    return published


def chore() -> Callable[[Session], None]:
    """The worker's chore that publishes the weeks that ended."""

    def apply(db: Session) -> None:
        publish_closed_weeks(db, before=week_of(periods.utcnow()))

    return apply


def _publish(db: Session, *, week: WellbeingWeek) -> bool:
    """Publish the locked, closed week's figures, with noise, from all its responses, unless it
    is published already or fewer than MINIMUM_GROUP_SIZE people answered in it; whether it
    did. The figures go into the evidence log as published."""
    if week.revision:
        return False  # another publisher took the lock first
    of_week = (
        WellbeingResponse.organization_id == week.organization_id,
        WellbeingResponse.week_start == week.week_start,
    )
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
    if len(people) < MINIMUM_GROUP_SIZE:
        return False  # someone was erased since the week was found due
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
    week.epsilon = week.epsilon_spent = noise.EPSILON
    week.revision = 1
    week.published_at = utcnow()
    db.execute(update(WellbeingResponse).where(*of_week).values(published_in=week.revision))
    db.flush()
    evidence.append(
        db,
        organization_id=week.organization_id,
        type=WELLBEING_PUBLISHED,
        subject=("wellbeing_week", week.week_start.isoformat()),
        # Nobody's id: no one person publishes a week.
        actor_id=None,
        data=published_data(week),
    )
    return True


def organization_summary(db: Session, *, caller: Principal, window: Window) -> Summary | None:
    """The caller's organization's figures over `window`: for its admins only."""
    if not caller.is_admin:
        raise Forbidden("Only an organization admin reads its wellbeing figures")
    return summarize(db, organization_ids=[caller.member_of], window=window)[caller.member_of]


def published_data(week: WellbeingWeek) -> WellbeingPublished:
    """A published week's figures as its `wellbeing.published` event carries them."""
    return {
        "weekStart": week.week_start.isoformat(),
        "revision": week.revision,
        "respondents": week.respondents,
        "responses": week.responses,
        "averages": {"mood": week.mood_average, "stress": week.stress_average, "energy": week.energy_average},
        "energyRespondents": week.energy_respondents,
        "sentiment": None if week.positive is None else {label: getattr(week, label) for label in SENTIMENT_LABELS},
        "privacy": {
            "epsilon": week.epsilon,
            "mechanism": noise.MECHANISM if week.epsilon else None,
            "epsilonSpent": week.epsilon_spent,
        },
    }


def summarize(db: Session, *, organization_ids: Collection[str], window: Window) -> dict[str, Summary | None]:
    """Each organization's published figures over the closed calendar weeks of the window's
    period, or None when none of those weeks is published. A week of the period that is due
    is published first: this read may be the first after it ended.

    Built from the stored weeks alone, as published: averages weighted by each week's
    people, `responses` and the sentiment split added up, and `respondents` the most people
    of one week (distinct people across weeks would be a new release of the answers).
    """
    ids = list(organization_ids)
    if not ids:
        return {}
    mondays = window.weeks
    publish_closed_weeks(db, before=week_of(window.end), organization_ids=ids, weeks=mondays)
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
        spent = [week.epsilon_spent for week in weeks.values()]
        total = None if None in spent else sum(budget for budget in spent if budget is not None)
        result[organization_id] = Summary(
            period=window.period,
            start=window.weeks_start,
            end=window.weeks_end,
            figures=figures_of(list(weeks.values())),
            weeks=[
                Week(start=monday, figures=figures_of([weeks[monday]]), epsilon_spent=weeks[monday].epsilon_spent)
                if monday in weeks
                else Week(start=monday, figures=None, epsilon_spent=None)
                for monday in mondays
            ],
            epsilon_spent=total,
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
