"""Donations, whose status only the payment provider's webhook moves."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from kindling.platform.base import Base, new_id, utcnow


class Donation(Base):
    __tablename__ = "donations"
    __table_args__ = (
        # Compliance and portfolio reports count succeeded donations per organization and period.
        Index("ix_donations_organization_id_created_at", "organization_id", "created_at"),
        Index("ix_donations_user_id_created_at", "user_id", "created_at"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id"))
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id"))
    amount: Mapped[int]  # minor units of `currency`
    currency: Mapped[str] = mapped_column(String(3))
    recipient_name: Mapped[str] = mapped_column(String(200))
    recipient_registration_number: Mapped[str | None] = mapped_column(String(64))
    note: Mapped[str | None] = mapped_column(String(1000))
    status: Mapped[str] = mapped_column(String(16), default="pending")
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    succeeded_at: Mapped[dt.datetime | None]
