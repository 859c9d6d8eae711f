"""Keyset pagination, newest first, with opaque cursors that stay stable under inserts."""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import re

from sqlalchemy import Select, and_, or_
from sqlalchemy.orm import InstrumentedAttribute, Session as DbSession

from kindling.errors import BadRequest

# Ids are UUIDs; checking keeps text a database would refuse (such as NUL) out of queries.
_RECORD_ID = re.compile(r"[A-Za-z0-9-]{1,36}")


def encode_cursor(created_at: dt.datetime, record_id: str) -> str:
    """A cursor that continues after the record created at `created_at` with id `record_id`."""
    return base64.urlsafe_b64encode(f"{created_at.isoformat()}|{record_id}".encode()).decode()


def decode_cursor(cursor: str) -> tuple[dt.datetime, str]:
    """The position a cursor points after; a cursor this service did not make is a 400."""
    try:
        created_at, record_id = base64.urlsafe_b64decode(cursor.encode()).decode().split("|", 1)
        position = dt.datetime.fromisoformat(created_at)
    except (binascii.Error, UnicodeError, ValueError):
        raise BadRequest("The cursor is not valid", code="invalid_cursor") from None
    if position.tzinfo is None or not _RECORD_ID.fullmatch(record_id):
        raise BadRequest("The cursor is not valid", code="invalid_cursor")
    return position, record_id


def page(
    db: DbSession,
    query: Select,
    *,
    created_at: InstrumentedAttribute,
    record_id: InstrumentedAttribute,
    limit: int,
    cursor: str | None,
) -> tuple[list, str | None]:
    """Up to `limit` rows of `query`, newest first, after `cursor`, and the cursor of the next page."""
    if cursor is not None:
        after_created_at, after_id = decode_cursor(cursor)
        query = query.where(
            or_(created_at < after_created_at, and_(created_at == after_created_at, record_id < after_id))
        )
    rows = list(db.scalars(query.order_by(created_at.desc(), record_id.desc()).limit(limit + 1)))
    if len(rows) <= limit:
        return rows, None
    rows = rows[:limit]
    last = rows[-1]
    return rows, encode_cursor(getattr(last, created_at.key), getattr(last, record_id.key))
