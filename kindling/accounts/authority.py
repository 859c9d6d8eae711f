"""Authority changes as evidence: who joined, with which role and line, who left (docs/decisions.md §13)."""

from __future__ import annotations

from sqlalchemy.orm import Session

from kindling.accounts.events import (
    MemberAuditorSet,
    MemberDeactivated,
    MemberJoined,
    MemberManagerSet,
    MemberReactivated,
    MemberRoleChanged,
)
from kindling.accounts.models import User
from kindling.evidence import log as evidence

Authority = (
    MemberJoined | MemberRoleChanged | MemberManagerSet | MemberAuditorSet | MemberDeactivated | MemberReactivated
)


def record(db: Session, *, user: User, type: str, actor_id: str | None, data: Authority) -> None:
    """Append one authority event about `user` to their organization's chain; ids and roles only."""
    if user.organization_id is None:  # a consultant holds no authority in an organization
        return
    evidence.append(
        db, organization_id=user.organization_id, type=type, subject=("member", user.id), actor_id=actor_id, data=data
    )


def record_token(db: Session, *, organization_id: str, token_id: str, type: str, actor_id: str) -> None:
    evidence.append(
        db, organization_id=organization_id, type=type, subject=("scim_token", token_id), actor_id=actor_id, data={}
    )
