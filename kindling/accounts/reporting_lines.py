"""Reporting lines: who a person reports to, never looping, within one organization (docs/decisions.md §13)."""

from __future__ import annotations

from sqlalchemy import Select, select
from sqlalchemy.orm import Session

from kindling.accounts import authority
from kindling.accounts.events import MEMBER_MANAGER_SET
from kindling.accounts.models import User
from kindling.errors import invalid

# Far beyond any real hierarchy; a chain is read at most this deep.
MAX_DEPTH = 64


def set_manager(
    db: Session, *, user: User, manager_id: str | None, actor_id: str | None, source: str, field: str = "managerId"
) -> None:
    """Make `manager_id` (or nobody) the person's line manager, recording the change.

    An admin names an active person; the directory may name one it has deactivated, as it
    does when a manager leaves before their reports are moved (docs/decisions.md §13): the line
    is kept, and a deactivated manager decides nothing.
    """
    if manager_id == user.manager_id:
        return
    if manager_id is not None:
        manager = db.get(User, manager_id)
        if (
            manager is None
            or manager.organization_id != user.organization_id
            or not (manager.active or source == "scim")
        ):
            raise invalid("body", field, "must be an active person of the same organization", code="invalid_manager")
        if manager.id == user.id or user.id in chain(db, manager.id):
            raise invalid("body", field, "would make the reporting line loop", code="reporting_line_loop")
    previous, user.manager_id = user.manager_id, manager_id
    db.flush()
    authority.record(
        db,
        user=user,
        type=MEMBER_MANAGER_SET,
        actor_id=actor_id,
        data={"managerId": manager_id, "previousManagerId": previous, "source": source},
    )


def chain(db: Session, user_id: str) -> list[str]:
    """The person's managers, nearest first: their manager, that manager's manager, and so on."""
    managers: list[str] = []
    current = db.scalar(select(User.manager_id).where(User.id == user_id))
    while current is not None and current not in managers and len(managers) < MAX_DEPTH:
        managers.append(current)
        current = db.scalar(select(User.manager_id).where(User.id == current))
    return managers


def reports_of(user_id: str) -> Select[str]:
    """A SELECT of the ids of everyone whose line runs up to `user_id` (their reports, their
    reports' reports, and so on)."""
    tree = select(User.id).where(User.manager_id == user_id).cte("reports", recursive=True)
    tree = tree.union(select(User.id).join(tree, User.manager_id == tree.c.id))
    return select(tree.c.id)


def decider_authority(db: Session, *, sender_id: str, decider_id: str, decider_role: str | None) -> str | None:
    """Why the decider may decide level 3 of an act the sender sent: `line_manager` (in the
    sender's chain), `admin`, or `manager` (the sender has no manager on record); None when
    the sender's line rules them out."""
    if decider_id in chain(db, sender_id):
        return "line_manager"
    if decider_role == "admin":
        return "admin"
    if db.scalar(select(User.manager_id).where(User.id == sender_id)) is None:
        return "manager"
    return None
