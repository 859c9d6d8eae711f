"""Wellbeing survey responses and the published figures of each organization's calendar weeks."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import ForeignKey, Index, SmallInteger, String
from sqlalchemy.orm import Mapped, mapped_column

from kindling.platform.base import Base, new_id, utcnow


class WellbeingResponse(Base):
    __tablename__ = "wellbeing_responses"
    __table_args__ = (
        Index("ix_wellbeing_responses_organization_id_created_at", "organization_id", "created_at"),
        Index("ix_wellbeing_responses_user_id_created_at", "user_id", "created_at"),
        Index("ix_wellbeing_responses_organization_id_week_start", "organization_id", "week_start", "published_in"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id"))
    # Kept for anonymous responses too: the author reads its own, and each person counts
    # once toward the minimum group size of the aggregates.
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id"))
    mood: Mapped[int] = mapped_column(SmallInteger)
    stress: Mapped[int] = mapped_column(SmallInteger)
    energy: Mapped[int | None] = mapped_column(SmallInteger)
    comment: Mapped[str | None] = mapped_column(String(2000))
    anonymous: Mapped[bool]
    sentiment_label: Mapped[str] = mapped_column(String(8))
    sentiment_compound: Mapped[float]
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    # The Monday (UTC) of the calendar week of `created_at`.
    week_start: Mapped[dt.date]
    # The revision of its week's figures that first included it; None until then.
    published_in: Mapped[int | None]


class WellbeingWeek(Base):
    """The published figures of one organization's calendar week, served exactly as stored.

    The row exists from the week's first response on (revision 0: nothing published yet),
    so that answers and the publication after the week ends queue on its lock. Figures are
    stored as published: with noise (`epsilon` set) from revision 0017 on, and exactly as
    they were for weeks published before (`epsilon` None). From revision 0023 on a week is
    published once (revision 1); weeks published before keep their latest revision.
    """

    __tablename__ = "wellbeing_weeks"

    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id"), primary_key=True)
    week_start: Mapped[dt.date] = mapped_column(primary_key=True)
    revision: Mapped[int] = mapped_column(default=0)
    published_at: Mapped[dt.datetime | None]
    respondents: Mapped[int] = mapped_column(default=0)  # distinct people
    responses: Mapped[int] = mapped_column(default=0)
    mood_average: Mapped[float | None]
    stress_average: Mapped[float | None]
    # People who gave an energy value; None (with the average) while fewer than five did.
    energy_respondents: Mapped[int | None]
    energy_average: Mapped[float | None]
    # People's comments by sentiment label; None while fewer than five people commented.
    positive: Mapped[int | None]
    neutral: Mapped[int | None]
    negative: Mapped[int | None]
    # The privacy budget the published figures spent; None for weeks published without noise.
    epsilon: Mapped[float | None]
    # The budget all the week's publications spent together; None when one of them had no noise.
    epsilon_spent: Mapped[float | None]
