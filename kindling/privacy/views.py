"""Handlers of a person's own data: its export and erasure."""

from __future__ import annotations

from kindling.accounts import members
from kindling.accounts import personal_data as accounts_data
from kindling.accounts import service as accounts
from kindling.accounts.views import member_body
from kindling.platform import access
from kindling.platform.request import Reply, db, runtime
from kindling.privacy import personal_data


def export_own(token_info: dict) -> Reply:
    caller = access.principal(token_info)
    return {"data": personal_data.export(db(), user_id=caller.user_id)}, 200


def export_member(token_info: dict, user_id: str) -> Reply:
    caller = access.principal(token_info)
    user = accounts_data.member_of(db(), organization_id=caller.member_of, user_id=user_id)
    return {"data": personal_data.export(db(), user_id=user.id)}, 200


def erase_member(token_info: dict, user_id: str) -> Reply:
    caller = access.principal(token_info)
    session = db()
    personal_data.erase(
        session,
        organization_id=caller.member_of,
        user_id=user_id,
        actor_id=caller.user_id,
        secret_key=runtime().settings.secret_key,
    )
    user = accounts.get_user(session, user_id)
    return {"data": member_body(user, members.groups_of(session, [user.id])[user.id])}, 200
