"""Migration 0011 chains one `imported` event for every act, check-in and donation made before the log."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest
from sqlalchemy import MetaData, create_engine, insert, make_url, text
from sqlalchemy.orm import Session

from kindling.evidence import log as evidence
from kindling.evidence.chain import GENESIS_HASH, event_hash
from kindling.kindness.events import ACT_RECORDED
from kindling.platform.database import upgrade

DAY = dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.UTC)


@pytest.fixture(params=["sqlite", "postgresql"])
def empty_database(request, settings, tmp_path):
    """A database of its own, on each backend the test session has."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'before.db'}"
        return
    if not settings.database_url.startswith("postgresql"):
        pytest.skip("the test session runs on SQLite only")
    name = f"kindling_backfill_{uuid.uuid4().hex[:8]}"
    server = create_engine(make_url(settings.database_url).set(database="postgres"), isolation_level="AUTOCOMMIT")
    with server.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(settings.database_url).set(database=name).render_as_string(hide_password=False)
    finally:
        with server.connect() as connection:
            connection.execute(text(f'DROP DATABASE "{name}" WITH (FORCE)'))
        server.dispose()


def chained(session: Session, organization_id: str, events: list[dict]) -> bool:
    """Whether the events form the chain verify checks, from the genesis hash to the head row: at
    this revision the tables verify reconciles are older than the code's, so only the chain is read."""
    previous = GENESIS_HASH
    for seq, event in enumerate(events, start=1):
        if (event["seq"], event["prevHash"], event["hash"]) != (seq, previous, event_hash(event)):
            return False
        previous = event["hash"]
    head = session.execute(
        text("SELECT seq, hash FROM evidence_heads WHERE organization_id = :id"), {"id": organization_id}
    ).one()
    return tuple(head) == (len(events), previous)


def test_every_earlier_record_is_imported_in_one_chain_per_organization(empty_database):
    upgrade(empty_database, "0007")
    engine = create_engine(empty_database)
    ids = {
        name: str(uuid.uuid4())
        for name in ("org", "other", "user", "other_user", "opp", "act1", "act2", "check_in", "donation", "act3")
    }
    # The tables as they stood at 0007, not as the models describe them now.
    tables = MetaData()
    tables.reflect(engine)
    with engine.begin() as connection:
        for org, user in (("org", "user"), ("other", "other_user")):
            connection.execute(
                insert(tables.tables["organizations"]).values(
                    id=ids[org], name=org, slug=org, join_code=org, currency="EUR", created_at=DAY
                )
            )
            connection.execute(
                insert(tables.tables["users"]).values(
                    id=ids[user],
                    email=f"{user}@example.test",
                    name="Private Person",
                    password_hash="x",
                    account_type="member",
                    organization_id=ids[org],
                    role="admin",
                    active=True,
                    created_at=DAY,
                )
            )
        for name, org, user, days, level in (
            ("act1", "org", "user", 1, 3),
            ("act2", "org", "user", 3, 1),
            ("act3", "other", "other_user", 2, 5),
        ):
            connection.execute(
                insert(tables.tables["kindness_acts"]).values(
                    id=ids[name],
                    organization_id=ids[org],
                    user_id=ids[user],
                    recipient_id="someone",
                    description="Private words",
                    category="community",
                    verification_level=level,
                    media=[],
                    ripple_count=0,
                    created_at=DAY + dt.timedelta(days=days),
                    updated_at=DAY + dt.timedelta(days=days),
                )
            )
        connection.execute(
            insert(tables.tables["volunteer_opportunities"]).values(
                id=ids["opp"],
                organization_id=ids["org"],
                created_by=ids["user"],
                title="Clean-up",
                starts_at=DAY,
                ends_at=DAY + dt.timedelta(hours=2),
                latitude=51.5,
                longitude=-0.12,
                radius_meters=200,
                created_at=DAY,
            )
        )
        connection.execute(
            insert(tables.tables["volunteer_check_ins"]).values(
                id=ids["check_in"],
                opportunity_id=ids["opp"],
                organization_id=ids["org"],
                user_id=ids["user"],
                checked_in_at=DAY + dt.timedelta(days=2),
                latitude=51.5,
                longitude=-0.12,
                distance_meters=12.345,
                verified=True,
                hours=2.0,
            )
        )
        connection.execute(
            insert(tables.tables["donations"]).values(
                id=ids["donation"],
                organization_id=ids["org"],
                user_id=ids["user"],
                amount=1500,
                currency="EUR",
                recipient_name="Private Shelter",
                note="private",
                status="succeeded",
                created_at=DAY,
                updated_at=DAY,
            )
        )
    upgrade(empty_database, "0011")
    with Session(engine) as session:
        events, _ = evidence.list_events(session, organization_id=ids["org"])
        other, _ = evidence.list_events(session, organization_id=ids["other"])
        assert len(events) == 4 and chained(session, ids["org"], events)
        assert chained(session, ids["other"], other)
    # Verification and appends read the tables as they are now (the tree of a later revision, say):
    # the later migrations chain on from these events.
    upgrade(empty_database)
    with Session(engine) as session:
        result = evidence.verify(session, organization_id=ids["org"])
        head = result["head"]
        assert result["intact"] and result["consistent"], result["mismatches"]
        assert head["seq"] >= 4 and result["tree"]["size"] == head["seq"]
        assert evidence.verify(session, organization_id=ids["other"])["intact"]
        later, _ = evidence.list_events(session, organization_id=ids["org"])
        assert later[:4] == events
        # The log goes on from the imported head.
        evidence.append(
            session,
            organization_id=ids["org"],
            type=ACT_RECORDED,
            subject=("act", "new"),
            actor_id=None,
            data={},
        )
        appended = evidence.list_events(session, organization_id=ids["org"], limit=1000)[0][-1]
        assert appended["seq"] == head["seq"] + 1 and appended["prevHash"] == head["hash"]
        assert evidence.verify(session, organization_id=ids["org"])["intact"]
        session.rollback()
    engine.dispose()
    assert {e["type"] for e in events + other} == {"imported"} and all(e["actorId"] is None for e in events)
    # Oldest record first, each with the time it claims.
    assert [(e["subject"]["kind"], e["subject"]["id"]) for e in events] == [
        ("donation", ids["donation"]),
        ("act", ids["act1"]),
        ("check_in", ids["check_in"]),
        ("act", ids["act2"]),
    ]
    assert [e["data"] for e in events] == [
        {"recordedAt": "2026-03-02T09:00:00.000000Z", "amount": 1500, "currency": "EUR", "status": "succeeded"},
        {"recordedAt": "2026-03-03T09:00:00.000000Z", "requestedLevel": 3, "category": "community"},
        {
            "recordedAt": "2026-03-04T09:00:00.000000Z",
            "opportunityId": ids["opp"],
            "distanceMeters": 12.3,
            "verified": True,
        },
        {"recordedAt": "2026-03-05T09:00:00.000000Z", "requestedLevel": 1, "category": "community"},
    ]
    assert [e["subject"]["id"] for e in other] == [ids["act3"]] and other[0]["seq"] == 1
    assert "Private" not in str(events + other)


def test_0014_keeps_existing_hours_and_logs_every_counted_fact(empty_database):
    upgrade(empty_database, "0011")
    engine = create_engine(empty_database)
    ids = {name: str(uuid.uuid4()) for name in ("org", "user", "opp", "act", "check_in", "donation", "decision")}
    tables = MetaData()
    tables.reflect(engine)
    with engine.begin() as connection:
        connection.execute(
            insert(tables.tables["organizations"]).values(
                id=ids["org"], name="org", slug="org", join_code="org", currency="EUR", created_at=DAY
            )
        )
        connection.execute(
            insert(tables.tables["users"]).values(
                id=ids["user"],
                email="user@example.test",
                name="Private Person",
                password_hash="x",
                account_type="member",
                organization_id=ids["org"],
                role="admin",
                active=True,
                created_at=DAY,
            )
        )
        # Records made after 0011 by the code of the time: a level-3 act approved, a check-in that counted
        # the whole 14-day opportunity, a pending donation (which that code did not log).
        connection.execute(
            insert(tables.tables["kindness_acts"]).values(
                id=ids["act"],
                organization_id=ids["org"],
                user_id=ids["user"],
                recipient_id="someone",
                description="Private words",
                category="community",
                verification_level=3,
                verified_level=3,
                verification_status="verified",
                media=[],
                ripple_count=0,
                created_at=DAY,
                updated_at=DAY,
            )
        )
        connection.execute(
            insert(tables.tables["verification_decisions"]).values(
                id=ids["decision"],
                act_id=ids["act"],
                level=3,
                decision="approve",
                decided_by=ids["user"],
                decided_at=DAY,
            )
        )
        connection.execute(
            insert(tables.tables["volunteer_opportunities"]).values(
                id=ids["opp"],
                organization_id=ids["org"],
                created_by=ids["user"],
                title="Fortnight",
                starts_at=DAY,
                ends_at=DAY + dt.timedelta(days=14),
                latitude=51.5,
                longitude=-0.12,
                radius_meters=200,
                require_code=False,
                code_secret="JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP",
                created_at=DAY,
            )
        )
        connection.execute(
            insert(tables.tables["volunteer_check_ins"]).values(
                id=ids["check_in"],
                opportunity_id=ids["opp"],
                organization_id=ids["org"],
                user_id=ids["user"],
                checked_in_at=DAY + dt.timedelta(days=13),
                latitude=51.5,
                longitude=-0.12,
                distance_meters=3.0,
                location_verified=True,
                verified=True,
                hours=336.0,
            )
        )
        connection.execute(
            insert(tables.tables["donations"]).values(
                id=ids["donation"],
                organization_id=ids["org"],
                user_id=ids["user"],
                amount=1500,
                currency="EUR",
                recipient_name="Private Shelter",
                status="pending",
                created_at=DAY,
                updated_at=DAY,
            )
        )
        # A week published before noise: 0017 turns its sums into the averages it was served with.
        connection.execute(
            insert(tables.tables["wellbeing_weeks"]).values(
                organization_id=ids["org"],
                week_start=DAY.date(),
                revision=1,
                published_at=DAY,
                respondents=5,
                responses=6,
                mood_total=21,
                stress_total=13,
                energy_total=0,
                energy_responses=0,
                positive=1,
                neutral=0,
                negative=0,
            )
        )
    upgrade(empty_database, "0014")
    with Session(engine) as session:
        events, _ = evidence.list_events(session, organization_id=ids["org"])
    # Verify reconciles the tables as the code describes them, after every later revision.
    upgrade(empty_database)
    with Session(engine) as session:
        result = evidence.verify(session, organization_id=ids["org"])
        spent = session.execute(text("SELECT epsilon_spent FROM wellbeing_weeks")).scalar_one()
        assert evidence.list_events(session, organization_id=ids["org"])[0][: len(events)] == events
    engine.dispose()
    # Published without noise: no budget bounds what it released.
    assert spent is None
    assert result["intact"] and result["consistent"], result["mismatches"]
    assert [e["type"] for e in events] == ["imported"] * 4
    act, check_in, donation, week = (e["data"] for e in events)
    assert act["decisions"] == {"3": "approve"} and act["recordedAt"] == "2026-03-02T09:00:00.000000Z"
    assert check_in["hours"] == 336.0 and check_in["userId"] == ids["user"]
    assert donation == {
        "recordedAt": "2026-03-02T09:00:00.000000Z",
        "amount": 1500,
        "currency": "EUR",
        "status": "pending",
    }
    # The week in the shape of its `wellbeing.published` event, as published (no noise then).
    assert week == {
        "weekStart": "2026-03-02",
        "revision": 1,
        "respondents": 5,
        "responses": 6,
        "averages": {"mood": 3.5, "stress": 2.17, "energy": None},
        "energyRespondents": None,
        "sentiment": {"positive": 1, "neutral": 0, "negative": 0},
        "privacy": {"epsilon": None, "mechanism": None},
    }
