"""Personal API tokens of the caller."""

from __future__ import annotations

from connexion import NoContent

from kindling.accounts import api_tokens
from kindling.accounts.models import ApiToken
from kindling.platform import access
from kindling.web.runtime import db


def create_token(body: dict, token_info: dict):
    caller = access.principal(token_info)
    value, token = api_tokens.create_token(
        db(),
        user_id=caller.user_id,
        session_id=caller.session_id if caller.token_id is None else None,
        name=body["name"],
        expires_in_days=body["expiresInDays"],
    )
    return {"data": {**token_body(token), "token": value}}, 201


def list_tokens(token_info: dict):
    return {
        "data": [
            token_body(token) for token in api_tokens.list_tokens(db(), user_id=access.principal(token_info).user_id)
        ]
    }, 200


def revoke_token(id_: str, token_info: dict):
    api_tokens.revoke_token(db(), user_id=access.principal(token_info).user_id, token_id=id_)
    return NoContent, 204


def token_body(token: ApiToken) -> dict:
    return {
        "id": token.id,
        "name": token.name,
        "createdAt": token.created_at,
        "expiresAt": token.expires_at,
        "lastUsedAt": token.last_used_at,
    }
