"""An organization's people: listing them, changing their roles, removing them (docs/decisions.md §2)."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from kindling.accounts import identity
from kindling.accounts import service as accounts
from kindling.accounts.models import Organization, User
from kindling.errors import Conflict, NotFound
from kindling.platform import pagination


def list_members(
    db: Session, *, organization_id: str, limit: int, cursor: str | None = None
) -> tuple[list[User], str | None]:
    """The organization's active people by name, one page at a time."""
    statement = select(User).where(User.organization_id == organization_id, User.active.is_(True))
    return pagination.page_by_name(db, statement, name=User.name, record_id=User.id, limit=limit, cursor=cursor)


def change_role(db: Session, *, organization_id: str, user_id: str, role: str) -> User:
    """Give a person of the organization another role; the last admin keeps theirs."""
    user = _member_for_change(db, organization_id=organization_id, user_id=user_id)
    if user.role == "admin" and role != "admin":
        _refuse_if_last_admin(db, organization_id=organization_id)
    if user.role != role:
        user.role = role
        # Cached sessions carry the role: the new one must take effect at the next request.
        accounts.forget_cached_sessions(db, user.id)
        db.flush()
    return user


def remove_member(db: Session, *, organization_id: str, user_id: str) -> None:
    """Deactivate a person of the organization and end their sessions; what they recorded stays."""
    user = _member_for_change(db, organization_id=organization_id, user_id=user_id)
    if user.role == "admin":
        _refuse_if_last_admin(db, organization_id=organization_id)
    identity.deactivate(db, user=user)


def _member_for_change(db: Session, *, organization_id: str, user_id: str) -> User:
    # Changes to one organization's roles are serialised on its row (a no-op on SQLite, whose
    # writers are serialised anyway), so two admins demoting each other cannot leave none.
    # FOR NO KEY UPDATE: rows that merely reference the organization are still inserted meanwhile.
    db.execute(select(Organization.id).where(Organization.id == organization_id).with_for_update(key_share=True))
    user = db.get(User, user_id, with_for_update=True, populate_existing=True)
    if user is None or user.organization_id != organization_id or not user.active:
        raise NotFound("No such member of this organization")
    return user


def _refuse_if_last_admin(db: Session, *, organization_id: str) -> None:
    admins = db.execute(
        select(func.count()).where(User.organization_id == organization_id, User.role == "admin", User.active.is_(True))
    ).scalar_one()
    if admins <= 1:
        raise Conflict("An organization keeps at least one admin", code="last_admin")
