"""Writes sent later: on PostgreSQL they ride with the transaction's next statement, or with its
commit, and the transaction reads and writes as if each had been sent alone; on SQLite they run
at once."""

from __future__ import annotations

import typing

import pytest
import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.orm import Session

from kindling.platform import write_behind

_metadata = sa.MetaData()
_notes = sa.Table(
    "write_behind_notes",
    _metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("text", sa.String(100)),
    sa.Column("data", sa.JSON),
    sa.Column("raw", sa.LargeBinary),
    prefixes=["TEMPORARY"],
)
_INSERT = sa.insert(_notes)
_ALL = sa.select(_notes.c.id, _notes.c.text, _notes.c.data, _notes.c.raw).order_by(_notes.c.id)
TRICKY = "100% 'sure'; %(id)s \\ end"


@pytest.fixture
def connection(engine):
    with engine.connect() as connection:
        _metadata.create_all(connection)
        connection.commit()
        yield connection


@pytest.fixture
def trips(engine):
    """The statements the engine sent to the database, as sent."""
    sent: list[str] = []
    event.listen(engine, "after_cursor_execute", lambda *args: sent.append(args[2]))
    return sent


def postgresql(engine) -> bool:
    return engine.dialect.name == "postgresql"


def test_a_write_sent_later_is_read_by_the_next_statement_which_carries_it(connection, engine, trips):
    write_behind.send_later(connection, _INSERT, [{"id": 1, "text": TRICKY}, {"id": 2, "text": "two"}])
    write_behind.send_later(connection, sa.update(_notes).where(_notes.c.id == 2).values(text="2%"), {})
    trips.clear()
    rows = connection.execute(_ALL.where(_notes.c.id >= sa.bindparam("low")), {"low": 1}).all()
    assert [(row.id, row.text) for row in rows] == [(1, TRICKY), (2, "2%")]
    if postgresql(engine):
        # One round trip: the three writes in front of the select.
        assert len(trips) == 1 and trips[0].count(";\n") == 3


@pytest.mark.parametrize("options", [{}, {"no_parameters": True}])
def test_values_of_every_type_arrive_as_sent(connection, options):
    sent = {"id": 1, "text": TRICKY, "data": {"a": [1, "%s"]}, "raw": b"\x00%\xff"}
    write_behind.send_later(connection, _INSERT, sent)
    # A statement without parameters carries them too, whether or not psycopg2 formats it.
    connection.execution_options(**options).exec_driver_sql("SELECT 1")
    row = connection.execute(_ALL).one()
    assert row._asdict() == sent


def test_what_is_left_is_committed_with_the_transaction(connection, engine, trips):
    write_behind.send_later(connection, _INSERT, {"id": 1, "text": TRICKY})
    connection.commit()
    if postgresql(engine):
        assert trips[-1] != "COMMIT" and "INSERT INTO write_behind_notes" in trips[-1]
    connection.rollback()  # a new transaction: only what was committed is there
    assert connection.execute(_ALL).all()[0].text == TRICKY


def test_a_rollback_forgets_what_was_not_sent(connection):
    write_behind.send_later(connection, _INSERT, {"id": 1, "text": "lost"})
    connection.rollback()
    write_behind.send_later(connection, _INSERT, {"id": 2, "text": "kept"})
    connection.commit()
    assert [row.text for row in connection.execute(_ALL)] == ["kept"]


def test_a_savepoint_rolled_back_takes_the_writes_sent_in_it(connection):
    write_behind.send_later(connection, _INSERT, {"id": 1, "text": "before"})
    savepoint = connection.begin_nested()
    write_behind.send_later(connection, _INSERT, {"id": 2, "text": "inside"})
    savepoint.rollback()
    connection.commit()
    assert [row.text for row in connection.execute(_ALL)] == ["before"]


def test_a_failing_write_fails_the_statement_that_carries_it_and_nothing_is_kept(connection, engine):
    write_behind.send_later(connection, _INSERT, {"id": 1, "text": "first"})
    connection.commit()
    write_behind.send_later(connection, _INSERT, {"id": 2, "text": "second"})
    with pytest.raises(sa.exc.IntegrityError):
        write_behind.send_later(connection, _INSERT, {"id": 1, "text": "the same id"})
        connection.execute(_ALL).all()
    connection.rollback()
    assert [row.text for row in connection.execute(_ALL)] == ["first"]


def test_writes_before_an_executemany_or_a_server_side_cursor_are_sent_alone_first(connection):
    write_behind.send_later(connection, _INSERT, {"id": 1, "text": "one"})
    connection.execute(
        sa.update(_notes).where(_notes.c.id == sa.bindparam("key")).values(text="x"), [{"key": 1}, {"key": 1}]
    )
    write_behind.send_later(connection, _INSERT, {"id": 2, "text": "two"})
    streamed = connection.execution_options(yield_per=1).execute(_ALL)
    assert [row.text for row in streamed] == ["x", "two"]


def test_a_failing_write_left_for_the_commit_fails_the_commit_and_nothing_is_kept(connection):
    write_behind.send_later(connection, _INSERT, {"id": 1, "text": "first"})
    connection.commit()
    with pytest.raises(sa.exc.IntegrityError):
        # On SQLite the write itself fails, at once.
        write_behind.send_later(connection, _INSERT, [{"id": 2, "text": "second"}, {"id": 1, "text": "the same id"}])
        connection.commit()
    connection.rollback()
    write_behind.send_later(connection, _INSERT, {"id": 3, "text": "third"})
    connection.commit()
    assert [row.text for row in connection.execute(_ALL)] == ["first", "third"]


def _shared_row(engine) -> tuple[sa.Table, list[tuple], typing.Callable]:
    """A table other connections see, what another transaction read of its row 1 with NOWAIT,
    and the listener that reads it so."""
    shared = sa.Table(
        "write_behind_shared",
        sa.MetaData(),
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("text", sa.String(20)),
    )
    shared.create(engine, checkfirst=True)
    seen: list[tuple] = []

    def from_another_transaction(_connection) -> None:
        with engine.connect() as other:
            locked = sa.select(shared.c.text).where(shared.c.id == 1).with_for_update(nowait=True)
            seen.append(tuple(other.execute(locked).scalars()))

    return shared, seen, from_another_transaction


def test_the_writes_left_for_the_commit_release_their_locks_with_it_in_one_round_trip(engine):
    """The COMMIT travels with the last writes, so the rows they locked are free once that one
    string has run: a lock held until one round trip later keeps every writer behind it waiting."""
    if not postgresql(engine):
        pytest.skip("SQLite runs each write at once, and holds one lock for the whole database")
    shared, seen, from_another_transaction = _shared_row(engine)
    try:
        with engine.connect() as connection:
            connection.execute(sa.insert(shared), {"id": 1, "text": "before"})
            connection.commit()
            write_behind.send_later(connection, sa.update(shared).values(text="after"), {})
            # Runs after the write-behind's own listener, which the engine was made with, and
            # before the driver's commit.
            event.listen(engine, "commit", from_another_transaction)
            try:
                connection.commit()
            finally:
                event.remove(engine, "commit", from_another_transaction)
            # The driver's own COMMIT closed an empty transaction, without a warning.
            assert connection.connection.dbapi_connection.notices == []  # type: ignore[union-attr]
        assert seen == [("after",)]
    finally:
        shared.drop(engine)


def test_writes_left_for_the_commit_of_an_autocommit_connection_leave_no_transaction_open(engine):
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        _metadata.create_all(connection)
        write_behind.send_later(connection, _INSERT, {"id": 1, "text": "one"})
        connection.commit()
        if postgresql(engine):
            driver = connection.connection.dbapi_connection
            assert driver.info.transaction_status == 0  # type: ignore[union-attr]  # idle: no block left open
        assert [row.text for row in connection.execute(_ALL)] == ["one"]


def test_a_read_after_the_commit_travels_in_the_string_that_commits(engine, trips):
    """`commit_then_read`: the rows the writes locked are free once the one string has run, and
    the read sees what the transaction committed."""
    shared, seen, from_another_transaction = _shared_row(engine)
    try:
        with Session(engine) as session:
            session.execute(sa.insert(shared), {"id": 1, "text": "before"})
            session.commit()
            write_behind.send_later(session, sa.update(shared).values(text="100% after"), {})
            read = sa.select(shared.c.text, sa.literal("50%")).where(shared.c.id == sa.bindparam("id"))
            if postgresql(engine):
                event.listen(engine, "commit", from_another_transaction)
            trips.clear()
            try:
                row = write_behind.commit_then_read(session, read, {"id": 1})
            finally:
                if postgresql(engine):
                    event.remove(engine, "commit", from_another_transaction)
        assert tuple(row) == ("100% after", "50%")
        if postgresql(engine):
            assert seen == [("100% after",)]
            (string,) = [trip for trip in trips if "UPDATE write_behind_shared" in trip]
            assert string.index("UPDATE") < string.index("COMMIT;\nBEGIN;\nSELECT")
    finally:
        shared.drop(engine)


def test_a_read_after_a_commit_that_ends_a_savepoint_follows_the_writes(connection):
    outer = connection.begin()
    session = Session(bind=connection, join_transaction_mode="create_savepoint")
    write_behind.send_later(session, _INSERT, {"id": 1, "text": "one"})
    row = write_behind.commit_then_read(session, sa.select(sa.func.count()).select_from(_notes), {})
    assert row == (1,) and outer.is_active
    outer.rollback()
    assert connection.execute(sa.select(sa.func.count()).select_from(_notes)).scalar() == 0
