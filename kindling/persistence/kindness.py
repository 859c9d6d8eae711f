"""Kindness acts, and the running tallies the statistics are read from."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import JSON, ForeignKey, Index, Integer, SmallInteger, String
from sqlalchemy.orm import Mapped, mapped_column

from kindling.persistence.base import Base, new_id, utcnow


class KindnessAct(Base):
    __tablename__ = "kindness_acts"
    __table_args__ = (
        # Newest-first pages and date ranges of one organization (scanned backwards).
        Index("ix_kindness_acts_organization_created", "organization_id", "created_at", "id"),
        # Acts sent by one person: the `userId` filter and the ripple count of a new act.
        Index("ix_kindness_acts_organization_sender", "organization_id", "user_id", "created_at", "id"),
        # Acts received by one person: the ripple counts a new act of theirs raises.
        Index("ix_kindness_acts_organization_recipient", "organization_id", "recipient_id", "created_at"),
        # Compliance reports and the portfolio export count acts per organization and period by
        # level and category: covering, so they read the index alone (migration 0007).
        Index(
            "ix_kindness_acts_organization_created_evidence",
            "organization_id",
            "created_at",
            "verification_level",
            "category",
        ),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id"))
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id"))
    recipient_id: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(String(2000))
    category: Mapped[str] = mapped_column(String(32))
    verification_level: Mapped[int] = mapped_column(SmallInteger)
    media: Mapped[list] = mapped_column(JSON, default=list)
    # min(10, acts the recipient sent in the 30 days after this act), kept exact on every create.
    ripple_count: Mapped[int] = mapped_column(SmallInteger, default=0)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class KindnessTally(Base):
    """Per organization and category: how many acts, and the sums their ripple scores are made of."""

    __tablename__ = "kindness_tallies"

    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id"), primary_key=True)
    category: Mapped[str] = mapped_column(String(32), primary_key=True)
    acts: Mapped[int] = mapped_column(Integer, default=0)
    verification_sum: Mapped[int] = mapped_column(Integer, default=0)
    ripple_sum: Mapped[int] = mapped_column(Integer, default=0)


class KindnessRecipientTally(Base):
    """Per organization and recipient: how many acts the recipient was given."""

    __tablename__ = "kindness_recipient_tallies"
    __table_args__ = (Index("ix_kindness_recipient_tallies_organization_acts", "organization_id", "acts"),)

    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id"), primary_key=True)
    recipient_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    acts: Mapped[int] = mapped_column(Integer, default=0)
