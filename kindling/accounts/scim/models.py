"""What the directory told Kindling: SCIM tokens, the SCIM side of a person, groups and memberships."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import JSON, Boolean, ForeignKey, Index, Integer, String, UniqueConstraint, false
from sqlalchemy.orm import Mapped, mapped_column

from kindling.platform.base import Base, new_id, utcnow


class ScimToken(Base):
    """A bearer credential an identity provider uses on /scim/v2 for one organization."""

    __tablename__ = "scim_tokens"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id"), index=True)
    description: Mapped[str] = mapped_column(String(200))
    # SHA-256 of the token; the token itself is shown once, to the admin who made it.
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_by: Mapped[str] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    last_used_at: Mapped[dt.datetime | None]
    revoked_at: Mapped[dt.datetime | None]


class ScimUser(Base):
    """A person as the directory describes them; deleting it detaches the person from SCIM."""

    __tablename__ = "scim_users"
    __table_args__ = (
        # userName is unique in the organization without case: the key is its lower-cased NFC form.
        UniqueConstraint("organization_id", "user_name_key", name="uq_scim_users_organization_id_user_name_key"),
        Index("ix_scim_users_organization_id_external_id", "organization_id", "external_id"),
    )

    user_id: Mapped[str] = mapped_column(ForeignKey("users.id"), primary_key=True)
    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id"))
    user_name: Mapped[str] = mapped_column(String(255))
    user_name_key: Mapped[str] = mapped_column(String(255))
    external_id: Mapped[str | None] = mapped_column(String(255))
    display_name: Mapped[str | None] = mapped_column(String(255))
    given_name: Mapped[str | None] = mapped_column(String(255))
    family_name: Mapped[str | None] = mapped_column(String(255))
    title: Mapped[str | None] = mapped_column(String(255))
    # The value of the `work` email, lower-cased, for `emails[type eq "work"].value` filters.
    work_email: Mapped[str | None] = mapped_column(String(254))
    # The resource as sent (core and enterprise attributes, without id, meta, groups or password).
    resource: Mapped[dict] = mapped_column(JSON)
    # Whether the directory's `password` is the person's: only for an account that had none of its
    # own when it was provisioned, so a SCIM token never sets the password of someone who existed.
    sets_password: Mapped[bool] = mapped_column(Boolean, server_default=false())
    version: Mapped[int] = mapped_column(Integer, default=1)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class DirectoryGroup(Base):
    """A group of the directory; its `role`, set by an admin, is given to its members."""

    __tablename__ = "directory_groups"
    __table_args__ = (
        UniqueConstraint(
            "organization_id", "display_name_key", name="uq_directory_groups_organization_id_display_name_key"
        ),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id"))
    display_name: Mapped[str] = mapped_column(String(255))
    display_name_key: Mapped[str] = mapped_column(String(255))
    external_id: Mapped[str | None] = mapped_column(String(255))
    # "admin", "manager" or None: the role the group gives its members.
    role: Mapped[str | None] = mapped_column(String(16))
    version: Mapped[int] = mapped_column(Integer, default=1)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow)


class GroupMembership(Base):
    __tablename__ = "directory_group_members"

    group_id: Mapped[str] = mapped_column(ForeignKey("directory_groups.id", ondelete="CASCADE"), primary_key=True)
    # Found by person when their role is recomputed.
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id"), primary_key=True, index=True)
