"""Wellbeing survey responses."""

from __future__ import annotations

import datetime as dt

from sqlalchemy.orm import Session

from kindling.wellbeing import service as wellbeing
from kindling.wellbeing.models import WellbeingResponse
from tests.factories.accounts import Account
from tests.factories.principals import principal


class Wellbeing:
    """Methods of `make` (`tests.factories.Factories`)."""

    db: Session

    def response(self, account: Account, *, created_at: dt.datetime | None = None, **fields) -> WellbeingResponse:
        """A response by `account`, recorded as the service records it at `created_at` (default now)."""
        fields.setdefault("mood", 4)
        fields.setdefault("stress", 2)
        return wellbeing.create_response(self.db, caller=principal(account), now=created_at, **fields)
