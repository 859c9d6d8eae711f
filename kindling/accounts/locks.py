"""The organization's row lock, which serialises the changes to what one organization counts."""

from __future__ import annotations

import typing

from sqlalchemy import Table, bindparam, update
from sqlalchemy.orm import Session

from kindling.accounts.models import Organization

_organizations = typing.cast(Table, Organization.__table__)
# Built once, and run as Core on the session's connection: every act, decision and role change
# takes this lock, and building the statement or the ORM's bookkeeping of it costs more than
# running it.
_LOCK = update(_organizations).where(_organizations.c.id == bindparam("organization")).values(id=_organizations.c.id)


def lock_organization(db: Session, organization_id: str) -> None:
    """Hold the organization's changes (acts and their tallies, roles and lines, tokens, settings)
    behind this transaction until it ends."""
    # A write that changes nothing, so that it is the transaction's first statement on every backend:
    # PostgreSQL locks the organization's row (NO KEY: members and acts referencing it are not held up);
    # SQLite takes its one writer lock, waiting for it, before anything is read.
    db.connection().execute(_LOCK, {"organization": organization_id})
