"""Writes whose answer nobody reads, sent with the transaction's next round trip to PostgreSQL.

A write under a lock (a tally, the evidence log's append) costs the lock's holder a round trip
to the database, and every writer behind it waits for that too. `send_later` keeps such a write
on the connection as SQL text, rendered by psycopg2; the next statement of the transaction
carries it in front of its own, in one string, and what is left goes with the COMMIT itself.
PostgreSQL runs the statements of one string in order, each with a snapshot of its own, and
psycopg2 answers the last one's rows and row count: the transaction reads and writes exactly as
if each had been sent alone. A write that fails does so with the statement that carried it, in
the same transaction, which then rolls back. `commit_then_read` adds a read after the COMMIT,
for a transaction none of whose writes needs an answer before it commits.

SQLite runs in the process, where a round trip costs nothing: `send_later` executes at once
there, as it does on an engine `install` has not prepared (Alembic's, say).
"""

from __future__ import annotations

import typing
import weakref
from collections.abc import Mapping, Sequence

from sqlalchemy import Connection, Engine, Row, event
from sqlalchemy.engine.interfaces import DBAPICursor, ExecutionContext
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session
from sqlalchemy.sql.compiler import Compiled
from sqlalchemy.sql.expression import Executable

_PENDING = "kindling.write_behind"
_THEN = "kindling.write_behind.then"
_INSTALLED: weakref.WeakSet[Engine] = weakref.WeakSet()
# Each statement's SQL and the conversions of its parameters, by the statement and the names of
# the parameters it is sent with (the statements are built once, at import).
_RENDERED: dict[tuple[Executable, tuple[str, ...]], tuple[Compiled, dict[str, typing.Callable | None]]] = {}


def install(engine: Engine) -> None:
    """Let `engine`'s connections carry writes sent later (PostgreSQL through psycopg2)."""
    _INSTALLED.add(engine)
    event.listen(engine, "before_cursor_execute", _carry, retval=True)
    event.listen(engine, "commit", _send_before_commit)
    event.listen(engine, "rollback", _forget)
    event.listen(engine, "begin", _forget)


def commit_then_read(db: Session, statement: Executable, parameters: Mapping[str, object]) -> Row:
    """Commit the transaction of `db` and read the first row of `statement` with `parameters`
    once it has committed. On an engine `install` prepared, the read travels in the string that
    commits: the locks the transaction's writes take end without a wait for an answer."""
    connection = db.connection()
    answer: list[Row] = []
    travels = connection.engine in _INSTALLED
    if travels:
        with connection.connection.dbapi_connection.cursor() as cursor:  # type: ignore[union-attr]
            connection.info[_THEN] = (_rendered(connection, cursor, statement, parameters), answer)
    db.commit()
    if answer:
        return answer[0]
    if travels:
        # The commit ended a savepoint, not the connection's transaction (a test's), which goes on.
        connection.info.pop(_THEN, None)
    return db.execute(statement, parameters).one()


def send_later(
    db: Session | Connection, statement: Executable, parameters: Mapping[str, object] | Sequence[Mapping[str, object]]
) -> None:
    """Execute `statement` with `parameters` (one set, or several) in the transaction of `db`,
    with its next round trip; at once where that is not worth it (see above). `statement` is one
    built once, a module's constant: its rendering is kept for the next time."""
    sets = [parameters] if isinstance(parameters, Mapping) else list(parameters)
    if not sets:
        return
    connection = db.connection() if isinstance(db, Session) else db
    if connection.engine not in _INSTALLED:
        connection.execute(statement, parameters)
        return
    if not connection.in_transaction():
        connection.begin()  # which forgets what an earlier transaction left
    pending = connection.info.setdefault(_PENDING, [])
    with connection.connection.dbapi_connection.cursor() as cursor:  # type: ignore[union-attr]
        pending.extend(_rendered(connection, cursor, statement, one) + ";\n" for one in sets)


def _rendered(
    connection: Connection, cursor: typing.Any, statement: Executable, parameters: Mapping[str, object]
) -> str:
    """`statement` with `parameters` as the SQL text the driver would send."""
    return cursor.mogrify(*driver_form(connection, statement, parameters)).decode()


def driver_form(
    connection: Connection, statement: Executable, parameters: Mapping[str, object]
) -> tuple[str, Mapping[str, object]]:
    """`statement` in the driver's own SQL, and `parameters` as SQLAlchemy would convert them for
    it (`kindling.platform.database.on_driver` runs the two)."""
    compiled, conversions = _rendering(connection, statement, tuple(parameters))
    values = compiled.construct_params(parameters) or {}
    for name, convert in conversions.items():
        if convert is not None and name in values:
            values[name] = convert(values[name])
    return compiled.string, values


def _rendering(
    connection: Connection, statement: Executable, names: tuple[str, ...]
) -> tuple[Compiled, dict[str, typing.Callable | None]]:
    rendered = _RENDERED.get((statement, names))
    if rendered is None:
        dialect = connection.dialect
        compiled = statement.compile(dialect=dialect, column_keys=list(names))  # type: ignore[attr-defined]
        conversions = {
            name: bind.type.dialect_impl(dialect).bind_processor(dialect) for name, bind in compiled.binds.items()
        }
        rendered = _RENDERED[(statement, names)] = (compiled, conversions)
    return rendered


def carried(connection: Connection, statement: str, *, formatted: bool) -> str:
    """`statement` with the writes waiting on `connection` in front of it, which it then sends;
    `formatted` when the driver formats the whole string with parameters (psycopg2 does when it is
    given any), so that the rendered text keeps its own % signs."""
    pending = connection.info.get(_PENDING)
    if not pending:
        return statement
    sent = "".join(pending)
    pending.clear()
    return (sent.replace("%", "%%") if formatted else sent) + statement


def _carry(
    connection: Connection,
    cursor: DBAPICursor,
    statement: str,
    parameters: typing.Any,
    context: ExecutionContext | None,
    executemany: bool,
) -> tuple[str, typing.Any]:
    if not connection.info.get(_PENDING):
        return statement, parameters
    if executemany or getattr(cursor, "name", None):
        # Repeated for each set of parameters, or declared as a server-side cursor: sent alone.
        cursor.connection.cursor().execute(carried(connection, "", formatted=False))
        return statement, parameters
    unformatted = parameters is None or (context is not None and context.no_parameters and not parameters)
    return carried(connection, statement, formatted=not unformatted), parameters


def _send_before_commit(connection: Connection) -> None:
    then = connection.info.pop(_THEN, None)
    if not connection.info.get(_PENDING) and then is None:
        return
    # The last writes and the COMMIT in one string: the transaction's locks end once they are
    # done, not one round trip later. The BEGIN opens the empty transaction that the driver's own
    # COMMIT, which follows whatever the string held, then closes (with the read after the
    # commit, if one was asked for); in the driver's autocommit mode each statement commits
    # itself, and nothing would close it.
    driver = connection.connection.dbapi_connection
    assert driver is not None, "a connection in a transaction has its driver's"
    ending = "" if driver.autocommit else "COMMIT;\nBEGIN"
    if then is not None:
        read, answer = then
        ending += ";\n" + read.replace("%", "%%")
    try:
        result = connection.exec_driver_sql(carried(connection, ending, formatted=True), ())
    except DBAPIError:
        # A write that failed ended the string before its COMMIT, and SQLAlchemy holds the
        # transaction as over whatever its commit did: end it, as a failed COMMIT would.
        if not connection.invalidated:
            driver.rollback()
        raise
    if then is not None:
        answer.append(result.one())


def _forget(connection: Connection) -> None:
    # An invalidated connection has lost its writes with its `info`, which it may not be asked for.
    if not connection.invalidated:
        connection.info.pop(_PENDING, None)
        connection.info.pop(_THEN, None)
