"""`on_driver`: a statement on the driver's cursor, whose errors are SQLAlchemy's as after any
other statement."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from kindling.platform import write_behind
from kindling.platform.database import on_driver


def test_the_writes_sent_behind_go_first(engine):
    with engine.connect() as connection:
        connection.exec_driver_sql("CREATE TEMPORARY TABLE fetched (id INTEGER PRIMARY KEY)")
        write_behind.send_later(connection, sa.text("INSERT INTO fetched (id) VALUES (7)"), {})
        assert on_driver(connection, "SELECT count(*), max(id) FROM fetched", {}).fetchone() == (1, 7)
        write_behind.send_later(connection, sa.text("INSERT INTO fetched (id) VALUES (8)"), {})
        assert on_driver(connection, "DELETE FROM fetched WHERE id > 7", {}).rowcount == 1


def test_a_refused_statement_raises_sqlalchemys_error_and_keeps_the_connection(engine):
    with engine.connect() as connection:
        with pytest.raises(sa.exc.DBAPIError) as raised:
            on_driver(connection, "SELECT no_such_column FROM no_such_table", {})
        assert not raised.value.connection_invalidated and not connection.invalidated


def test_a_lost_connection_is_invalidated_so_that_the_request_answers_503(engine):
    if engine.dialect.name != "postgresql":
        pytest.skip("SQLite has no server to lose")
    with engine.connect() as connection, engine.connect() as other:
        backend = connection.exec_driver_sql("SELECT pg_backend_pid()").scalar_one()
        other.exec_driver_sql(f"SELECT pg_terminate_backend({backend})")
        with pytest.raises(sa.exc.OperationalError) as raised:
            on_driver(connection, "SELECT 1", {})
        assert raised.value.connection_invalidated and connection.invalidated
