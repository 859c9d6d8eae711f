"""Storage clean-ups an erasure leaves for the worker (docs/decisions.md §15)."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import BigInteger, String
from sqlalchemy.orm import Mapped, mapped_column

from kindling.platform.base import Base, new_id, utcnow


class StorageCleanup(Base):
    """A table whose old row versions still hold what an erasure removed, until the worker
    rewrites it (PostgreSQL only: SQLite zeroes deleted content as it goes)."""

    __tablename__ = "storage_cleanups"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    table_name: Mapped[str] = mapped_column(String(63))
    # The erasure's transaction (`pg_current_xact_id()`): the rewrite removes its old row
    # versions only once no snapshot that may still see them is left.
    transaction_id: Mapped[int] = mapped_column(BigInteger)
    requested_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
