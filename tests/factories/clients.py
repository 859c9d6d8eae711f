"""Invitations and client relationships, made through the services the API uses."""

from __future__ import annotations

from sqlalchemy.orm import Session

from kindling.persistence.clients import ClientRelationship, Invitation
from kindling.services import clients
from tests.factories import Account


def invitation(db: Session, consultant: Account, admin: Account, message: str | None = None) -> Invitation:
    """A pending invitation from `consultant` to the organization `admin` administers."""
    return clients.send_invitation(
        db, consultant_id=consultant.user.id, organization_id=admin.organization_id, message=message
    )


def client(db: Session, consultant: Account, admin: Account) -> ClientRelationship:
    """An active relationship: `admin`'s organization accepted an invitation from `consultant`."""
    sent = invitation(db, consultant, admin)
    return clients.accept_invitation(db, organization_id=admin.organization_id, invitation_id=sent.id)
