"""Volunteer opportunities and the GPS check-ins members make at them."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import ForeignKey, Index, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from kindling.platform.base import Base, new_id, utcnow


class VolunteerOpportunity(Base):
    __tablename__ = "volunteer_opportunities"
    __table_args__ = (Index("ix_volunteer_opportunities_organization_id_starts_at", "organization_id", "starts_at"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id"))
    created_by: Mapped[str] = mapped_column(ForeignKey("users.id"))
    title: Mapped[str] = mapped_column(String(200))
    description: Mapped[str | None] = mapped_column(String(2000))
    starts_at: Mapped[dt.datetime]
    ends_at: Mapped[dt.datetime]
    latitude: Mapped[float]
    longitude: Mapped[float]
    radius_meters: Mapped[int]
    # Whether a check-in is verified only with the code shown at the venue (docs/decisions.md §7).
    require_code: Mapped[bool] = mapped_column(default=False)
    # The opportunity's RFC 6238 secret (base32); never leaves the server.
    code_secret: Mapped[str] = mapped_column(String(32))
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)

    @property
    def hours(self) -> float:
        """The opportunity's length."""
        return (self.ends_at - self.starts_at).total_seconds() / 3600


class CheckIn(Base):
    __tablename__ = "volunteer_check_ins"
    __table_args__ = (
        # Evidence reconciliation reads an organization's records in id order, and on PostgreSQL
        # finds the facts it compares in the index (kindling/evidence/reconcile.py), not the table.
        Index(
            "ix_volunteer_check_ins_organization_id_id",
            "organization_id",
            "id",
            postgresql_include=["checked_in_at", "user_id", "verified", "hours"],
        ),
        UniqueConstraint("opportunity_id", "user_id"),
        # Compliance and portfolio reports count check-ins and hours per organization and period.
        Index("ix_volunteer_check_ins_organization_id_checked_in_at", "organization_id", "checked_in_at"),
        # The organiser's list of an opportunity's check-ins, newest first.
        Index("ix_volunteer_check_ins_opportunity_id_checked_in_at", "opportunity_id", "checked_in_at", "id"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    opportunity_id: Mapped[str] = mapped_column(ForeignKey("volunteer_opportunities.id"))
    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id"))
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id"))
    checked_in_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    latitude: Mapped[float]
    longitude: Mapped[float]
    accuracy_meters: Mapped[float | None]
    distance_meters: Mapped[float]
    # The evidence: inside the geofence; the venue's code (None when none was given); an organiser's approval.
    location_verified: Mapped[bool]
    code_verified: Mapped[bool | None]
    approved_by: Mapped[str | None] = mapped_column(ForeignKey("users.id"))
    approved_at: Mapped[dt.datetime | None]
    approval_note: Mapped[str | None] = mapped_column(String(500))
    verified: Mapped[bool]
    # The time the person was there (docs/decisions.md §7): 0 until a check-out or an approval sets it.
    hours: Mapped[float] = mapped_column(default=0.0)
    checked_out_at: Mapped[dt.datetime | None]
