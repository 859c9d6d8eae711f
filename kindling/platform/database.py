"""Engine, sessions and migrations for SQLite (embedded) and PostgreSQL."""

from __future__ import annotations

import contextlib
import os
import pathlib
import select
import socket
import sqlite3
import typing
import weakref
from collections.abc import Mapping

import orjson
import psycopg2
import psycopg2.extensions as ext
from sqlalchemy import Connection, CursorResult, Engine, Executable, create_engine, event
from sqlalchemy.engine import ExceptionContext
from sqlalchemy.engine.interfaces import DBAPIConnection, DBAPICursor
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import ConnectionPoolEntry

from kindling.platform import write_behind

if typing.TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS = pathlib.Path(__file__).parent.parent / "migrations"
# How long PostgreSQL may stay silent: while a connection is set up, and then, on the engines
# that serve requests, while a statement runs. Together they bound a request that meets a
# frozen server to about 5 s (a pre-ping that gets no answer, then one new connection).
CONNECT_LIMIT = 2.0
SILENCE_LIMIT = 3.0
_silence_limits: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def make_engine(url: str, *, silence_limit: float | None = SILENCE_LIMIT) -> Engine:
    """An engine tuned for the dialect the URL names; `silence_limit=None` lets statements run
    as long as they take (bulk seeding, say)."""
    if url.startswith("sqlite"):
        engine = create_engine(
            url, connect_args={"check_same_thread": False, "timeout": 30}, json_deserializer=orjson.loads
        )
        _sqlite_transactions(engine)
        return engine
    # Process-wide, as psycopg2 has it: every PostgreSQL connection of the process waits through it.
    ext.set_wait_callback(_wait_for_server)
    # FlaskApp serves from a pool of 10 threads, so keep at least that many connections.
    # A database that stops answering must cost a request about 5 s, never a hang: connect,
    # pool checkout, unacknowledged writes and a silent server all give up by then.
    engine = create_engine(
        url,
        # orjson reads JSON columns several times faster than the standard library: the evidence
        # log's verification reads the data of every event.
        json_deserializer=orjson.loads,
        pool_size=10,
        max_overflow=5,
        pool_pre_ping=True,
        pool_timeout=5,
        connect_args={
            "tcp_user_timeout": 5000,
            "keepalives": 1,
            "keepalives_idle": 5,
            "keepalives_interval": 1,
            "keepalives_count": 3,
        },
    )
    _leave_pool_when_demoted(engine)
    write_behind.install(engine)
    if silence_limit is not None:

        @event.listens_for(engine, "connect")
        def limit_silence(dbapi_connection: DBAPIConnection, _record: ConnectionPoolEntry) -> None:
            _silence_limits[dbapi_connection] = silence_limit

    return engine


# SQLSTATEs a failover gives a connection kept open: a primary demoted to replica (read-only
# transaction, hot standby), or shut down by its administrator or its manager (Patroni).
FAILOVER_STATES = frozenset({"25006", "57P01", "57P02", "57P03"})


def _leave_pool_when_demoted(engine: Engine) -> None:
    """Count a failover's errors as disconnects: SQLAlchemy then invalidates the connection and
    the pool's older ones, and the next checkout (with target_session_attrs=read-write) reaches
    the new primary. The request answers 503 with Retry-After, never 500."""

    @event.listens_for(engine, "handle_error")
    def demoted(context: ExceptionContext) -> None:
        if _demoted(context.original_exception):
            context.is_disconnect = True


def _demoted(error: BaseException) -> bool:
    return getattr(error, "pgcode", None) in FAILOVER_STATES


def on_driver(connection: Connection, sql: str, parameters: Mapping[str, object]) -> DBAPICursor:
    """The driver's cursor, having run `sql` (in the driver's own SQL) with `parameters`, rather
    than SQLAlchemy's execution, which costs about twice the driver's own CPU: for the statements
    most requests make (`python -m benchmarks.idempotency`: a key's lookup and store so add about
    0.1 ms less to a create). Writes sent behind (write_behind.py) go in front. A driver's error
    is raised as SQLAlchemy raises it, the connection invalidated when it is lost or its server
    demoted, so the request answers 503 as after any other statement."""
    dialect = connection.dialect
    driver = connection.connection.dbapi_connection
    assert driver is not None, "a connection in a transaction has its driver's"
    sql = write_behind.carried(connection, sql, formatted=True)
    try:
        cursor = driver.cursor()
        cursor.execute(sql, parameters)
        return cursor
    except dialect.loaded_dbapi.Error as error:
        lost = dialect.is_disconnect(error, driver, None) or _demoted(error)
        if lost:
            connection.invalidate(error)
        raise DBAPIError.instance(
            sql, parameters, error, dialect.loaded_dbapi.Error, connection_invalidated=lost, dialect=dialect
        ) from None


@contextlib.contextmanager
def blocking_waits() -> typing.Iterator[None]:
    """Lift the process-wide wait callback for a while, for what psycopg2 refuses under one
    (`copy_expert`, COPY's bulk load): its waits then have no limit, in every thread of the
    process, so only single-threaded tools (a benchmark's seeding) use it."""
    callback = ext.get_wait_callback()
    ext.set_wait_callback(None)
    try:
        yield
    finally:
        ext.set_wait_callback(callback)


def _wait_for_server(connection: ext.connection) -> None:
    """psycopg2's wait callback (its `extras.wait_select`, with limits). A frozen server is the
    case TCP cannot catch: its kernel acknowledges every packet, so neither keepalives nor the
    user timeout fire, and libpq's own connect_timeout does not apply to connections waited on
    here. A server silent past its limit is given up on, and its connection is dead after."""
    limit = CONNECT_LIMIT if connection.status == ext.STATUS_SETUP else _silence_limits.get(connection)
    while True:
        state = connection.poll()
        if state == ext.POLL_OK:
            return
        if state not in (ext.POLL_READ, ext.POLL_WRITE):
            raise psycopg2.OperationalError(f"unexpected state from poll: {state}")
        poller = select.poll()
        poller.register(connection.fileno(), select.POLLIN if state == ext.POLL_READ else select.POLLOUT)
        if not poller.poll(None if limit is None else limit * 1000):
            # Not connection.close(): psycopg2 holds the connection while it waits. With its
            # socket shut down, any later use of the connection fails at once instead.
            with socket.socket(fileno=os.dup(connection.fileno())) as sock:
                sock.shutdown(socket.SHUT_RDWR)
            raise psycopg2.OperationalError(f"no answer from the database in {limit:g} s")


def _sqlite_transactions(engine: Engine) -> None:
    # pysqlite's own transaction handling breaks SAVEPOINTs; let SQLAlchemy emit BEGIN
    # (the documented recipe). IMMEDIATE takes the write lock up front, so concurrent
    # read-then-write transactions queue (busy timeout) instead of failing as "locked".
    @event.listens_for(engine, "connect")
    def connect(dbapi_connection: sqlite3.Connection, _record: ConnectionPoolEntry) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA journal_mode=WAL")
        # Deleted and overwritten content is zeroed, not left in free pages: erasure must leave no trace.
        cursor.execute("PRAGMA secure_delete=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def begin(connection: Connection) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")


def changed_rows(db: Session, statement: Executable) -> int:
    """How many rows an INSERT, UPDATE or DELETE statement wrote."""
    # A DML statement's result is always a CursorResult; Session.execute is typed for any statement.
    return typing.cast(CursorResult, db.execute(statement)).rowcount


def truncate_write_ahead_log(engine: Engine | Connection) -> None:
    """Copy an embedded database's write-ahead log into it and empty the log, which keeps old
    page images; without waiting: while other connections read, it stays for the next time."""
    engine = engine.engine
    if engine.dialect.name != "sqlite" or not engine.url.database:
        return
    with (
        contextlib.suppress(sqlite3.OperationalError),
        contextlib.closing(sqlite3.connect(engine.url.database, timeout=0)) as connection,
    ):
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()


def make_session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(bind=engine, expire_on_commit=False)


def alembic_config(url: str) -> Config:
    """Alembic's configuration for the database at `url`."""
    # Imported here: the server imports this module at start and never migrates in workers.
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    # A file's name starts with its revision's position in the chain, so that the folder lists the
    # revisions in the order they run; a new revision is the last.
    position = len(list((MIGRATIONS / "versions").glob("*.py"))) + 1
    config.set_main_option("file_template", f"{position:03d}_%%(rev)s_%%(slug)s")
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def upgrade(url: str, revision: str = "heads") -> None:
    """Bring the database at `url` to the newest schema."""
    from alembic import command

    command.upgrade(alembic_config(url), revision)
