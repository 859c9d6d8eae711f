"""Single sign-on: an organization's OpenID Connect settings, and signing in through its provider."""

from __future__ import annotations

import flask
from connexion import NoContent

from kindling.accounts import service as accounts
from kindling.accounts import sso_domains, sso_settings, sso_sign_in
from kindling.accounts.models import SsoConnection, SsoDomain
from kindling.platform import access
from kindling.platform.destinations import DestinationPolicy
from kindling.web.handlers.accounts import set_session_cookie
from kindling.web.runtime import db, runtime

CALLBACK_PATH = "/api/auth/sso/callback"


def get_sso(token_info: dict):
    caller = access.principal(token_info)
    connection, domains = sso_settings.get_settings(db(), organization_id=caller.member_of)
    return {"data": settings_body(connection, domains)}, 200


def put_sso(body: dict, token_info: dict):
    caller = access.principal(token_info)
    settings = runtime().settings
    connection, domains = sso_settings.save_settings(
        db(),
        organization_id=caller.member_of,
        actor_id=caller.user_id,
        secret_key=settings.secret_key,
        policy=DestinationPolicy.from_settings(settings),
        issuer=body["issuer"],
        client_id=body["clientId"],
        client_secret=body.get("clientSecret"),
        email_domains=body["emailDomains"],
        jit_provisioning=body.get("jitProvisioning", False),
        enforced=body.get("enforced", False),
    )
    return {"data": settings_body(connection, domains)}, 200


def verify_sso_domain(domain: str, token_info: dict):
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


def delete_sso(token_info: dict):
    caller = access.principal(token_info)
    sso_settings.delete_settings(db(), organization_id=caller.member_of, actor_id=caller.user_id)
    return NoContent, 204


def start_sso(email: str | None = None, organization: str | None = None, return_to: str = "/"):
    url = sso_sign_in.start(
        db(), email=email, organization_slug=organization, return_to=return_to, redirect_uri=redirect_uri()
    )
    return NoContent, 302, {"Location": url}


def sso_callback(state: str, code: str | None = None, error: str | None = None):
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


def redirect_uri() -> str:
    """The callback URL registered at the provider: from PUBLIC_URL, else from this request's own URL."""
    base = runtime().settings.public_url or flask.request.host_url.rstrip("/")
    return base + CALLBACK_PATH


def settings_body(connection: SsoConnection, domains: list[SsoDomain]) -> dict:
    return {
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
