"""Alembic environment: runs migrations against the URL Kindling was given.

On PostgreSQL a migration holds an advisory lock, so two `kindling db upgrade` runs (two hosts
starting at once) apply each revision once, one after the other. It waits at most
`LOCK_TIMEOUT` for a table lock: a lock held by live traffic fails the migration, to be run
again, rather than queueing every request behind it. `STATEMENT_TIMEOUT` bounds a runaway
statement while leaving room for an index build over millions of rows.
"""

from alembic import context
from sqlalchemy import create_engine, pool, text

from kindling.schema import metadata

# Any fixed 64-bit number that no other part of Kindling takes as an advisory lock.
MIGRATION_LOCK = 0x6B696E646C696E67  # "kindling"
LOCK_TIMEOUT = "4s"
STATEMENT_TIMEOUT = "30min"

engine = create_engine(context.config.get_main_option("sqlalchemy.url", ""), poolclass=pool.NullPool)
with engine.connect() as connection:
    postgresql = connection.dialect.name == "postgresql"
    if postgresql:
        connection.execute(text(f"SET lock_timeout = '{LOCK_TIMEOUT}'"))
        connection.execute(text(f"SET statement_timeout = '{STATEMENT_TIMEOUT}'"))
        connection.execute(text("SELECT pg_advisory_lock(:key)"), {"key": MIGRATION_LOCK})
        connection.commit()
    context.configure(
        connection=connection,
        target_metadata=metadata,
        # SQLite can only alter tables by copying them.
        render_as_batch=not postgresql,
        # A new revision names the models' own column types by their frozen copies.
        user_module_prefix="kindling.migrations.frozen_types.",
    )
    try:
        with context.begin_transaction():
            context.run_migrations()
    finally:
        if postgresql:
            connection.rollback()
            connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": MIGRATION_LOCK})
            connection.commit()
