"""Handlers of people and their organization: sign-up and sign-in, sessions, API tokens, single sign-on, members, groups and the organization's settings."""

from __future__ import annotations

import flask
from connexion import NoContent
from sqlalchemy import select

from kindling.accounts import api_tokens, identity_webhooks, members, saml_sp, sso_domains, sso_settings, sso_sign_in
from kindling.accounts import service as accounts
from kindling.accounts.models import ApiToken, Organization, Session, SsoConnection, SsoDomain, User
from kindling.accounts.scim import groups
from kindling.accounts.scim.models import DirectoryGroup
from kindling.accounts.sessions import COOKIE_NAME
from kindling.errors import BadRequest, Forbidden, NotFound
from kindling.platform import access
from kindling.platform.destinations import DestinationPolicy
from kindling.platform.request import Reply, db, runtime


def sign_up(body: dict) -> Reply:
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


def sign_in(body: dict) -> Reply:
    user = accounts.sign_in(db(), runtime().limiter, email=body["email"], password=body["password"])
    return _signed_in(user, return_token=body["returnToken"], status=200)


def sign_out(token_info: dict) -> Reply:
    caller = access.principal(token_info)
    accounts.sign_out(db(), session_id=caller.session_id, token_id=caller.token_id, user_id=caller.user_id)
    response = flask.make_response({"success": True}, 200)
    response.delete_cookie(COOKIE_NAME, path="/", secure=runtime().settings.production, httponly=True, samesite="Lax")
    return response


def get_session(token_info: dict) -> Reply:
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


def _signed_in(user: User, *, return_token: bool, status: int) -> flask.Response:
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


def create_token(body: dict, token_info: dict) -> Reply:
    caller = access.principal(token_info)
    value, token = api_tokens.create_token(
        db(),
        user_id=caller.user_id,
        session_id=caller.session_id if caller.token_id is None else None,
        name=body["name"],
        expires_in_days=body["expiresInDays"],
    )
    return {"data": {**token_body(token), "token": value}}, 201


def list_tokens(token_info: dict) -> Reply:
    return {
        "data": [
            token_body(token) for token in api_tokens.list_tokens(db(), user_id=access.principal(token_info).user_id)
        ]
    }, 200


def revoke_token(id_: str, token_info: dict) -> Reply:
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


def _group_body(group: DirectoryGroup, member_count: int) -> dict:
    return {
        "id": group.id,
        "displayName": group.display_name,
        "externalId": group.external_id,
        "role": group.role,
        "memberCount": member_count,
    }


def list_groups(token_info: dict, limit: int, cursor: str | None = None) -> Reply:
    caller = access.principal(token_info)
    found, next_cursor = groups.list_for_admin(db(), organization_id=caller.member_of, limit=limit, cursor=cursor)
    return {"data": [_group_body(group, count) for group, count in found], "nextCursor": next_cursor}, 200


def update_group(token_info: dict, group_id: str, body: dict) -> Reply:
    caller = access.principal(token_info)
    group, count = groups.set_role(
        db(), organization_id=caller.member_of, group_id=group_id, role=body["role"], actor_id=caller.user_id
    )
    return {"data": _group_body(group, count)}, 200


def receive_identity_event() -> Reply:
    outcome = identity_webhooks.receive_identity_event(
        db(),
        payload=flask.request.get_data(),
        headers=dict(flask.request.headers),
        secret=runtime().settings.auth_webhook_secret,
    )
    return {"received": True, "outcome": outcome}, 200


def member_body(user: User, groups: list[dict]) -> dict:
    """A member as the organization's lists show them: the account, its reporting line and groups."""
    return {
        **user_body(user),
        "auditor": user.auditor,
        "managerId": user.manager_id,
        "department": user.department,
        "employeeNumber": user.employee_number,
        "groups": groups,
    }


def list_members(token_info: dict, limit: int, cursor: str | None = None) -> Reply:
    caller = access.principal(token_info)
    session = db()
    people, next_cursor = members.list_members(session, organization_id=caller.member_of, limit=limit, cursor=cursor)
    groups = members.groups_of(session, [user.id for user in people])
    return {"data": [member_body(user, groups[user.id]) for user in people], "nextCursor": next_cursor}, 200


def update_member(token_info: dict, user_id: str, body: dict) -> Reply:
    caller = access.principal(token_info)
    session = db()
    user = members.update_member(
        session, organization_id=caller.member_of, user_id=user_id, actor_id=caller.user_id, changes=body
    )
    return {"data": member_body(user, members.groups_of(session, [user.id])[user.id])}, 200


def remove_member(token_info: dict, user_id: str) -> Reply:
    caller = access.principal(token_info)
    members.remove_member(db(), organization_id=caller.member_of, user_id=user_id, actor_id=caller.user_id)
    return NoContent, 204


def get_organization(token_info: dict) -> Reply:
    caller = access.principal(token_info)
    return {"data": organization_settings_body(accounts.get_organization(db(), caller.member_of))}, 200


def update_organization(body: dict, token_info: dict) -> Reply:
    caller = access.principal(token_info)
    organization = accounts.update_organization(
        db(),
        organization_id=caller.member_of,
        reporting_currency=body.get("reportingCurrency"),
        locale=body.get("locale"),
    )
    return {"data": organization_settings_body(organization)}, 200


def organization_settings_body(organization: Organization) -> dict:
    return {
        "id": organization.id,
        "name": organization.name,
        "slug": organization.slug,
        "reportingCurrency": organization.reporting_currency,
        "locale": organization.locale,
    }


def set_join_code(body: dict, token_info: dict) -> Reply:
    caller = access.principal(token_info)
    organization = accounts.set_join_code(
        db(), organization_id=caller.member_of, enabled=body.get("enabled"), rotate=body.get("rotate", False)
    )
    return {"data": {"joinCode": organization.join_code, "joinCodeEnabled": organization.join_code_enabled}}, 200


CALLBACK_PATH = "/api/auth/sso/callback"


def get_sso(token_info: dict) -> Reply:
    caller = access.principal(token_info)
    connection, domains = sso_settings.get_settings(db(), organization_id=caller.member_of)
    return {"data": sso_settings_body(connection, domains)}, 200


def put_sso(body: dict, token_info: dict) -> Reply:
    caller = access.principal(token_info)
    settings = runtime().settings
    rules = sso_settings.SignInRules(
        email_domains=body["emailDomains"],
        jit_provisioning=body.get("jitProvisioning", False),
        enforced=body.get("enforced", False),
    )
    if body.get("protocol", "oidc") == "saml":
        connection, domains = sso_settings.save_saml_settings(
            db(),
            organization_id=caller.member_of,
            actor_id=caller.user_id,
            secret_key=settings.secret_key,
            policy=DestinationPolicy.from_settings(settings),
            metadata_xml=body.get("idpMetadataXml"),
            metadata_url=body.get("idpMetadataUrl"),
            rules=rules,
            email_attribute=body.get("emailAttribute"),
        )
        return {"data": sso_settings_body(connection, domains)}, 200
    for name in ("issuer", "clientId"):
        if name not in body:
            raise BadRequest(f"'{name}' is a required property", code="validation_error")
    connection, domains = sso_settings.save_settings(
        db(),
        organization_id=caller.member_of,
        actor_id=caller.user_id,
        secret_key=settings.secret_key,
        policy=DestinationPolicy.from_settings(settings),
        issuer=body["issuer"],
        client_id=body["clientId"],
        client_secret=body.get("clientSecret"),
        rules=rules,
    )
    return {"data": sso_settings_body(connection, domains)}, 200


def verify_sso_domain(domain: str, token_info: dict) -> Reply:
    caller = access.principal(token_info)
    settings = runtime().settings
    claim = sso_domains.verify(
        db(),
        organization_id=caller.member_of,
        actor_id=caller.user_id,
        domain=domain,
        nameservers=settings.dns_nameservers,
        timeout=settings.dns_timeout,
    )
    return {"data": domain_body(claim)}, 200


def delete_sso(token_info: dict) -> Reply:
    caller = access.principal(token_info)
    sso_settings.delete_settings(db(), organization_id=caller.member_of, actor_id=caller.user_id)
    return NoContent, 204


def start_sso(email: str | None = None, organization: str | None = None, return_to: str = "/") -> Reply:
    url = sso_sign_in.start(
        db(),
        email=email,
        organization_slug=organization,
        return_to=return_to,
        redirect_uri=redirect_uri(),
        secret_key=runtime().settings.secret_key,
        public_url=public_url(),
    )
    return NoContent, 302, {"Location": url}


def sso_callback(state: str, code: str | None = None, error: str | None = None) -> Reply:
    # The state is spent in a transaction of its own, committed whatever happens next: it is never good twice.
    with runtime().session_factory() as own, own.begin():
        pending = sso_sign_in.consume_state(own, state=state)
    if code is None:
        sso_sign_in.refused_at_provider(error)
    settings = runtime().settings
    user = sso_sign_in.finish(
        db(),
        pending=pending,
        code=code,
        secret_key=settings.secret_key,
        policy=DestinationPolicy.from_settings(settings),
        redirect_uri=redirect_uri(),
    )
    token, session = accounts.start_session(db(), user, via_sso=True)
    response = flask.Response(status=303, headers={"Location": pending.return_to})
    del response.headers["Content-Type"]  # no body, so no type (a redirect's HTML would be one)
    set_session_cookie(response, token, session)
    return response


def saml_metadata(organization_slug: str) -> Reply:
    organization = db().scalar(select(Organization).where(Organization.slug == organization_slug))
    connection = db().get(SsoConnection, organization.id) if organization is not None else None
    if organization is None or connection is None or connection.protocol != "saml":
        raise NotFound("This organization does not sign in with SAML", code="sso_not_configured")
    sp = sso_settings.service_provider(
        connection, secret_key=runtime().settings.secret_key, public_url=public_url(), slug=organization.slug
    )
    return flask.Response(saml_sp.sp_metadata(sp), status=200, mimetype="application/samlmetadata+xml")


def saml_acs(body: dict) -> Reply:
    saml_response, relay_state = body.get("SAMLResponse") or "", body.get("RelayState") or ""
    try:
        request_id = saml_sp.in_response_to(saml_response)
    except saml_sp.Unsolicited:
        raise Forbidden(
            "Sign-ins begun at the identity provider are refused; start at GET /api/auth/sso/start",
            code="saml_unsolicited",
        ) from None
    except saml_sp.Invalid as exc:
        raise sso_sign_in.invalid_response(exc.reason) from None
    # Spent in a transaction of its own, committed whatever happens next: a RelayState is never good twice.
    with runtime().session_factory() as own, own.begin():
        try:
            pending = sso_sign_in.consume_state(own, state=relay_state)
        except BadRequest:
            raise sso_sign_in.invalid_response("relay_state") from None
        if pending.nonce != request_id:
            raise sso_sign_in.invalid_response("in_response_to")
    settings = runtime().settings
    user = sso_sign_in.finish_saml(
        db(), pending=pending, saml_response=saml_response, secret_key=settings.secret_key, public_url=public_url()
    )
    token, session = accounts.start_session(db(), user, via_sso=True)
    response = flask.Response(status=303, headers={"Location": pending.return_to})
    del response.headers["Content-Type"]
    set_session_cookie(response, token, session)
    return response


def public_url() -> str:
    """PUBLIC_URL, else this request's own scheme and host."""
    return runtime().settings.public_url or flask.request.host_url.rstrip("/")


def redirect_uri() -> str:
    """The callback URL registered at the provider."""
    return public_url() + CALLBACK_PATH


def sso_settings_body(connection: SsoConnection, domains: list[SsoDomain]) -> dict:
    if connection.protocol == "saml":
        return {
            "protocol": "saml",
            "idpEntityId": connection.issuer,
            "idpMetadataUrl": connection.saml_metadata_url,
            "idpMetadataFetchedAt": connection.saml_metadata_fetched_at,
            "emailAttribute": connection.saml_email_attribute,
            "emailDomains": [domain_body(claim) for claim in domains],
            "jitProvisioning": connection.jit_provisioning,
            "enforced": connection.enforced,
            "spEntityId": saml_sp.entity_id_of(public_url(), _slug(connection)),
            "acsUrl": public_url() + saml_sp.ACS_PATH,
            "updatedAt": connection.updated_at,
        }
    return {
        "protocol": "oidc",
        "issuer": connection.issuer,
        "clientId": connection.client_id,
        "clientSecretSet": True,
        "emailDomains": [domain_body(claim) for claim in domains],
        "jitProvisioning": connection.jit_provisioning,
        "enforced": connection.enforced,
        "redirectUri": redirect_uri(),
        "updatedAt": connection.updated_at,
    }


def domain_body(claim: SsoDomain) -> dict:
    record = sso_domains.record_of(claim)
    return {
        "domain": claim.domain,
        "verified": claim.verified_at is not None,
        "verifiedAt": claim.verified_at,
        "record": {"name": record.name, "type": record.type, "value": record.value},
    }


def _slug(connection: SsoConnection) -> str:
    return db().scalar(select(Organization.slug).where(Organization.id == connection.organization_id)) or ""
