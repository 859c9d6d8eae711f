"""Deactivating and reactivating a member, whoever asks: an admin, the directory, the identity provider."""

from __future__ import annotations

from sqlalchemy.orm import Session

from kindling.accounts import authority, identity, roles
from kindling.accounts.events import MEMBER_DEACTIVATED, MEMBER_REACTIVATED
from kindling.accounts.models import User


def deactivate(db: Session, *, user: User, actor_id: str | None, source: str) -> bool:
    """Deactivate `user` and revoke every session and token they hold; the last admin stays (409)."""
    if not user.active:
        return False
    roles.refuse_if_last_admin(db, user=user)
    identity.deactivate(db, user=user)
    authority.record(db, user=user, type=MEMBER_DEACTIVATED, actor_id=actor_id, data={"source": source})
    return True


def reactivate(db: Session, *, user: User, actor_id: str | None, source: str) -> bool:
    """Let a deactivated member sign in again."""
    if user.active:
        return False
    user.active = True
    db.flush()
    authority.record(db, user=user, type=MEMBER_REACTIVATED, actor_id=actor_id, data={"source": source})
    return True
