"""Wellbeing comments are kept WELLBEING_COMMENT_RETENTION_DAYS days, then deleted by the worker (docs/decisions.md §15)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from sqlalchemy import update
from sqlalchemy.orm import Session

from kindling.platform.base import utcnow
from kindling.platform.database import changed_rows
from kindling.wellbeing.models import WellbeingResponse


def delete_old_comments(db: Session, *, days: int, now: dt.datetime | None = None) -> int:
    """Delete wellbeing comments older than `days` days; how many. Answers and published figures stay."""
    before = (now or utcnow()) - dt.timedelta(days=days)
    return changed_rows(
        db,
        update(WellbeingResponse)
        .where(WellbeingResponse.created_at < before, WellbeingResponse.comment.is_not(None))
        .values(comment=None)
        .execution_options(synchronize_session=False),
    )


def chore(days: int) -> Callable[[Session], None]:
    """The worker's chore that applies the retention."""

    def apply(db: Session) -> None:
        delete_old_comments(db, days=days)

    return apply
