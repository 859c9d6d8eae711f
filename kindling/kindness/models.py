"""Kindness acts, and the running tallies the statistics are read from."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import JSON, ForeignKey, Index, Integer, SmallInteger, String, text
from sqlalchemy.orm import Mapped, mapped_column

from kindling.platform.base import Base, new_id, utcnow


class KindnessAct(Base):
    __tablename__ = "kindness_acts"
    __table_args__ = (
        # Evidence reconciliation reads an organization's records in id order, and on PostgreSQL
        # finds the facts it compares in the index (kindling/evidence/reconcile.py), not the table.
        Index(
            "ix_kindness_acts_organization_id_id",
            "organization_id",
            "id",
            postgresql_include=[
                "created_at",
                "category",
                "verification_level",
                "verified_level",
                "verification_status",
            ],
        ),
        # Newest-first pages and date ranges of one organization (scanned backwards).
        Index("ix_kindness_acts_organization_created", "organization_id", "created_at", "id"),
        # Acts sent by one person: the `userId` filter and the ripple count of a new act.
        Index("ix_kindness_acts_organization_sender", "organization_id", "user_id", "created_at", "id"),
        # Acts received by one person: the ripple counts a new act of theirs raises.
        Index("ix_kindness_acts_organization_recipient", "organization_id", "recipient_id", "created_at"),
        # Compliance reports and the portfolio export count acts per organization and period by
        # verified level and category: covering, so they read the index alone.
        Index(
            "ix_kindness_acts_organization_created_verified",
            "organization_id",
            "created_at",
            "verified_level",
            "category",
        ),
        # The acts waiting for a manager's or an admin's decision.
        Index("ix_kindness_acts_organization_awaiting", "organization_id", "verification_awaiting", "created_at", "id"),
        # The acts of one sender waiting for a decision, newest first: a manager's reports in the
        # pending list (kindling/kindness/verification.py), read from the index alone. Only
        # waiting acts are in it.
        Index(
            "ix_kindness_acts_organization_sender_awaiting",
            "organization_id",
            "user_id",
            "verification_awaiting",
            "created_at",
            "id",
            postgresql_where=text("verification_awaiting IS NOT NULL"),
            sqlite_where=text("verification_awaiting IS NOT NULL"),
        ),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id"))
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id"))
    recipient_id: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(String(2000))
    category: Mapped[str] = mapped_column(String(32))
    # The level the sender (or later an admin) asked to have verified.
    verification_level: Mapped[int] = mapped_column(SmallInteger)
    # The highest level whose evidence is on record, with the request's status and who acts next:
    # kept by the verification service, so that pages and reports read them from the row.
    verified_level: Mapped[int] = mapped_column(SmallInteger, default=1)
    verification_status: Mapped[str] = mapped_column(String(16))
    verification_awaiting: Mapped[str | None] = mapped_column(String(16))
    media: Mapped[list] = mapped_column(JSON, default=list)
    # min(10, acts the recipient sent in the 30 days after this act), kept exact on every create.
    ripple_count: Mapped[int] = mapped_column(SmallInteger, default=0)
    # Where the act was recorded: "api", or "slack" for the Slack app's command and shortcut.
    source: Mapped[str] = mapped_column(String(16), default="api", server_default="api")
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class KindnessTally(Base):
    """Per organization and category: how many acts, and the sums their ripple scores are made of."""

    __tablename__ = "kindness_tallies"

    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id"), primary_key=True)
    category: Mapped[str] = mapped_column(String(32), primary_key=True)
    acts: Mapped[int] = mapped_column(Integer, default=0)
    # Sum of the acts' verified levels.
    verification_sum: Mapped[int] = mapped_column(Integer, default=0)
    ripple_sum: Mapped[int] = mapped_column(Integer, default=0)


class KindnessRecipientTally(Base):
    """Per organization and recipient: how many acts the recipient was given."""

    __tablename__ = "kindness_recipient_tallies"
    __table_args__ = (Index("ix_kindness_recipient_tallies_organization_acts", "organization_id", "acts"),)

    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id"), primary_key=True)
    recipient_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    acts: Mapped[int] = mapped_column(Integer, default=0)
