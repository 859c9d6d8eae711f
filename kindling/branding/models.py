"""Each organization's saved colour theme."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import JSON, ForeignKey
from sqlalchemy.orm import Mapped, mapped_column, relationship

from kindling.accounts.models import Organization
from kindling.platform.base import Base, utcnow


class OrganizationTheme(Base):
    """The one theme of an organization, replaced by each save."""

    __tablename__ = "organization_themes"

    organization_id: Mapped[str] = mapped_column(ForeignKey("organizations.id"), primary_key=True)
    # Each mode maps the 31 colour names to "L C H" values.
    light: Mapped[dict[str, str]] = mapped_column(JSON)
    dark: Mapped[dict[str, str]] = mapped_column(JSON)
    updated_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    # The consultant who saved it last.
    updated_by: Mapped[str] = mapped_column(ForeignKey("users.id"), index=True)

    organization: Mapped[Organization] = relationship(lazy="raise_on_sql")

    def as_theme(self) -> dict[str, dict[str, str]]:
        """The theme as `{light: {...}, dark: {...}}`."""
        return {"light": self.light, "dark": self.dark}
