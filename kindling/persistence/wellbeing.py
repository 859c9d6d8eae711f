"""Wellbeing survey responses."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import ForeignKey, Index, SmallInteger, String
from sqlalchemy.orm import Mapped, mapped_column

from kindling.persistence.base import Base, new_id, utcnow


class WellbeingResponse(Base):
    __tablename__ = "wellbeing_responses"
    __table_args__ = (
        Index("ix_wellbeing_responses_organization_id_created_at", "organization_id", "created_at"),
        Index("ix_wellbeing_responses_user_id_created_at", "user_id", "created_at"),
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
