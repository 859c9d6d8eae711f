"""Opaque cursors for newest-first lists ordered by (created_at DESC, id DESC)."""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import json

from kindling.errors import BadRequest


def encode_cursor(created_at: dt.datetime, record_id: str) -> str:
    """The cursor that continues a list after the record (`created_at`, `record_id`)."""
    raw = json.dumps([created_at.isoformat(), record_id], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[dt.datetime, str]:
    """The (created_at, id) position a cursor stands for; anything else is a 400 `invalid_cursor`."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        created_at, record_id = json.loads(raw)
        position = dt.datetime.fromisoformat(created_at)
    except (binascii.Error, ValueError, TypeError):
        raise BadRequest("The cursor is not one this list returned", code="invalid_cursor") from None
    if position.tzinfo is None or not isinstance(record_id, str):
        raise BadRequest("The cursor is not one this list returned", code="invalid_cursor")
    return position, record_id
