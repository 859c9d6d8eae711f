"""Engine, sessions and migrations for SQLite (embedded) and PostgreSQL."""

from __future__ import annotations

import pathlib

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

MIGRATIONS = pathlib.Path(__file__).with_name("migrations")


def make_engine(url: str) -> Engine:
    """An engine tuned for the dialect the URL names."""
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
        _sqlite_transactions(engine)
        return engine
    # FlaskApp serves from a pool of 10 threads, so keep at least that many connections.
    # A database that stops answering must cost a request about 5 s, never a hang: connect,
    # pool checkout and unacknowledged writes all give up by then.
    return create_engine(
        url,
        pool_size=10,
        max_overflow=5,
        pool_pre_ping=True,
        pool_timeout=5,
        connect_args={
            "connect_timeout": 5,
            "tcp_user_timeout": 5000,
            "keepalives": 1,
            "keepalives_idle": 5,
            "keepalives_interval": 1,
            "keepalives_count": 3,
        },
    )


def _sqlite_transactions(engine: Engine) -> None:
    # pysqlite's own transaction handling breaks SAVEPOINTs; let SQLAlchemy emit BEGIN
    # (the documented recipe). IMMEDIATE takes the write lock up front, so concurrent
    # read-then-write transactions queue (busy timeout) instead of failing as "locked".
    @event.listens_for(engine, "connect")
    def connect(dbapi_connection, _record):
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def begin(connection):
        connection.exec_driver_sql("BEGIN IMMEDIATE")


def make_session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(bind=engine, expire_on_commit=False)


def alembic_config(url: str):
    """Alembic's configuration for the database at `url`."""
    # Imported here: the server imports this module at start and never migrates in workers.
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("file_template", "%%(year)d_%%(month).2d_%%(day).2d_%%(rev)s_%%(slug)s")
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def upgrade(url: str, revision: str = "heads") -> None:
    """Bring the database at `url` to the newest schema."""
    from alembic import command

    command.upgrade(alembic_config(url), revision)
