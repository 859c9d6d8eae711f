"""Accounts and sessions."""

from __future__ import annotations

import flask

from kindling.accounts import service as accounts
from kindling.accounts.models import Organization, Session, User
from kindling.platform import access
from kindling.web.authentication import COOKIE_NAME
from kindling.web.runtime import db, runtime


def sign_up(body: dict):
    user = accounts.sign_up(
        db(),
        email=body["email"],
        password=body["password"],
        name=body["name"],
        account_type=body["accountType"],
        organization_name=body.get("organizationName"),
        join_code=body.get("joinCode"),
        firm_name=body.get("firmName"),
        reporting_currency=body.get("reportingCurrency"),
        locale=body.get("locale"),
    )
    return _signed_in(user, return_token=body["returnToken"], status=201)


def sign_in(body: dict):
    user = accounts.sign_in(db(), runtime().limiter, email=body["email"], password=body["password"])
    return _signed_in(user, return_token=body["returnToken"], status=200)


def sign_out(token_info: dict):
    caller = access.principal(token_info)
    accounts.sign_out(db(), session_id=caller.session_id, token_id=caller.token_id, user_id=caller.user_id)
    response = flask.make_response({"success": True}, 200)
    response.delete_cookie(COOKIE_NAME, path="/", secure=runtime().settings.production, httponly=True, samesite="Lax")
    return response


def get_session(token_info: dict):
    caller = access.principal(token_info)
    expires_at = accounts.credential_expiry(db(), session_id=caller.session_id, token_id=caller.token_id)
    data = {"user": user_body(accounts.get_user(db(), caller.user_id)), "session": {"expiresAt": expires_at}}
    if caller.organization_id is not None:
        organization = accounts.get_organization(db(), caller.organization_id)
        data["organization"] = organization_body(organization, with_join_code=caller.is_admin)
    return {"data": data}, 200


def user_body(user: User) -> dict:
    return {
        "id": user.id,
        "email": user.email,
        "name": user.name,
        "accountType": user.account_type,
        "organizationId": user.organization_id,
        "role": user.role,
        "createdAt": user.created_at,
    }


def organization_body(organization: Organization, *, with_join_code: bool) -> dict:
    body: dict[str, str | bool] = {"id": organization.id, "name": organization.name, "slug": organization.slug}
    if with_join_code:
        body["joinCode"] = organization.join_code
        body["joinCodeEnabled"] = organization.join_code_enabled
    return body


def _signed_in(user: User, *, return_token: bool, status: int):
    token, session = accounts.start_session(db(), user)
    session_body: dict[str, object] = {"expiresAt": session.expires_at}
    if return_token:
        session_body["token"] = token
    response = flask.make_response({"data": {"user": user_body(user), "session": session_body}}, status)
    set_session_cookie(response, token, session)
    return response


def set_session_cookie(response: flask.Response, token: str, session: Session) -> None:
    response.set_cookie(
        COOKIE_NAME,
        token,
        expires=session.expires_at,
        path="/",
        httponly=True,
        samesite="Lax",
        secure=runtime().settings.production,
    )
