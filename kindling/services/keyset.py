"""Newest-first keyset pagination with opaque cursors, stable while rows are added."""

from __future__ import annotations

import base64
import binascii
import datetime as dt

from sqlalchemy import Select, and_, or_
from sqlalchemy.orm import InstrumentedAttribute, Session

from kindling.errors import BadRequest


def encode_cursor(timestamp: dt.datetime, record_id: str) -> str:
    """The cursor that continues after the record with this timestamp and id."""
    raw = f"{timestamp.astimezone(dt.UTC).isoformat()}|{record_id}"
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[dt.datetime, str]:
    """The timestamp and id a cursor continues after; 400 for anything this service did not issue."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        stamp, record_id = raw.split("|", 1)
        timestamp = dt.datetime.fromisoformat(stamp)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise BadRequest("The cursor is not valid", code="invalid_cursor") from None
    # Ids are never empty and never hold NUL, which PostgreSQL cannot even compare.
    if timestamp.tzinfo is None or not record_id or "\x00" in record_id:
        raise BadRequest("The cursor is not valid", code="invalid_cursor")
    return timestamp, record_id


def page(
    db: Session,
    statement: Select,
    *,
    timestamp: InstrumentedAttribute,
    record_id: InstrumentedAttribute,
    limit: int,
    cursor: str | None,
) -> tuple[list, str | None]:
    """One page of `statement`'s rows, newest `timestamp` first, and the cursor of the next page."""
    if cursor is not None:
        after, after_id = decode_cursor(cursor)
        statement = statement.where(or_(timestamp < after, and_(timestamp == after, record_id < after_id)))
    rows = list(db.scalars(statement.order_by(timestamp.desc(), record_id.desc()).limit(limit + 1)))
    if len(rows) <= limit:
        return rows, None
    rows = rows[:limit]
    last = rows[-1]
    return rows, encode_cursor(getattr(last, timestamp.key), getattr(last, record_id.key))
