"""An organization's SCIM tokens (admins)."""

from __future__ import annotations

from connexion import NoContent

from kindling.accounts.scim import tokens
from kindling.accounts.scim.models import ScimToken
from kindling.platform import access
from kindling.web.runtime import db


def _token_body(token: ScimToken) -> dict:
    return {
        "id": token.id,
        "description": token.description,
        "createdAt": token.created_at,
        "lastUsedAt": token.last_used_at,
    }


def create_scim_token(token_info: dict, body: dict):
    caller = access.principal(token_info)
    token, secret = tokens.create_token(
        db(), organization_id=caller.member_of, created_by=caller.user_id, description=body["description"]
    )
    return {"data": {**_token_body(token), "token": secret}}, 201


def list_scim_tokens(token_info: dict):
    caller = access.principal(token_info)
    return {"data": [_token_body(token) for token in tokens.list_tokens(db(), organization_id=caller.member_of)]}, 200


def revoke_scim_token(token_info: dict, token_id: str):
    caller = access.principal(token_info)
    tokens.revoke_token(db(), organization_id=caller.member_of, token_id=token_id, revoked_by=caller.user_id)
    return NoContent, 204
