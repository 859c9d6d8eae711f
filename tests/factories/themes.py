"""Saved organization themes, made through the service the API uses."""

from __future__ import annotations

from sqlalchemy.orm import Session

from kindling.branding import service as themes
from kindling.branding.models import OrganizationTheme
from kindling.themes import generate_theme
from tests.factories.accounts import Account


class Themes:
    """Methods of `make` (`tests.factories.Factories`)."""

    db: Session

    def saved_theme(self, consultant: Account, admin: Account, theme: dict | None = None) -> OrganizationTheme:
        """`theme` (by default one generated from #3366ff) saved by `consultant` for `admin`'s organization.

        The consultant must already have an active relationship with the organization.
        """
        return themes.save_theme(
            self.db,
            consultant_id=consultant.user.id,
            organization_id=admin.organization_id,
            theme=theme or generate_theme("#3366ff"),
        )
