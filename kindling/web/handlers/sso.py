"""Single sign-on: an organization's OpenID Connect settings, and signing in through its provider."""

from __future__ import annotations

import flask
from connexion import NoContent
from sqlalchemy import select

from kindling.accounts import saml_sp, sso_domains, sso_settings, sso_sign_in
from kindling.accounts import service as accounts
from kindling.accounts.models import Organization, SsoConnection, SsoDomain
from kindling.errors import BadRequest, Forbidden, NotFound
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
    if body.get("protocol", "oidc") == "saml":
        connection, domains = sso_settings.save_saml_settings(
            db(),
            organization_id=caller.member_of,
            actor_id=caller.user_id,
            secret_key=settings.secret_key,
            policy=DestinationPolicy.from_settings(settings),
            metadata_xml=body.get("idpMetadataXml"),
            metadata_url=body.get("idpMetadataUrl"),
            email_domains=body["emailDomains"],
            jit_provisioning=body.get("jitProvisioning", False),
            enforced=body.get("enforced", False),
            email_attribute=body.get("emailAttribute"),
        )
        return {"data": settings_body(connection, domains)}, 200
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
        db(),
        email=email,
        organization_slug=organization,
        return_to=return_to,
        redirect_uri=redirect_uri(),
        secret_key=runtime().settings.secret_key,
        public_url=public_url(),
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


def saml_metadata(organization_slug: str):
    organization = db().scalar(select(Organization).where(Organization.slug == organization_slug))
    connection = db().get(SsoConnection, organization.id) if organization is not None else None
    if organization is None or connection is None or connection.protocol != "saml":
        raise NotFound("This organization does not sign in with SAML", code="sso_not_configured")
    sp = sso_settings.service_provider(
        connection, secret_key=runtime().settings.secret_key, public_url=public_url(), slug=organization.slug
    )
    return flask.Response(saml_sp.sp_metadata(sp), status=200, mimetype="application/samlmetadata+xml")


def saml_acs(body: dict):
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


def settings_body(connection: SsoConnection, domains: list[SsoDomain]) -> dict:
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
