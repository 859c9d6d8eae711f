"""Erasure down to PostgreSQL's files: the worker rewrites each table an erasure changed (docs/decisions.md §15).

An UPDATE or DELETE leaves the old row version in the table's file, with its entries in every
index, until vacuum; and a plain VACUUM only marks that space free, so the bytes stay until
something happens to overwrite them. `VACUUM FULL` writes the table, its indexes and its TOAST
anew and drops the old files, but holds an ACCESS EXCLUSIVE lock on the table while it runs. So
an erasure records, in its own transaction, the tables it changed; the worker rewrites each of
them once (whichever worker takes the table's advisory lock) and then forgets those records.
SQLite needs none of this: it zeroes deleted content as it goes.
"""

from __future__ import annotations

import logging
import time

from sqlalchemy import Connection, delete, exists, select, text
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker

from kindling.platform.database import make_engine
from kindling.privacy.models import StorageCleanup

log = logging.getLogger(__name__)

# How long a rewrite waits for its table's lock. Waiting, it queues every later statement on the
# table behind it; given up, the table is tried again on the worker's next round.
LOCK_WAIT = "5s"
# The first key of the advisory locks that make one worker at a time rewrite a table.
LOCK_CLASS = 0x6B696E64

# Pending clean-ups of a table whose old row versions every snapshot has let go of: no other
# session of the database still holds a snapshot or transaction that began before the erasure
# ended, and neither does a prepared transaction or a replication slot. VACUUM FULL copies the
# row versions such a snapshot may still read, so rewriting sooner would leave the bytes.
_RELEASED = text(
    """
    SELECT cleanup.id FROM storage_cleanups AS cleanup
    CROSS JOIN LATERAL (SELECT age(CAST(CAST(cleanup.transaction_id AS text) AS xid8)::xid) AS erased) AS erasure
    WHERE cleanup.table_name = :table
    AND NOT EXISTS (
        SELECT 1 FROM pg_stat_activity AS other
        WHERE other.datname = current_database() AND other.pid <> pg_backend_pid()
        AND (age(other.backend_xmin) >= erasure.erased OR age(other.backend_xid) >= erasure.erased)
    )
    AND NOT EXISTS (SELECT 1 FROM pg_prepared_xacts AS prepared WHERE age(prepared.transaction) >= erasure.erased)
    AND NOT EXISTS (SELECT 1 FROM pg_replication_slots AS slot WHERE age(slot.xmin) >= erasure.erased)
    """
)


def write_counts(db: Session) -> dict[str, int]:
    """How many rows of each table the session's connection has updated or deleted and not yet
    reported to the statistics (PostgreSQL; empty elsewhere): `schedule_cleanup` is given it."""
    if db.get_bind().dialect.name != "postgresql":
        return {}
    db.flush()
    # pg_stat_xact_user_tables counts this transaction's writes, and also those of the
    # connection's earlier transactions until it reports them at its next idle moment; never
    # inside a transaction, so what a transaction did is the difference of two readings.
    return dict(
        db.execute(
            text(
                "SELECT relname, n_tup_upd + n_tup_del FROM pg_stat_xact_user_tables "
                "WHERE schemaname = current_schema() AND relname <> 'storage_cleanups'"
            )
        ).all()
    )


def schedule_cleanup(db: Session, *, since: dict[str, int]) -> None:
    """Record every table the transaction changed or deleted rows of since `since` (`write_counts`),
    for the worker to rewrite. The tables come from what was done, so a new feature's table that
    an erasure writes is never missing from a list."""
    if db.get_bind().dialect.name != "postgresql":
        return
    changed = sorted(table for table, count in write_counts(db).items() if count > since.get(table, 0))
    if not changed:
        return
    transaction = db.scalar(text("SELECT CAST(CAST(pg_current_xact_id() AS text) AS bigint)"))
    db.add_all(StorageCleanup(table_name=table, transaction_id=transaction) for table in changed)
    db.flush()


def rewrite_pending(database_url: str) -> list[str]:
    """Rewrite each table with a pending clean-up that no snapshot holds back; returns the tables rewritten."""
    # Not bound by the statement limit of the engines that serve requests: a rewrite takes as
    # long as its table needs.
    engine = make_engine(database_url, silence_limit=None)
    try:
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.exec_driver_sql("SET statement_timeout = 0")
            connection.exec_driver_sql(f"SET lock_timeout = '{LOCK_WAIT}'")
            if not connection.scalar(text("SELECT pg_has_role('pg_read_all_stats', 'USAGE')")):
                log.warning(
                    "the worker's database role cannot see other sessions' snapshots (grant it pg_read_all_stats): "
                    "a table rewritten while one is open keeps an erased person's old row versions"
                )
            tables = connection.scalars(select(StorageCleanup.table_name).distinct().order_by("table_name")).all()
            return [table for table in tables if _rewrite(connection, table)]
    finally:
        engine.dispose()


def _rewrite(connection: Connection, table: str) -> bool:
    lock = {"lock_class": LOCK_CLASS, "table": table}
    if not connection.scalar(text("SELECT pg_try_advisory_lock(:lock_class, hashtext(:table))"), lock):
        return False  # another worker is rewriting it
    try:
        released = connection.scalars(_RELEASED, {"table": table}).all()
        if not released:
            log.info("storage clean-up of %s waits for a snapshot older than its erasure to end", table)
            return False
        # A table a later migration dropped needs no rewrite.
        if connection.scalar(text("SELECT to_regclass(quote_ident(:table))"), {"table": table}) is not None:
            quoted = connection.dialect.identifier_preparer.quote(table)
            started = time.monotonic()
            try:
                connection.exec_driver_sql(f"VACUUM (FULL, ANALYZE) {quoted}")
            except OperationalError as exc:
                log.warning("storage clean-up of %s left for the next round: %s", table, exc.orig)
                return False
            log.info("rewrote %s after an erasure in %.1f s", table, time.monotonic() - started)
        connection.execute(delete(StorageCleanup).where(StorageCleanup.id.in_(released)))
        return True
    finally:
        connection.execute(text("SELECT pg_advisory_unlock(:lock_class, hashtext(:table))"), lock)


class StorageCleaner:
    """The worker's task that rewrites what erasures left, at its first round and then once a minute at most."""

    def __init__(self, session_factory: sessionmaker[Session], database_url: str, *, every_seconds: float = 60.0):
        self.session_factory = session_factory
        self.database_url = database_url
        self.every_seconds = every_seconds
        self._next = 0.0

    def __call__(self) -> None:
        if time.monotonic() < self._next:
            return
        self._next = time.monotonic() + self.every_seconds
        try:
            with self.session_factory() as db:
                pending = db.scalar(select(exists().select_from(StorageCleanup)))
            if pending:
                rewrite_pending(self.database_url)
        except Exception as exc:  # a database outage must not end the worker
            log.warning("storage clean-up failed: %s: %s", type(exc).__name__, exc)
