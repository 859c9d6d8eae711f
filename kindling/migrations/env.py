"""Alembic environment: runs migrations against the URL Kindling was given."""

from alembic import context
from sqlalchemy import create_engine, pool

from kindling.schema import metadata

engine = create_engine(context.config.get_main_option("sqlalchemy.url", ""), poolclass=pool.NullPool)
with engine.connect() as connection:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        # SQLite can only alter tables by copying them.
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()
