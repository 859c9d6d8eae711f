"""Invitations and client relationships, made through the services the API uses."""

from __future__ import annotations

from sqlalchemy.orm import Session

from kindling.consulting import clients
from kindling.consulting.models import ClientRelationship, Invitation
from tests.factories.accounts import Account


class Clients:
    """Methods of `make` (`tests.factories.Factories`)."""

    db: Session

    def invitation(self, consultant: Account, admin: Account, message: str | None = None) -> Invitation:
        """A pending invitation from `consultant` to the organization `admin` administers."""
        return clients.send_invitation(
            self.db, consultant_id=consultant.user.id, organization_id=admin.organization_id, message=message
        )

    def client(self, consultant: Account, admin: Account) -> ClientRelationship:
        """An active relationship: `admin`'s organization accepted an invitation from `consultant`."""
        sent = self.invitation(consultant, admin)
        return clients.accept_invitation(self.db, organization_id=admin.organization_id, invitation_id=sent.id)
