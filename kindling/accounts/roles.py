"""A member's role: the highest of the role set by hand and the roles of their directory groups.

Recomputed whenever either changes (docs/decisions.md §13); an organization always keeps an admin.
"""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from kindling.accounts import authority
from kindling.accounts import service as accounts
from kindling.accounts.events import MEMBER_AUDITOR_SET, MEMBER_ROLE_CHANGED
from kindling.accounts.models import User
from kindling.accounts.scim.models import DirectoryGroup, GroupMembership
from kindling.errors import Conflict

RANK = {"member": 0, "manager": 1, "admin": 2}


def refuse_if_last_admin(db: Session, *, user: User) -> None:
    """409 when `user` is the organization's only active admin."""
    if user.role != "admin" or not user.active:
        return
    admins = db.execute(
        select(func.count()).where(
            User.organization_id == user.organization_id, User.role == "admin", User.active.is_(True)
        )
    ).scalar_one()
    if admins <= 1:
        raise Conflict("An organization keeps at least one admin: this is its last", code="last_admin")


# What a directory group may be mapped to: a role, or the auditor grant beside it.
AUDITOR = "auditor"


def _group_mappings(db: Session, user_id: str) -> list[str]:
    return list(
        db.scalars(
            select(DirectoryGroup.role)
            .join(GroupMembership, GroupMembership.group_id == DirectoryGroup.id)
            .where(GroupMembership.user_id == user_id, DirectoryGroup.role.is_not(None))
        )
    )


def group_roles(db: Session, user_id: str) -> list[str]:
    """The roles the person's directory groups give (not the auditor grant)."""
    return [role for role in _group_mappings(db, user_id) if role in RANK]


def recompute(db: Session, *, user: User, actor_id: str | None, source: str) -> None:
    """Give `user` the highest of their hand-set role and their groups' roles, and the auditor
    grant when given by hand or by a group, recording each change."""
    mappings = _group_mappings(db, user.id)
    _set_auditor(db, user=user, auditor=user.hand_auditor or AUDITOR in mappings, actor_id=actor_id, source=source)
    candidates = [user.hand_role or "member", *(role for role in mappings if role in RANK)]
    role = max(candidates, key=RANK.__getitem__)
    if role == user.role:
        return
    if RANK[role] < RANK[user.role or "member"]:
        refuse_if_last_admin(db, user=user)
    previous, user.role = user.role, role
    # Cached sessions carry the role: the new one must take effect at the next request.
    accounts.forget_cached_sessions(db, user.id)
    db.flush()
    if user.active:
        authority.record(
            db,
            user=user,
            type=MEMBER_ROLE_CHANGED,
            actor_id=actor_id,
            data={"from": previous, "to": role, "source": source},
        )


def set_hand_role(db: Session, *, user: User, role: str, actor_id: str) -> None:
    """The role an admin gives by hand; the person keeps a higher one their groups give."""
    user.hand_role = role
    recompute(db, user=user, actor_id=actor_id, source="hand")


def set_hand_auditor(db: Session, *, user: User, auditor: bool, actor_id: str) -> None:
    """The auditor grant an admin gives or takes by hand; a group mapped to `auditor` still gives it."""
    user.hand_auditor = auditor
    recompute(db, user=user, actor_id=actor_id, source="hand")


def _set_auditor(db: Session, *, user: User, auditor: bool, actor_id: str | None, source: str) -> None:
    if auditor == user.auditor:
        return
    user.auditor = auditor
    # As for a role: cached sessions carry the grant, and the change applies at the next request.
    accounts.forget_cached_sessions(db, user.id)
    db.flush()
    if user.active:
        authority.record(
            db, user=user, type=MEMBER_AUDITOR_SET, actor_id=actor_id, data={"auditor": auditor, "source": source}
        )
