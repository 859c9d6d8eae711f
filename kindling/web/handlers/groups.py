"""The organization's directory groups, and the roles they give."""

from __future__ import annotations

from kindling.accounts.scim import groups
from kindling.accounts.scim.models import DirectoryGroup
from kindling.platform import access
from kindling.web.runtime import db


def _group_body(group: DirectoryGroup, member_count: int) -> dict:
    return {
        "id": group.id,
        "displayName": group.display_name,
        "externalId": group.external_id,
        "role": group.role,
        "memberCount": member_count,
    }


def list_groups(token_info: dict, limit: int, cursor: str | None = None):
    caller = access.principal(token_info)
    found, next_cursor = groups.list_for_admin(db(), organization_id=caller.member_of, limit=limit, cursor=cursor)
    return {"data": [_group_body(group, count) for group, count in found], "nextCursor": next_cursor}, 200


def update_group(token_info: dict, group_id: str, body: dict):
    caller = access.principal(token_info)
    group, count = groups.set_role(
        db(), organization_id=caller.member_of, group_id=group_id, role=body["role"], actor_id=caller.user_id
    )
    return {"data": _group_body(group, count)}, 200
