"""Wellbeing survey responses."""

from __future__ import annotations

import datetime as dt

from sqlalchemy.orm import Session

from kindling.persistence.wellbeing import WellbeingResponse
from kindling.services import wellbeing
from tests.factories import Account
from tests.factories.principals import principal


def response(db: Session, account: Account, *, created_at: dt.datetime | None = None, **fields) -> WellbeingResponse:
    """A response by `account`, optionally back-dated."""
    fields.setdefault("mood", 4)
    fields.setdefault("stress", 2)
    record = wellbeing.create_response(db, caller=principal(account), **fields)
    if created_at is not None:
        record.created_at = created_at
        db.flush()
    return record
