"""Keyset pagination, newest first, with opaque cursors that stay stable under inserts."""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import json
import re

from sqlalchemy import Select, tuple_
from sqlalchemy.orm import InstrumentedAttribute, Session

from kindling.errors import BadRequest

# Ids are UUIDs; checking keeps text a database would refuse (such as NUL) out of queries.
_RECORD_ID = re.compile(r"[A-Za-z0-9-]{1,64}")


def encode_cursor(timestamp: dt.datetime, record_id: str) -> str:
    """The cursor that continues a list after the record (`timestamp`, `record_id`)."""
    raw = json.dumps([timestamp.astimezone(dt.UTC).isoformat(), record_id], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[dt.datetime, str]:
    """The (timestamp, id) position a cursor stands for; anything else is a 400 `invalid_cursor`."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        stamp, record_id = json.loads(raw)
        position = dt.datetime.fromisoformat(stamp)
    except (binascii.Error, ValueError, TypeError):
        raise BadRequest("The cursor is not one this list returned", code="invalid_cursor") from None
    if position.tzinfo is None or not isinstance(record_id, str) or not _RECORD_ID.fullmatch(record_id):
        raise BadRequest("The cursor is not one this list returned", code="invalid_cursor")
    return position, record_id


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
        statement = statement.where(tuple_(timestamp, record_id) < decode_cursor(cursor))
    rows = list(db.scalars(statement.order_by(timestamp.desc(), record_id.desc()).limit(limit + 1)))
    if len(rows) <= limit:
        return rows, None
    rows = rows[:limit]
    last = rows[-1]
    return rows, encode_cursor(getattr(last, timestamp.key), getattr(last, record_id.key))
