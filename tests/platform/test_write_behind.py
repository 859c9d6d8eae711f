"""Writes sent later: on PostgreSQL they ride with the transaction's next statement, or with its
commit, and the transaction reads and writes as if each had been sent alone; on SQLite they run
at once."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from sqlalchemy import event

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
