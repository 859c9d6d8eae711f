"""An organization's single sign-on settings: its OpenID provider, claimed email domains and
enforcement (docs/decisions.md §2). Saving and removing them are evidence (`sso.configured`);
the domains' proof through DNS is in `sso_domains`."""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
from collections.abc import Callable

import requests
from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from kindling.accounts import oidc_client, saml_sp, secrets_box, sso_domains
from kindling.accounts import service as accounts
from kindling.accounts.events import SSO_CONFIGURED, SsoConfigured, SsoProvider
from kindling.accounts.locks import lock_organization
from kindling.accounts.models import SsoConnection, SsoDomain, SsoState
from kindling.errors import BadRequest, NotFound, ServiceUnavailable, invalid
from kindling.evidence import log as evidence
from kindling.platform import destinations
from kindling.platform.base import utcnow
from kindling.platform.destinations import DestinationPolicy, RefusedDestination

METADATA_TIMEOUT = 5.0
METADATA_REFRESH = dt.timedelta(days=1)

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class SignInRules:
    """Who signs in through the provider, whichever its protocol: the email domains claimed for it,
    whether a person it vouches for who has no account is made one, and whether passwords stop."""

    email_domains: list[str]
    jit_provisioning: bool
    enforced: bool


def get_settings(db: Session, *, organization_id: str) -> tuple[SsoConnection, list[SsoDomain]]:
    """The organization's settings and claimed domains; 404 `sso_not_configured` without them."""
    connection = db.get(SsoConnection, organization_id)
    if connection is None:
        raise NotFound("Single sign-on is not set up for this organization", code="sso_not_configured")
    return connection, sso_domains.claims(db, organization_id=organization_id)


def save_settings(
    db: Session,
    *,
    organization_id: str,
    actor_id: str,
    secret_key: str | None,
    policy: DestinationPolicy,
    issuer: str,
    client_id: str,
    client_secret: str | None,
    rules: SignInRules,
) -> tuple[SsoConnection, list[SsoDomain]]:
    """Set up or replace the organization's provider, once its discovery document checks out.
    With `enforced`, the password sessions of its members and managers end."""
    secret_key = _sealing_key(secret_key)
    if client_secret is None and db.get(SsoConnection, organization_id) is None:
        raise invalid("body", "clientSecret", "is required when single sign-on is first set up")
    # Before any lock: the provider may take its 5 seconds.
    try:
        discovery = oidc_client.discover(issuer, policy)
    except oidc_client.DiscoveryFailed as exc:
        raise BadRequest(f"The provider's discovery failed: {exc}", code="sso_discovery_failed") from None
    # Changes to one organization's settings are serialised on its row.
    lock_organization(db, organization_id)
    connection = db.get(SsoConnection, organization_id, with_for_update=True, populate_existing=True)
    if client_secret is None and connection is None:  # removed meanwhile
        raise invalid("body", "clientSecret", "is required when single sign-on is first set up")
    if connection is None:
        connection = SsoConnection(organization_id=organization_id, created_at=utcnow())
        db.add(connection)
    connection.protocol = "oidc"
    connection.issuer = issuer
    connection.client_id = client_id
    if client_secret is not None:
        connection.client_secret_encrypted = secrets_box.seal(secret_key, client_secret, context=organization_id)
    connection.authorization_endpoint = discovery.authorization_endpoint
    connection.token_endpoint = discovery.token_endpoint
    connection.jwks_uri = discovery.jwks_uri
    connection.signing_algorithms = " ".join(discovery.signing_algorithms)
    connection.token_endpoint_auth_method = discovery.token_endpoint_auth_method
    connection.saml_metadata_xml = connection.saml_metadata_url = connection.saml_metadata_fetched_at = None
    connection.saml_email_attribute = None
    return _finish_save(
        db,
        connection=connection,
        actor_id=actor_id,
        rules=rules,
        data={"protocol": "oidc", "issuer": issuer, "clientId": client_id},
    )


def save_saml_settings(
    db: Session,
    *,
    organization_id: str,
    actor_id: str,
    secret_key: str | None,
    policy: DestinationPolicy,
    metadata_xml: str | None,
    metadata_url: str | None,
    rules: SignInRules,
    email_attribute: str | None,
) -> tuple[SsoConnection, list[SsoDomain]]:
    """Set up or replace the organization's SAML identity provider from its metadata (given, or
    read from `metadata_url` through the destination rules). The service provider's key pair is
    made the first time and kept, so the IdP's copy of our metadata stays good."""
    secret_key = _sealing_key(secret_key)
    if (metadata_xml is None) == (metadata_url is None):
        raise invalid("body", "idpMetadataXml", "give exactly one of idpMetadataXml and idpMetadataUrl")
    if metadata_url is not None:
        metadata_xml = fetch_metadata(metadata_url, policy)
    assert metadata_xml is not None
    try:
        idp = saml_sp.read_metadata(metadata_xml)
    except saml_sp.BadMetadata as exc:
        raise BadRequest(
            f"The identity provider's metadata cannot be used: {exc}", code="saml_metadata_invalid"
        ) from None
    lock_organization(db, organization_id)
    connection = db.get(SsoConnection, organization_id, with_for_update=True, populate_existing=True)
    if connection is None:
        connection = SsoConnection(organization_id=organization_id, created_at=utcnow())
        db.add(connection)
    if connection.saml_sp_key_encrypted is None:
        key_pem, certificate_pem = saml_sp.new_key_pair(f"Kindling SAML SP {organization_id}")
        connection.saml_sp_key_encrypted = secrets_box.seal(
            secret_key, key_pem, context=_sp_key_context(organization_id)
        )
        connection.saml_sp_certificate = certificate_pem
    connection.protocol = "saml"
    connection.issuer = idp.entity_id
    connection.authorization_endpoint = idp.sso_url
    connection.client_id = connection.client_secret_encrypted = connection.token_endpoint = ""
    connection.jwks_uri = connection.signing_algorithms = connection.token_endpoint_auth_method = ""
    connection.saml_metadata_xml = metadata_xml
    connection.saml_metadata_url = metadata_url
    connection.saml_metadata_fetched_at = utcnow() if metadata_url is not None else None
    connection.saml_email_attribute = email_attribute
    return _finish_save(
        db,
        connection=connection,
        actor_id=actor_id,
        rules=rules,
        data={"protocol": "saml", "issuer": idp.entity_id},
    )


def _finish_save(
    db: Session,
    *,
    connection: SsoConnection,
    actor_id: str,
    rules: SignInRules,
    data: SsoProvider,
) -> tuple[SsoConnection, list[SsoDomain]]:
    organization_id = connection.organization_id
    connection.jit_provisioning = rules.jit_provisioning
    connection.enforced = rules.enforced
    connection.updated_at = utcnow()
    db.flush()
    claims = sso_domains.replace_claims(db, organization_id=organization_id, domains=rules.email_domains)
    if rules.enforced:
        accounts.end_password_sessions(db, organization_id=organization_id)
    configured: SsoConfigured = {
        "enabled": True,
        **data,
        "emailDomains": [claim.domain for claim in claims],
        "jitProvisioning": rules.jit_provisioning,
        "enforced": rules.enforced,
    }
    _configured(db, organization_id, actor_id, configured)
    return connection, claims


def _sealing_key(secret_key: str | None) -> str:
    """The key the settings' secrets are sealed under (SECRET_KEY): without it nothing is saved, 503."""
    if secret_key is None:
        raise ServiceUnavailable(
            "Single sign-on needs the server's SECRET_KEY, which is not set", code="secret_key_missing"
        )
    return secret_key


def _sp_key_context(organization_id: str) -> str:
    # Not the client secret's context: one sealed value cannot stand in for the other.
    return f"{organization_id}:saml-sp-key"


def fetch_metadata(url: str, policy: DestinationPolicy) -> str:
    """The IdP metadata at `url`, read through the outbound destination rules within 5 s."""
    try:
        destinations.check_url(url, policy, resolve=False)
        with destinations.session(policy) as http:
            answer = http.get(url, timeout=METADATA_TIMEOUT, allow_redirects=False, stream=True)
            body = answer.raw.read(saml_sp.MAX_METADATA + 1, decode_content=True)
    except RefusedDestination as exc:
        raise BadRequest(f"The metadata URL is not allowed: {exc}", code="saml_metadata_invalid") from None
    except (requests.RequestException, OSError) as exc:
        raise BadRequest(
            f"The metadata could not be read: {type(exc).__name__}", code="saml_metadata_invalid"
        ) from None
    if answer.status_code != 200:
        raise BadRequest(f"The metadata URL answered {answer.status_code}", code="saml_metadata_invalid")
    if len(body) > saml_sp.MAX_METADATA:
        raise BadRequest("The metadata is larger than 1 MB", code="saml_metadata_invalid")
    try:
        return body.decode()
    except UnicodeDecodeError:
        raise BadRequest("The metadata is not UTF-8", code="saml_metadata_invalid") from None


def service_provider(
    connection: SsoConnection, *, secret_key: str | None, public_url: str, slug: str
) -> saml_sp.ServiceProvider:
    """The organization's SAML service provider as its settings describe it."""
    try:
        key_pem = secrets_box.open_sealed(
            secret_key or "",
            connection.saml_sp_key_encrypted or "",
            context=_sp_key_context(connection.organization_id),
        )
    except secrets_box.UnreadableSecret:
        raise ServiceUnavailable(
            "Single sign-on is misconfigured; an organization admin must save its settings again",
            code="sso_provider_unavailable",
        ) from None
    return saml_sp.ServiceProvider(
        entity_id=saml_sp.entity_id_of(public_url, slug),
        acs_url=public_url + saml_sp.ACS_PATH,
        key_pem=key_pem,
        certificate_pem=connection.saml_sp_certificate or "",
        metadata_xml=connection.saml_metadata_xml or "",
        idp_entity_id=connection.issuer,
    )


def delete_settings(db: Session, *, organization_id: str, actor_id: str) -> None:
    """Turn single sign-on off: passwords work again for everyone, the domains are free, sign-ins under way fail."""
    connection = db.get(SsoConnection, organization_id, with_for_update=True)
    if connection is None:
        raise NotFound("Single sign-on is not set up for this organization", code="sso_not_configured")
    db.execute(delete(SsoDomain).where(SsoDomain.organization_id == organization_id))
    db.execute(delete(SsoState).where(SsoState.organization_id == organization_id))
    db.delete(connection)
    db.flush()
    _configured(db, organization_id, actor_id, {"enabled": False})


def _configured(db: Session, organization_id: str, actor_id: str, data: SsoConfigured) -> None:
    """The organization's settings as they now stand, in the evidence log (`sso.configured`)."""
    evidence.append(
        db,
        organization_id=organization_id,
        type=SSO_CONFIGURED,
        subject=("organization", organization_id),
        actor_id=actor_id,
        data=data,
    )


def discovery_of(connection: SsoConnection) -> oidc_client.Discovery:
    """The provider's endpoints as read when the settings were saved."""
    return oidc_client.Discovery(
        issuer=connection.issuer,
        authorization_endpoint=connection.authorization_endpoint,
        token_endpoint=connection.token_endpoint,
        jwks_uri=connection.jwks_uri,
        signing_algorithms=tuple(connection.signing_algorithms.split()),
        token_endpoint_auth_method=connection.token_endpoint_auth_method,
    )


def metadata_refresh_chore(policy: DestinationPolicy) -> Callable[[Session], None]:
    """The worker's chore that reads each metadata URL again once a day. Metadata that cannot be
    read or used keeps the last good copy (logged), so an IdP's outage signs nobody out."""

    def chore(db: Session) -> None:
        due = db.scalars(
            select(SsoConnection).where(
                SsoConnection.protocol == "saml",
                SsoConnection.saml_metadata_url.is_not(None),
                SsoConnection.saml_metadata_fetched_at <= utcnow() - METADATA_REFRESH,
            )
        ).all()
        for connection in due:
            connection.saml_metadata_fetched_at = utcnow()
            try:
                xml = fetch_metadata(connection.saml_metadata_url or "", policy)
                idp = saml_sp.read_metadata(xml)
            except (BadRequest, saml_sp.BadMetadata) as exc:
                log.warning("SAML metadata of organization %s not refreshed: %s", connection.organization_id, exc)
                continue
            if idp.entity_id != connection.issuer:
                log.warning(
                    "SAML metadata of organization %s now names another IdP; kept the last", connection.organization_id
                )
                continue
            connection.saml_metadata_xml = xml
            connection.authorization_endpoint = idp.sso_url
        db.flush()

    return chore
