"""Organizations, users and their sessions."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import Boolean, ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from kindling.platform.base import Base, new_id, utcnow


class Organization(Base):
    __tablename__ = "organizations"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(String(200))
    slug: Mapped[str] = mapped_column(String(220), unique=True)
    join_code: Mapped[str] = mapped_column(String(32), unique=True)
    currency: Mapped[str] = mapped_column(String(3), default="USD")
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class User(Base):
    __tablename__ = "users"
    # The organization's people are listed by name, a page at a time.
    __table_args__ = (Index("ix_users_organization_id_name", "organization_id", "name", "id"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    email: Mapped[str] = mapped_column(String(254), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    password_hash: Mapped[str] = mapped_column(String(255))
    account_type: Mapped[str] = mapped_column(String(16))
    organization_id: Mapped[str | None] = mapped_column(ForeignKey("organizations.id"), index=True)
    # "admin", "manager" or "member" for members of an organization; None for consultants.
    role: Mapped[str | None] = mapped_column(String(16))
    # The role an admin set by hand; `role` is the highest of it and the roles of the person's
    # directory groups (docs/decisions.md §13).
    hand_role: Mapped[str | None] = mapped_column(String(16))
    firm_name: Mapped[str | None] = mapped_column(String(200))
    # Identifier of the same person at the identity provider, for its webhooks.
    external_id: Mapped[str | None] = mapped_column(String(255), unique=True)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    # The reporting line: who this person reports to, from the directory or an admin.
    manager_id: Mapped[str | None] = mapped_column(ForeignKey("users.id"), index=True)
    department: Mapped[str | None] = mapped_column(String(255))
    employee_number: Mapped[str | None] = mapped_column(String(255))
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    # When the person's data was erased (docs/decisions.md §15); the row stays as a pseudonym.
    erased_at: Mapped[dt.datetime | None]


class Session(Base):
    __tablename__ = "sessions"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id"), index=True)
    # SHA-256 of the bearer token; the token itself is never stored.
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[dt.datetime]
    revoked_at: Mapped[dt.datetime | None]
