"""Organization search, for consultants."""

from __future__ import annotations

from kindling import access
from kindling.handlers.auth import organization_body
from kindling.runtime import db
from kindling.services import organizations


def search_organizations(q: str, token_info: dict):
    access.consultant(token_info)
    query, found = organizations.search(db(), query=q)
    return {"organizations": [organization_body(o, with_join_code=False) for o in found], "query": query}, 200
