"""The organization's row lock, which serialises the changes to what one organization counts."""

from __future__ import annotations

import typing

from sqlalchemy import Table, bindparam, select
from sqlalchemy.orm import Session

from kindling.accounts.models import Organization
from kindling.platform import write_behind

_organizations = typing.cast(Table, Organization.__table__)
# Built once, and run as Core on the session's connection: every act, decision and role change
# takes this lock, and building the statement or the ORM's bookkeeping of it costs more than
# running it.
_LOCK = (
    select(_organizations.c.id).where(_organizations.c.id == bindparam("organization")).with_for_update(key_share=True)
)


def lock_organization(db: Session, organization_id: str) -> None:
    """Hold the organization's changes (acts and their tallies, roles and lines, tokens, settings)
    behind this transaction until it ends."""
    # PostgreSQL locks the organization's row without writing a version of it (NO KEY: members and
    # acts referencing it are not held up); SQLite's transactions hold its one writer lock from
    # their start (kindling/platform/database.py). Its answer is not read: the lock is sent with
    # the transaction's next statement, the first it holds back.
    write_behind.send_later(db, _LOCK, {"organization": organization_id})
