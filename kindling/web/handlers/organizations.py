"""Organization search, for consultants, and the organization's join code, for its admins."""

from __future__ import annotations

from kindling.accounts import service as accounts
from kindling.consulting import directory as organizations
from kindling.platform import access
from kindling.web.handlers.accounts import organization_body
from kindling.web.runtime import db


def search_organizations(q: str, token_info: dict):
    access.principal(token_info)
    query, found = organizations.search(db(), query=q)
    return {"organizations": [organization_body(o, with_join_code=False) for o in found], "query": query}, 200


def set_join_code(body: dict, token_info: dict):
    caller = access.principal(token_info)
    organization = accounts.set_join_code(
        db(), organization_id=caller.member_of, enabled=body.get("enabled"), rotate=body.get("rotate", False)
    )
    return {"data": {"joinCode": organization.join_code, "joinCodeEnabled": organization.join_code_enabled}}, 200
