"""Organization search, for consultants; the organization's settings, for its members; its join code, for its admins."""

from __future__ import annotations

from kindling.accounts import service as accounts
from kindling.accounts.models import Organization
from kindling.consulting import directory as organizations
from kindling.platform import access
from kindling.web.handlers.accounts import organization_body
from kindling.web.runtime import db


def search_organizations(q: str, token_info: dict):
    access.principal(token_info)
    query, found = organizations.search(db(), query=q)
    return {"organizations": [organization_body(o, with_join_code=False) for o in found], "query": query}, 200


def get_organization(token_info: dict):
    caller = access.principal(token_info)
    return {"data": settings_body(accounts.get_organization(db(), caller.member_of))}, 200


def update_organization(body: dict, token_info: dict):
    caller = access.principal(token_info)
    organization = accounts.update_organization(
        db(),
        organization_id=caller.member_of,
        reporting_currency=body.get("reportingCurrency"),
        locale=body.get("locale"),
    )
    return {"data": settings_body(organization)}, 200


def settings_body(organization: Organization) -> dict:
    return {
        "id": organization.id,
        "name": organization.name,
        "slug": organization.slug,
        "reportingCurrency": organization.reporting_currency,
        "locale": organization.locale,
    }


def set_join_code(body: dict, token_info: dict):
    caller = access.principal(token_info)
    organization = accounts.set_join_code(
        db(), organization_id=caller.member_of, enabled=body.get("enabled"), rotate=body.get("rotate", False)
    )
    return {"data": {"joinCode": organization.join_code, "joinCodeEnabled": organization.join_code_enabled}}, 200
