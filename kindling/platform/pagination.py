"""Keyset pagination (newest first, by name, or in sequence order) with opaque cursors that stay stable under inserts."""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import json
import re
from collections.abc import Callable, Sequence
from typing import TypeVar

from sqlalchemy import Select, tuple_
from sqlalchemy.orm import InstrumentedAttribute, Session

from kindling.errors import BadRequest

# Ids are UUIDs; checking keeps text a database would refuse (such as NUL) out of queries.
_RECORD_ID = re.compile(r"[A-Za-z0-9-]{1,64}")

T = TypeVar("T")


def encode_cursor(timestamp: dt.datetime, record_id: str) -> str:
    """The cursor that continues a list after the record (`timestamp`, `record_id`)."""
    return _encode(timestamp.astimezone(dt.UTC).isoformat(), record_id)


def decode_cursor(cursor: str) -> tuple[dt.datetime, str]:
    """The (timestamp, id) position a cursor stands for; anything else is a 400 `invalid_cursor`."""
    stamp, record_id = _decode(cursor)
    try:
        position = dt.datetime.fromisoformat(stamp)
    except ValueError:
        raise _invalid() from None
    if position.tzinfo is None:
        raise _invalid()
    return position, record_id


def encode_name_cursor(name: str, record_id: str) -> str:
    """The cursor that continues a list ordered by name after the record (`name`, `record_id`)."""
    return _encode(name, record_id)


def decode_name_cursor(cursor: str) -> tuple[str, str]:
    """The (name, id) position a cursor stands for; anything else is a 400 `invalid_cursor`."""
    return _decode(cursor)


def _encode(key: str, record_id: str) -> str:
    raw = json.dumps([key, record_id], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode(cursor: str) -> tuple[str, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        key, record_id = json.loads(raw)
    except (binascii.Error, ValueError, TypeError):
        raise _invalid() from None
    # A NUL in the key would be refused by PostgreSQL; no stored name or timestamp holds one.
    valid_key = isinstance(key, str) and "\x00" not in key and len(key) <= 256
    if not valid_key or not isinstance(record_id, str) or not _RECORD_ID.fullmatch(record_id):
        raise _invalid()
    return key, record_id


def _invalid() -> BadRequest:
    return BadRequest("The cursor is not one this list returned", code="invalid_cursor")


def keyset(
    statement: Select,
    *,
    timestamp: InstrumentedAttribute,
    record_id: InstrumentedAttribute,
    limit: int,
    cursor: str | None,
) -> Select:
    """`statement` after `cursor`, newest `timestamp` first, one row beyond `limit` to tell whether more follow."""
    if cursor is not None:
        statement = statement.where(tuple_(timestamp, record_id) < decode_cursor(cursor))
    return statement.order_by(timestamp.desc(), record_id.desc()).limit(limit + 1)


def cut(
    rows: Sequence[T], *, limit: int, position: Callable[[T], tuple[dt.datetime, str]]
) -> tuple[list[T], str | None]:
    """The first `limit` of a `keyset` statement's rows, and the cursor of the next page; `position` gives a row's (timestamp, id)."""
    if len(rows) <= limit:
        return list(rows), None
    rows = list(rows[:limit])
    return rows, encode_cursor(*position(rows[-1]))


def page(
    db: Session,
    statement: Select,
    *,
    timestamp: InstrumentedAttribute,
    record_id: InstrumentedAttribute,
    limit: int,
    cursor: str | None,
) -> tuple[list, str | None]:
    """One page of `statement`'s entities, newest `timestamp` first, and the cursor of the next page."""
    statement = keyset(statement, timestamp=timestamp, record_id=record_id, limit=limit, cursor=cursor)
    return cut(
        list(db.scalars(statement)),
        limit=limit,
        position=lambda row: (getattr(row, timestamp.key), getattr(row, record_id.key)),
    )


def page_by_name(
    db: Session,
    statement: Select,
    *,
    name: InstrumentedAttribute,
    record_id: InstrumentedAttribute,
    limit: int,
    cursor: str | None,
) -> tuple[list, str | None]:
    """One page of `statement`'s rows in `name` order, and the cursor of the next page."""
    if cursor is not None:
        statement = statement.where(tuple_(name, record_id) > decode_name_cursor(cursor))
    rows = list(db.scalars(statement.order_by(name, record_id).limit(limit + 1)))
    if len(rows) <= limit:
        return rows, None
    rows = rows[:limit]
    return rows, encode_name_cursor(getattr(rows[-1], name.key), getattr(rows[-1], record_id.key))


def encode_seq_cursor(seq: int) -> str:
    """The cursor that continues a list in ascending sequence order after `seq`."""
    return _encode("seq", str(seq))


def decode_seq_cursor(cursor: str) -> int:
    """The sequence number a cursor of `encode_seq_cursor` stands for; anything else is a 400 `invalid_cursor`."""
    tag, seq = _decode(cursor)
    if tag != "seq" or not seq.isdigit() or int(seq) >= 2**63:
        raise _invalid()
    return int(seq)
