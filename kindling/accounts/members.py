"""An organization's people: listing them, their roles and reporting lines, removing them (docs/decisions.md §2, §13)."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from kindling.accounts import lifecycle, reporting_lines, roles
from kindling.accounts.locks import lock_organization
from kindling.accounts.models import User
from kindling.accounts.scim.models import DirectoryGroup, GroupMembership
from kindling.errors import NotFound
from kindling.platform import pagination
from kindling.platform.access import canonical_id


def list_members(
    db: Session, *, organization_id: str, limit: int, cursor: str | None = None
) -> tuple[list[User], str | None]:
    """The organization's active people by name, one page at a time."""
    statement = select(User).where(User.organization_id == organization_id, User.active.is_(True))
    return pagination.page_by_name(db, statement, name=User.name, record_id=User.id, limit=limit, cursor=cursor)


def groups_of(db: Session, user_ids: list[str]) -> dict[str, list[dict]]:
    """The directory groups of each of these people, by name: `{userId: [{id, displayName}]}`."""
    found: dict[str, list[dict]] = {user_id: [] for user_id in user_ids}
    if not user_ids:
        return found
    rows = db.execute(
        select(GroupMembership.user_id, DirectoryGroup.id, DirectoryGroup.display_name)
        .join(DirectoryGroup, DirectoryGroup.id == GroupMembership.group_id)
        .where(GroupMembership.user_id.in_(user_ids))
        .order_by(DirectoryGroup.display_name_key, DirectoryGroup.id)
    )
    for user_id, group_id, name in rows:
        found[user_id].append({"id": group_id, "displayName": name})
    return found


def find_by_email(db: Session, *, organization_id: str, email: str) -> User | None:
    """The organization's person, active or not, whose sign-in email is `email` (compared without case)."""
    return db.scalar(
        select(User).where(
            User.organization_id == organization_id,
            User.account_type == "member",
            func.lower(User.email) == email.strip().lower(),
        )
    )


def update_member(db: Session, *, organization_id: str, user_id: str, actor_id: str, changes: dict) -> User:
    """Change a person's hand-set role, auditor grant and/or line manager; the last admin keeps theirs."""
    user = _member_for_change(db, organization_id=organization_id, user_id=user_id)
    if "role" in changes:
        roles.set_hand_role(db, user=user, role=changes["role"], actor_id=actor_id)
    if "auditor" in changes:
        roles.set_hand_auditor(db, user=user, auditor=changes["auditor"], actor_id=actor_id)
    if "managerId" in changes:
        reporting_lines.set_manager(db, user=user, manager_id=changes["managerId"], actor_id=actor_id, source="hand")
    return user


def remove_member(db: Session, *, organization_id: str, user_id: str, actor_id: str) -> None:
    """Deactivate a person of the organization and end their sessions; what they recorded stays."""
    user = _member_for_change(db, organization_id=organization_id, user_id=user_id)
    lifecycle.deactivate(db, user=user, actor_id=actor_id, source="hand")


def _member_for_change(db: Session, *, organization_id: str, user_id: str) -> User:
    lock_organization(db, organization_id)
    user = db.get(User, canonical_id(user_id), with_for_update=True, populate_existing=True)
    if user is None or user.organization_id != organization_id or not user.active:
        raise NotFound("No such member of this organization")
    return user
