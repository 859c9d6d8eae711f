"""The directory side of an organization: SCIM tokens, and people and groups provisioned over SCIM."""

from __future__ import annotations

from sqlalchemy.orm import Session

from kindling.accounts.scim import tokens
from tests.factories.accounts import Account


class Directory:
    """Methods of `make` (`tests.factories.Factories`)."""

    db: Session

    def scim_token(self, admin: Account) -> dict:
        """Headers carrying a new SCIM token of the admin's organization."""
        _, secret = tokens.create_token(
            self.db, organization_id=admin.organization_id, created_by=admin.user.id, description="Directory"
        )
        self.db.flush()
        return {"Authorization": f"Bearer {secret}", "Content-Type": "application/scim+json"}
