"""The organization's people."""

from __future__ import annotations

from connexion import NoContent

from kindling.accounts import members
from kindling.accounts.models import User
from kindling.platform import access
from kindling.web.handlers.accounts import user_body
from kindling.web.runtime import db


def member_body(user: User, groups: list[dict]) -> dict:
    """A member as the organization's lists show them: the account, its reporting line and groups."""
    return {
        **user_body(user),
        "auditor": user.auditor,
        "managerId": user.manager_id,
        "department": user.department,
        "employeeNumber": user.employee_number,
        "groups": groups,
    }


def list_members(token_info: dict, limit: int, cursor: str | None = None):
    caller = access.principal(token_info)
    session = db()
    people, next_cursor = members.list_members(session, organization_id=caller.member_of, limit=limit, cursor=cursor)
    groups = members.groups_of(session, [user.id for user in people])
    return {"data": [member_body(user, groups[user.id]) for user in people], "nextCursor": next_cursor}, 200


def update_member(token_info: dict, user_id: str, body: dict):
    caller = access.principal(token_info)
    session = db()
    user = members.update_member(
        session, organization_id=caller.member_of, user_id=user_id, actor_id=caller.user_id, changes=body
    )
    return {"data": member_body(user, members.groups_of(session, [user.id])[user.id])}, 200


def remove_member(token_info: dict, user_id: str):
    caller = access.principal(token_info)
    members.remove_member(db(), organization_id=caller.member_of, user_id=user_id, actor_id=caller.user_id)
    return NoContent, 204
