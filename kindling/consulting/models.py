"""Consultants' invitations to organizations, the client relationships they lead to, and the milestones clients reach."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import ForeignKey, Index, Integer, String, text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from kindling.accounts.models import Organization, User
from kindling.platform.base import Base, new_id, utcnow

# Stored invitation statuses. A `pending` row whose expires_at has passed is shown as
# `expired`; it is stored as `expired` only once a newer invitation replaces it.
PENDING, ACCEPTED, DECLINED, CANCELLED, EXPIRED = "pending", "accepted", "declined", "cancelled", "expired"
ACTIVE, ENDED = "active", "ended"


class Invitation(Base):
    __tablename__ = "invitations"
    __table_args__ = (
        # At most one open invitation per consultant and organization, so sending is idempotent.
        Index(
            "uq_invitations_pending_pair",
            "consultant_id",
            "organization_id",
            unique=True,
            sqlite_where=text("status = 'pending'"),
            postgresql_where=text("status = 'pending'"),
        ),
        Index("ix_invitations_organization_id_created_at", "organization_id", "created_at"),
        Index("ix_invitations_consultant_id_created_at", "consultant_id", "created_at"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    consultant_id: Mapped[str] = mapped_column(ForeignKey("users.id"))
    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id"))
    status: Mapped[str] = mapped_column(String(16), default=PENDING)
    message: Mapped[str | None] = mapped_column(String(1000))
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[dt.datetime]
    # When the invitation left `pending`: accepted, declined or cancelled.
    responded_at: Mapped[dt.datetime | None]

    consultant: Mapped[User] = relationship(lazy="raise_on_sql")
    organization: Mapped[Organization] = relationship(lazy="raise_on_sql")

    def status_at(self, now: dt.datetime) -> str:
        """The status a client sees at `now`: a pending invitation past its expiry is `expired`."""
        if self.status == PENDING and self.expires_at <= now:
            return EXPIRED
        return self.status


class ClientRelationship(Base):
    """One period during which an organization is a consultant's client; a new one starts each time."""

    __tablename__ = "client_relationships"
    __table_args__ = (
        Index(
            "uq_client_relationships_active_pair",
            "consultant_id",
            "organization_id",
            unique=True,
            sqlite_where=text("status = 'active'"),
            postgresql_where=text("status = 'active'"),
        ),
        Index("ix_client_relationships_organization_id", "organization_id"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    consultant_id: Mapped[str] = mapped_column(ForeignKey("users.id"))
    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id"))
    invitation_id: Mapped[str] = mapped_column(ForeignKey("invitations.id"), unique=True)
    status: Mapped[str] = mapped_column(String(16), default=ACTIVE)
    accepted_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    ended_at: Mapped[dt.datetime | None]

    consultant: Mapped[User] = relationship(lazy="raise_on_sql")
    organization: Mapped[Organization] = relationship(lazy="raise_on_sql")


class PortfolioMilestone(Base):
    """A threshold an organization's metric has crossed; its key makes each milestone happen once."""

    __tablename__ = "portfolio_milestones"

    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id"), primary_key=True)
    metric: Mapped[str] = mapped_column(String(32), primary_key=True)
    threshold: Mapped[int] = mapped_column(Integer, primary_key=True)
    reached_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
