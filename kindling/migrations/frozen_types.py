"""The column types the migrations create and write through, as they were when each was written, frozen.

A migration must keep doing what it did, so it never imports the live `kindling.platform.base`,
which may change. `alembic check` compares the database with the models, not with these types:
they only decide the DDL a revision emits and how it binds the values it writes.
"""

import datetime as dt
import typing

from sqlalchemy import DateTime, Dialect, TypeDecorator


class UTCDateTime(TypeDecorator[dt.datetime]):
    """A timezone-aware UTC timestamp on every backend (SQLite keeps no zone)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: dt.datetime | None, dialect: Dialect) -> dt.datetime | None:
        if value is not None:
            if value.tzinfo is None:
                raise ValueError("naive datetime given to a UTC column")
            value = value.astimezone(dt.UTC)
        return value

    def process_result_value(self, value: typing.Any, dialect: Dialect) -> dt.datetime | None:
        if value is not None and value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        return value
