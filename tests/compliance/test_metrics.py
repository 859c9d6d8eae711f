"""The metrics layer the reports and the export share: its figures, windows and queries."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from sqlalchemy import event, select

from kindling.compliance import METRICS, InvalidFrameworks, frameworks, metrics
from kindling.compliance import reports as compliance
from kindling.compliance.metrics import Evidence
from kindling.config import Settings
from kindling.platform import money, periods
from kindling.platform.base import utcnow
from kindling.platform.exports import csv_text, neutralised
from kindling.web.app import create_app
from kindling.wellbeing.models import WellbeingWeek


@pytest.fixture
def statements(db):
    """The SQL statements the test's session runs, from the moment the fixture is used."""
    seen: list[str] = []
    connection = db.connection()

    def record(_conn, _cursor, statement, *_args):
        seen.append(statement)

    event.listen(connection, "before_cursor_execute", record)
    yield seen
    event.remove(connection, "before_cursor_execute", record)


def test_window_lengths():
    now = dt.datetime(2026, 11, 21, 12, tzinfo=dt.UTC)
    for period, days in {"week": 7, "month": 30, "quarter": 90, "year": 365}.items():
        window = periods.window(period, now=now)
        assert (window.period, window.end, window.end - window.start) == (period, now, dt.timedelta(days=days))
    assert periods.window(now=now).period == "month"


def test_activity_of_many_organizations_is_two_statements(db, make, statements):
    admins = [make.admin() for _ in range(4)]
    for n, admin in enumerate(admins):
        for level in range(1, n + 2):
            make.activity.act(admin, level=level)
    make.activity.check_in(admins[0], admins[0], hours=2.5)
    make.activity.donation(admins[1], amount=1999)
    statements.clear()

    figures = metrics.activity(db, organization_ids=[a.organization_id for a in admins], window=periods.window())

    # The grouped figures, and the amounts in other currencies (none here: no quote is looked up).
    assert len(statements) == 2
    assert [figures[a.organization_id].kindness for a in admins] == [
        Evidence(0, 1),
        Evidence(0, 2),
        Evidence(1, 3),
        Evidence(2, 4),
    ]
    assert [figures[a.organization_id].compliance_rate for a in admins] == [50.0, 33.3, 33.3, 50.0]
    assert figures[admins[0].organization_id].volunteer_hours == 2.5
    assert figures[admins[0].organization_id].volunteer_participants == 1
    assert figures[admins[1].organization_id].donated_minor_units == 1999
    assert figures[admins[3].organization_id].check_ins == Evidence(0, 0)


def test_activity_by_category(db, make):
    admin = make.admin()
    make.activity.act(admin, level=3, category="community")
    make.activity.act(admin, level=2, category="community")
    make.activity.act(admin, level=5, category="wellbeing")

    figures = metrics.activity(db, organization_ids=[admin.organization_id], window=periods.window())[
        admin.organization_id
    ]

    assert figures.kindness_by_category == {
        "peer_recognition": Evidence(0, 0),
        "community": Evidence(1, 2),
        "wellbeing": Evidence(1, 1),
    }


@pytest.mark.parametrize(
    ("evidenced", "records", "rate"), [(1, 16, 6.3), (1, 8, 12.5), (2, 3, 66.7), (1, 3, 33.3), (7, 7, 100.0)]
)
def test_the_rate_is_a_percentage_rounded_half_up(db, make, evidenced, records, rate):
    admin = make.admin()
    for n in range(records):
        make.activity.act(admin, level=3 if n < evidenced else 2)

    figures = metrics.activity(db, organization_ids=[admin.organization_id], window=periods.window())

    assert figures[admin.organization_id].compliance_rate == rate


def test_the_window_is_closed_at_both_ends(db, make):
    admin = make.admin()
    act = make.activity.act(admin, days_ago=0)
    at_start = periods.window("week", now=act.created_at + dt.timedelta(days=7))
    at_end = periods.window("week", now=act.created_at)
    after = periods.window("week", now=act.created_at + dt.timedelta(days=7, microseconds=1))
    ids = [admin.organization_id]

    assert [
        metrics.activity(db, organization_ids=ids, window=w)[admin.organization_id].kindness.total
        for w in (at_start, at_end, after)
    ] == [1, 1, 0]


def test_no_organizations_no_queries(db, statements):
    assert metrics.activity(db, organization_ids=[], window=periods.window()) == {}
    assert metrics.wellbeing(db, organization_ids=[], window=periods.window()) == {}
    assert statements == []


def test_wellbeing_figures_are_the_published_weeks(db, make):
    admin = make.admin()
    members = [make.member(admin) for _ in range(6)]
    ids = [admin.organization_id]
    for member in members[:4]:
        make.activity.response(member, days_ago=7, mood=5, stress=1)
    members[3].user.active = False

    survey = metrics.wellbeing(db, organization_ids=ids, window=periods.window())[admin.organization_id]

    # Four people answered: nothing is published, not even how many answered.
    assert (survey.respondents, survey.active_members, survey.responses) == (0, 6, 0)
    assert (survey.mood_average, survey.stress_average) == (None, None)
    assert survey.suppressed

    make.activity.response(members[4], days_ago=7, mood=1, stress=5)
    survey = metrics.wellbeing(db, organization_ids=ids, window=periods.window())[admin.organization_id]
    # The published week as stored, noise included: five people, one of whom has left since, of six active members.
    week = db.scalars(select(WellbeingWeek).where(WellbeingWeek.organization_id == admin.organization_id)).one()
    assert (survey.respondents, survey.active_members, survey.responses) == (week.respondents, 6, week.responses)
    assert (survey.mood_average, survey.stress_average) == (week.mood_average, week.stress_average)
    assert not survey.suppressed


def test_every_metric_of_the_vocabulary_has_a_measure():
    assert compliance.MEASURES.keys() == METRICS.keys()


def test_report_for_a_fixed_moment(db, make):
    admin = make.admin()
    make.activity.act(admin, level=3, category="wellbeing")
    now = utcnow() + dt.timedelta(days=10)

    report = compliance.build_report(
        db, organization_id=admin.organization_id, framework_id="gri", period="week", now=now
    )

    assert report.generated_at == now and report.window.start == now - dt.timedelta(days=7)
    assert report.compliance_rate == 0.0
    assert (
        compliance.build_report(db, organization_id=admin.organization_id, framework_id="gri", now=now).compliance_rate
        == 100.0
    )


@pytest.mark.parametrize(
    ("minor", "currency", "major"),
    [
        (2599, "USD", Decimal("25.99")),
        (2599, "JPY", Decimal("2599")),
        (2599, "KWD", Decimal("2.599")),
        (5, "EUR", Decimal("0.05")),
    ],
)
def test_major_units_follow_the_currency_exponent(minor, currency, major):
    assert money.major_units(minor, currency) == major


@pytest.mark.parametrize("cell", ["=1+1", "+1", "-1", "@A1", "\t1", "\r1"])
def test_formula_triggers_are_neutralised(cell):
    assert neutralised(cell) == "'" + cell


@pytest.mark.parametrize(
    ("cell", "text"), [("Acme", "Acme"), (12.5, "12.5"), (None, ""), ("a=b", "a=b"), ("'=x", "'=x")]
)
def test_other_cells_are_left_alone(cell, text):
    assert neutralised(cell) == text


def test_csv_text_is_rfc_4180():
    assert csv_text(["a", "b"], [['x,"y"', 1], ["-", None]]) == 'a,b\r\n"x,""y""",1\r\n\'-,\r\n'


def test_a_broken_framework_file_stops_the_app_at_start(monkeypatch, settings):
    def broken(_text):
        raise InvalidFrameworks(["framework 'gri' indicator 1 has unknown metric 'hours'"])

    monkeypatch.setattr(frameworks, "read_frameworks", broken)
    frameworks.load_frameworks.cache_clear()
    try:
        with pytest.raises(InvalidFrameworks, match="unknown metric 'hours'"):
            create_app(Settings(database_url=settings.database_url, environment="test"))
    finally:
        monkeypatch.undo()
        frameworks.load_frameworks.cache_clear()
