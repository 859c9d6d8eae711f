"""Donations, whose status only the payment provider's webhook moves, and the giving programs that match them:
programs, the requests they make, and the ledger rows that reserve caps and budgets."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import JSON, BigInteger, Date, ForeignKey, Index, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from kindling.accounts.models import User
from kindling.platform.base import Base, new_id, utcnow


class Donation(Base):
    __tablename__ = "donations"
    __table_args__ = (
        # Evidence reconciliation reads an organization's records in id order, and on PostgreSQL
        # finds the facts it compares in the index (kindling/evidence/reconcile.py), not the table.
        Index(
            "ix_donations_organization_id_id",
            "organization_id",
            "id",
            postgresql_include=["created_at", "amount", "currency", "status"],
        ),
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

    # The giver, whom a match checks for eligibility; loaded with the donation by the payment webhook.
    user: Mapped[User] = relationship(lazy="raise_on_sql")


class GivingProgram(Base):
    """A matching-gift or volunteer-grant program of one organization (docs/decisions.md §14)."""

    __tablename__ = "giving_programs"
    __table_args__ = (Index("ix_giving_programs_organization_id_created_at", "organization_id", "created_at", "id"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id"))
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str | None] = mapped_column(String(2000))
    kind: Mapped[str] = mapped_column(String(16))  # donation_match | volunteer_grant
    active: Mapped[bool]
    period_start_month: Mapped[int]
    # ISO 4217; every money figure of the program and of its requests is in its minor units.
    currency: Mapped[str] = mapped_column(String(3))
    per_person_cap: Mapped[int] = mapped_column(BigInteger)
    budget: Mapped[int | None] = mapped_column(BigInteger)
    approval: Mapped[str] = mapped_column(String(8))  # auto | review
    # Null means everyone.
    eligible_roles: Mapped[list[str] | None] = mapped_column(JSON)
    eligible_departments: Mapped[list[str] | None] = mapped_column(JSON)
    ratio_percent: Mapped[int | None]
    minimum_gift: Mapped[int | None] = mapped_column(BigInteger)
    maximum_match_per_gift: Mapped[int | None] = mapped_column(BigInteger)
    rate_per_hour: Mapped[int | None] = mapped_column(BigInteger)
    minimum_hours: Mapped[float | None]
    # Counts changes; a request keeps the version it was computed under.
    version: Mapped[int] = mapped_column(default=1)
    created_by: Mapped[str] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class GivingPeriod(Base):
    """What a program has reserved in one period, and its requests tallied by status for the summary;
    its row lock orders reservations against the budget."""

    __tablename__ = "giving_periods"

    program_id: Mapped[str] = mapped_column(ForeignKey("giving_programs.id"), primary_key=True)
    period_start: Mapped[dt.date] = mapped_column(Date, primary_key=True)
    reserved: Mapped[int] = mapped_column(BigInteger, default=0)
    requested_count: Mapped[int] = mapped_column(default=0)
    approved_count: Mapped[int] = mapped_column(default=0)
    paid_count: Mapped[int] = mapped_column(default=0)
    declined_count: Mapped[int] = mapped_column(default=0)
    reversed_count: Mapped[int] = mapped_column(default=0)
    ineligible_count: Mapped[int] = mapped_column(default=0)
    requested_amount: Mapped[int] = mapped_column(BigInteger, default=0)
    approved_amount: Mapped[int] = mapped_column(BigInteger, default=0)
    paid_amount: Mapped[int] = mapped_column(BigInteger, default=0)
    # Hours of the approved and paid grants.
    granted_hours: Mapped[float] = mapped_column(default=0.0)


class GivingLedger(Base):
    """What one person has reserved of a program in one period; its row lock orders reservations against the cap."""

    __tablename__ = "giving_ledgers"

    program_id: Mapped[str] = mapped_column(ForeignKey("giving_programs.id"), primary_key=True)
    period_start: Mapped[dt.date] = mapped_column(Date, primary_key=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id"), primary_key=True)
    reserved: Mapped[int] = mapped_column(BigInteger, default=0)


class GivingRequest(Base):
    """A match of one donation, or a grant for claimed hours, as the program computed it."""

    __tablename__ = "giving_requests"
    __table_args__ = (
        # Read in id order by evidence reconciliation, the facts it compares in the index on PostgreSQL.
        Index(
            "ix_giving_requests_organization_id_id",
            "organization_id",
            "id",
            postgresql_include=[
                "created_at",
                "program_id",
                "program_version",
                "kind",
                "status",
                "amount",
                "computed_amount",
                "capped",
                "currency",
            ],
        ),
        # One match per donation and program, however often the payment provider replays.
        UniqueConstraint("donation_id", "program_id"),
        Index("ix_giving_requests_organization_id_created_at", "organization_id", "created_at", "id"),
        Index("ix_giving_requests_user_id_created_at", "user_id", "created_at", "id"),
        Index("ix_giving_requests_program_id_period_start", "program_id", "period_start", "status"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id"))
    program_id: Mapped[str] = mapped_column(ForeignKey("giving_programs.id"))
    program_version: Mapped[int]
    kind: Mapped[str] = mapped_column(String(16))
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id"))
    donation_id: Mapped[str | None] = mapped_column(ForeignKey("donations.id"))
    period_start: Mapped[dt.date] = mapped_column(Date)
    # requested | approved | paid | declined | reversed | ineligible
    status: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str | None] = mapped_column(String(32))  # why a request is ineligible
    gift_amount: Mapped[int | None] = mapped_column(BigInteger)
    ratio_percent: Mapped[int | None]
    hours: Mapped[float | None]
    rate_per_hour: Mapped[int | None] = mapped_column(BigInteger)
    # What the program's rule gives before caps, and what was reserved after them.
    computed_amount: Mapped[int] = mapped_column(BigInteger)
    amount: Mapped[int] = mapped_column(BigInteger)
    currency: Mapped[str] = mapped_column(String(3))
    capped: Mapped[bool] = mapped_column(default=False)
    clawback: Mapped[bool] = mapped_column(default=False)
    recipient_name: Mapped[str] = mapped_column(String(200))
    recipient_registration_number: Mapped[str | None] = mapped_column(String(64))
    decided_by: Mapped[str | None] = mapped_column(ForeignKey("users.id"))
    decided_at: Mapped[dt.datetime | None]
    decision_reason: Mapped[str | None] = mapped_column(String(200))
    decision_note: Mapped[str | None] = mapped_column(String(2000))
    payout_reference: Mapped[str | None] = mapped_column(String(200))
    paid_by: Mapped[str | None] = mapped_column(ForeignKey("users.id"))
    paid_at: Mapped[dt.datetime | None]
    reversed_at: Mapped[dt.datetime | None]
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class GivingClaim(Base):
    """A verified check-in a grant request claimed; the primary key claims each check-in once."""

    __tablename__ = "giving_claims"

    check_in_id: Mapped[str] = mapped_column(ForeignKey("volunteer_check_ins.id"), primary_key=True)
    request_id: Mapped[str] = mapped_column(ForeignKey("giving_requests.id"), index=True)
