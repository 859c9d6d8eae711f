"""Wellbeing aggregates: a week is published once, after it ends, from at least five people (docs/decisions.md §7).

The clock is the test's: answers are recorded at chosen moments through the service, and
aggregates read at chosen moments through the same functions the API answers with. The
answers behind a figure are the published answers of its weeks, which the service marks
as it publishes them.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import threading
from decimal import ROUND_HALF_UP, Decimal

from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from sqlalchemy import func, select

from kindling.evidence.models import EvidenceEvent
from kindling.platform import periods
from kindling.platform.cache import MemoryCache
from kindling.platform.database import make_engine, make_session_factory, upgrade
from kindling.wellbeing import service as wellbeing
from kindling.wellbeing.models import WellbeingResponse, WellbeingWeek
from kindling.wellbeing.views import summary_body
from tests import factories
from tests.factories.principals import principal

PERIODS = tuple(periods.PERIOD_DAYS)
# A Monday, 00:00 UTC.
BASE = dt.datetime(2031, 3, 3, tzinfo=dt.UTC)
SUPPRESSED = {"data": None, "suppressed": True, "minimumGroupSize": 5}


def at(week: int, hours: float = 30) -> dt.datetime:
    """A moment `hours` into the `week`th week after BASE."""
    return BASE + dt.timedelta(weeks=week, hours=hours)


def bodies(client, admin) -> dict[str, bytes]:
    """The organization aggregates of every period, exactly as the API sends them."""
    answers = {}
    for period in PERIODS:
        response = client.get(
            "/api/wellbeing", params={"scope": "organization", "period": period}, headers=admin.headers
        )
        assert response.status_code == 200
        answers[period] = response.content
    return answers


def read(db, admin, period: str, now: dt.datetime) -> tuple[dict | None, dict[str, str]]:
    """The aggregate the API would give at `now`, and the published answers behind it (id: person)."""
    window = periods.window(period, now=now)
    summary = wellbeing.summarize(db, organization_ids=[admin.organization_id], window=window)[admin.organization_id]
    behind = dict(
        db.execute(
            select(WellbeingResponse.id, WellbeingResponse.user_id).where(
                WellbeingResponse.organization_id == admin.organization_id,
                WellbeingResponse.week_start.in_(window.weeks),
                WellbeingResponse.published_in.is_not(None),
            )
        ).all()
    )
    return (summary_body(summary) if summary else None), behind


def people_between(first: dict[str, str], second: dict[str, str]) -> set[str]:
    """The distinct people whose answers are behind one of two figures and not the other."""
    return {first.get(answer) or second[answer] for answer in first.keys() ^ second.keys()}


def test_a_week_is_published_once_after_it_ends(client, make, db, monkeypatch):
    # The test holds the clock, and moves it; the API takes no time.
    clock = [at(0)]
    monkeypatch.setattr(periods, "utcnow", lambda: clock[0])
    admin = make.admin()
    refused = client.get(
        "/api/wellbeing", params={"scope": "organization", "now": BASE.isoformat()}, headers=admin.headers
    )
    assert refused.status_code == 400
    people = [make.member(admin) for _ in range(9)]
    # Nine people answer in the open week, again and again: it is never published.
    for _ in range(3):
        for n, person in enumerate(people):
            make.response(person, mood=1 + n % 5)
            assert all(json.loads(body) == SUPPRESSED for body in bodies(client, admin).values())
    wellbeing.chore()(db)
    assert publications(db) == []
    assert db.scalar(select(func.count()).select_from(WellbeingWeek).where(WellbeingWeek.revision > 0)) == 0

    # The week ended an hour ago: the first read publishes it, from all its answers.
    clock[0] = at(1, hours=1)
    published = bodies(client, admin)
    first = stored_week(db, BASE.date())
    assert (first.revision, first.epsilon, first.epsilon_spent) == (1, 1.0, 1.0)
    for body in published.values():
        data = json.loads(body)["data"]
        assert_served_as_stored(data, first)
        assert data["privacy"] == {"epsilon": 1.0, "mechanism": "laplace", "epsilonSpent": 1.0}
        assert [week["epsilonSpent"] for week in data["byWeek"]][-1] == 1.0
    assert publications(db) == [wellbeing.published_data(first)]
    assert set(db.scalars(select(WellbeingResponse.published_in))) == {1}

    # Answers in the new week, and one that waited for the lock of the week that ended, change nothing
    # published: the late one is given now, in the open week; the worker finds nothing due.
    for person in people:
        make.response(person, mood=5)
    late = make.response(people[0], mood=5, created_at=at(0, hours=167))
    assert (late.week_start, late.created_at) == (periods.week_of(clock[0]), clock[0])
    wellbeing.chore()(db)
    assert bodies(client, admin) == published
    assert len(publications(db)) == 1

    # A week later the worker publishes the second week, once; the first stays exactly as it was.
    clock[0] = at(2, hours=1)
    wellbeing.chore()(db)
    second = stored_week(db, BASE.date() + periods.WEEK)
    assert second.revision == 1 and stored_week(db, BASE.date()).revision == 1
    assert [data["weekStart"] for data in publications(db)] == [BASE.date().isoformat(), second.week_start.isoformat()]
    moved = json.loads(bodies(client, admin)["month"])["data"]["byWeek"]
    assert moved[-2] == json.loads(published["month"])["data"]["byWeek"][-1]
    assert (moved[-1]["respondents"], moved[-1]["epsilonSpent"]) == (second.respondents, 1.0)
    assert len(publications(db)) == 2


def publications(db) -> list[dict]:
    """The data of every `wellbeing.published` event, in log order."""
    return list(
        db.scalars(
            select(EvidenceEvent.data).where(EvidenceEvent.type == "wellbeing.published").order_by(EvidenceEvent.seq)
        )
    )


def stored_week(db, monday: dt.date) -> WellbeingWeek:
    return db.scalars(
        select(WellbeingWeek).where(WellbeingWeek.week_start == monday).execution_options(populate_existing=True)
    ).one()


def assert_served_as_stored(data: dict, week: WellbeingWeek) -> None:
    """A one-week figure is the week's stored publication, noise included; two people commented, fewer than five."""
    assert (data["respondents"], data["responses"]) == (week.respondents, week.responses)
    assert (data["averages"]["mood"], data["averages"]["stress"]) == (week.mood_average, week.stress_average)
    assert data["sentiment"]["suppressed"] is True and week.positive is None


def test_a_week_that_never_reached_five_stays_suppressed(db, make):
    admin = make.admin()
    people = [make.member(admin) for _ in range(9)]
    for person in people[:4]:
        make.response(person, mood=1, created_at=at(0))
        make.response(person, mood=1, created_at=at(0, hours=100))
    for week in (1, 3):
        for person in people[4:]:
            make.response(person, mood=5, created_at=at(week))

    for week, period in itertools.product(range(0, 60), PERIODS):
        body, behind = read(db, admin, period, at(week))
        assert all(db.get(WellbeingResponse, answer).week_start != BASE.date() for answer in behind)
        if body is None:
            continue
        first_week = {w["weekStart"]: w for w in body["byWeek"]}.get(BASE.date().isoformat())
        if first_week is not None:
            assert (first_week["suppressed"], first_week["respondents"], first_week["averages"]) == (True, None, None)
        published = [w for w in body["byWeek"] if not w["suppressed"]]
        assert body["respondents"] == max(w["respondents"] for w in published)
    assert db.scalar(select(WellbeingWeek.revision).where(WellbeingWeek.week_start == BASE.date())) == 0


def test_month_minus_week_and_quarter_minus_month_never_isolate_fewer_than_five(db, make):
    admin = make.admin()
    people = [make.member(admin) for _ in range(12)]
    answers = {
        0: people[0:5],  # published once it ends
        2: people[0:4],  # never published
        5: people[3:9] + people[3:4],  # six people, one of them twice
        12: people[5:10] + people[0:5],  # ten people
        13: people[0:7],  # seven people
        14: people[7:11],  # never published
    }
    for week, who in answers.items():
        for hour, person in enumerate(who):
            make.response(person, mood=1 + hour % 5, created_at=at(week, hours=hour))

    compared = 0
    for week in range(0, 20):
        figures = {period: read(db, admin, period, at(week, hours=150)) for period in PERIODS}
        for smaller, larger in (("week", "month"), ("month", "quarter"), ("quarter", "year")):
            (small, small_behind), (large, large_behind) = figures[smaller], figures[larger]
            assert small_behind.keys() <= large_behind.keys()
            isolated = people_between(small_behind, large_behind)
            assert len(isolated) == 0 or len(isolated) >= 5, (week, smaller, larger, len(isolated))
            compared += bool(isolated)
            if small is not None:
                small_weeks = {w["weekStart"] for w in small["byWeek"]}
                assert large["responses"] - small["responses"] == sum(
                    w["responses"] or 0 for w in large["byWeek"] if w["weekStart"] not in small_weeks
                )
    assert compared > 10


@st.composite
def events(draw):
    """Answers (person, week, figures) and reads (period, week) in any order."""
    answer = st.tuples(
        st.just("answer"),
        st.integers(0, 9),
        st.integers(0, 2),
        st.integers(1, 5),
        st.integers(1, 5),
        st.sampled_from([None, "Great week", "Awful week", "Tuesday"]),
    )
    query = st.tuples(st.just("read"), st.sampled_from(PERIODS), st.integers(0, 4), st.integers(0, 167))
    return draw(st.lists(st.one_of(answer, answer, query), min_size=20, max_size=60))


def test_no_two_answers_of_the_api_differ_by_fewer_than_five_people(db, make):
    admin = make.admin()
    people = [make.member(admin) for _ in range(10)]
    published_reads = []

    # Derandomized: the same 40 sequences on every run, so the coverage asserted below holds every time.
    @hypothesis_settings(
        max_examples=40,
        derandomize=True,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(events())
    def check(sequence):
        savepoint = db.begin_nested()
        try:
            seen: list[tuple[str, int, bytes | None, dict[str, str]]] = []
            for hour, event in enumerate(sequence):
                if event[0] == "answer":
                    _, person, week, mood, stress, comment = event
                    make.response(
                        people[person], mood=mood, stress=stress, comment=comment, created_at=at(week, hours=hour % 160)
                    )
                    continue
                _, period, week, hours = event
                body, behind = read(db, admin, period, at(week, hours=hours))
                seen.append((period, week, json.dumps(body, default=str).encode(), behind))
                published_reads.extend([1] if body else [])
                _assert_built_from(body, behind, db)
            for first, second in itertools.combinations(seen, 2):
                isolated = people_between(first[3], second[3])
                assert len(isolated) == 0 or len(isolated) >= 5
                if first[:2] == second[:2] and not isolated:
                    assert first[2] == second[2]  # the same read of the same answers: the same bytes
        finally:
            savepoint.rollback()

    check()
    assert len(published_reads) > 100, len(published_reads)


def _assert_built_from(body: dict | None, behind: dict[str, str], db) -> None:
    """The figures are those of exactly the answers said to be behind them."""
    if body is None:
        assert behind == {}
        return
    weeks_behind = {db.get(WellbeingResponse, answer).week_start.isoformat() for answer in behind}
    published = [week for week in body["byWeek"] if not week["suppressed"]]
    assert {str(week["weekStart"]) for week in published} == weeks_behind
    assert body["responses"] == sum(week["responses"] for week in published)
    assert body["respondents"] == max(week["respondents"] for week in published)
    people = sum(week["respondents"] for week in published)
    mood = sum(Decimal(repr(week["averages"]["mood"])) * week["respondents"] for week in published) / people
    assert body["averages"]["mood"] == float(mood.quantize(Decimal("0.01"), ROUND_HALF_UP))


def test_reads_workers_and_answers_at_once_publish_a_week_exactly_once(fresh_database_url, monkeypatch):
    """The first reads after the week ends and the worker's chore race to publish it, each in a
    session of its own (a connection, as another process would hold), while late answers stamped
    in that week wait for its lock: one publication, and every answer counted once."""
    monkeypatch.setattr(periods, "utcnow", lambda: at(1, hours=1))
    upgrade(fresh_database_url)
    engine = make_engine(fresh_database_url)
    sessions = make_session_factory(engine)
    try:
        with sessions() as setup:
            make = factories.Factories(setup, MemoryCache())
            admin = make.admin()
            people = [make.member(admin) for _ in range(10)]
            for person in people[:7]:
                make.response(person, created_at=at(0))
            setup.commit()

        start = threading.Barrier(9)
        failures, read = [], []

        def reader():
            with sessions() as session:
                start.wait()
                window = periods.window("week")
                summary = wellbeing.summarize(session, organization_ids=[admin.organization_id], window=window)
                session.commit()
                read.append(summary[admin.organization_id].figures)

        def worker():
            with sessions() as session:
                start.wait()
                wellbeing.chore()(session)
                session.commit()

        def late(person):
            with sessions() as session:
                start.wait()
                wellbeing.create_response(session, caller=principal(person), mood=3, stress=3, now=at(0, hours=167))
                session.commit()

        def run(task, *args):
            try:
                task(*args)
            except Exception as error:  # reported below, in the test's own thread
                failures.append(error)

        tasks = [(reader,)] * 3 + [(worker,)] * 3 + [(late, person) for person in people[7:]]
        threads = [threading.Thread(target=run, args=task) for task in tasks]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert failures == []

        with sessions() as session:
            assert len(publications(session)) == 1
            week = stored_week(session, BASE.date())
            assert week.revision == 1
            answers = session.execute(
                select(WellbeingResponse.week_start, WellbeingResponse.created_at, WellbeingResponse.published_in)
            ).all()
            # Each late answer either took the lock first and is counted, or is given now, in the open week.
            assert len(answers) == 10
            for week_start, created_at, published_in in answers:
                assert (week_start, published_in) in {(BASE.date(), 1), (BASE.date() + periods.WEEK, None)}
                assert week_start == BASE.date() or created_at == at(1, hours=1)
        # Every reader served the one publication.
        assert read == [wellbeing.figures_of([week])] * 3
    finally:
        engine.dispose()
