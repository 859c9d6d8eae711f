"""Organization search, for consultants."""

from __future__ import annotations

from kindling.consulting import directory as organizations
from kindling.platform import access
from kindling.web.handlers.accounts import organization_body
from kindling.web.runtime import db


def search_organizations(q: str, token_info: dict):
    access.principal(token_info)
    query, found = organizations.search(db(), query=q)
    return {"organizations": [organization_body(o, with_join_code=False) for o in found], "query": query}, 200
