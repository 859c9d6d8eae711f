"""The organization's people."""

from __future__ import annotations

from connexion import NoContent

from kindling.accounts import members
from kindling.platform import access
from kindling.web.handlers.accounts import user_body
from kindling.web.runtime import db


def list_members(token_info: dict, limit: int, cursor: str | None = None):
    caller = access.principal(token_info)
    people, next_cursor = members.list_members(db(), organization_id=caller.member_of, limit=limit, cursor=cursor)
    return {"data": [user_body(user) for user in people], "nextCursor": next_cursor}, 200


def update_member(token_info: dict, user_id: str, body: dict):
    caller = access.principal(token_info)
    user = members.change_role(db(), organization_id=caller.member_of, user_id=user_id, role=body["role"])
    return {"data": user_body(user)}, 200


def remove_member(token_info: dict, user_id: str):
    caller = access.principal(token_info)
    members.remove_member(db(), organization_id=caller.member_of, user_id=user_id)
    return NoContent, 204
