"""The organization's row lock, which serialises the changes to what one organization counts."""

from __future__ import annotations

from sqlalchemy import update
from sqlalchemy.orm import Session

from kindling.accounts.models import Organization


def lock_organization(db: Session, organization_id: str) -> None:
    """Hold the organization's changes (acts and their tallies, roles and lines, tokens, settings)
    behind this transaction until it ends."""
    # A write that changes nothing, so that it is the transaction's first statement on every backend:
    # PostgreSQL locks the organization's row (NO KEY: members and acts referencing it are not held up);
    # SQLite takes its one writer lock, waiting for it, before anything is read.
    db.execute(
        update(Organization)
        .where(Organization.id == organization_id)
        .values(id=Organization.id)
        .execution_options(synchronize_session=False)
    )
