"""An organization's single sign-on settings: its OpenID provider, claimed email domains and
enforcement (docs/decisions.md §2). Saving and removing them are evidence (`sso.configured`);
the domains' proof through DNS is in `sso_domains`."""

from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from kindling.accounts import oidc_client, secrets_box, sso_domains
from kindling.accounts import service as accounts
from kindling.accounts.models import Organization, SsoConnection, SsoDomain, SsoState
from kindling.errors import BadRequest, NotFound, ServiceUnavailable, invalid
from kindling.evidence import log as evidence
from kindling.platform.base import utcnow
from kindling.platform.destinations import DestinationPolicy


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
    email_domains: list[str],
    jit_provisioning: bool,
    enforced: bool,
) -> tuple[SsoConnection, list[SsoDomain]]:
    """Set up or replace the organization's provider, once its discovery document checks out.
    With `enforced`, the password sessions of its members and managers end."""
    if secret_key is None:
        raise ServiceUnavailable(
            "Single sign-on needs the server's SECRET_KEY, which is not set", code="secret_key_missing"
        )
    if client_secret is None and db.get(SsoConnection, organization_id) is None:
        raise invalid("body", "clientSecret", "is required when single sign-on is first set up")
    # Before any lock: the provider may take its 5 seconds.
    try:
        discovery = oidc_client.discover(issuer, policy)
    except oidc_client.DiscoveryFailed as exc:
        raise BadRequest(f"The provider's discovery failed: {exc}", code="sso_discovery_failed") from None
    # Changes to one organization's settings are serialised on its row.
    db.execute(select(Organization.id).where(Organization.id == organization_id).with_for_update(key_share=True))
    connection = db.get(SsoConnection, organization_id, with_for_update=True, populate_existing=True)
    if client_secret is None and connection is None:  # removed meanwhile
        raise invalid("body", "clientSecret", "is required when single sign-on is first set up")
    if connection is None:
        connection = SsoConnection(organization_id=organization_id, created_at=utcnow())
        db.add(connection)
    connection.issuer = issuer
    connection.client_id = client_id
    if client_secret is not None:
        connection.client_secret_encrypted = secrets_box.seal(secret_key, client_secret, context=organization_id)
    connection.authorization_endpoint = discovery.authorization_endpoint
    connection.token_endpoint = discovery.token_endpoint
    connection.jwks_uri = discovery.jwks_uri
    connection.signing_algorithms = " ".join(discovery.signing_algorithms)
    connection.token_endpoint_auth_method = discovery.token_endpoint_auth_method
    connection.jit_provisioning = jit_provisioning
    connection.enforced = enforced
    connection.updated_at = utcnow()
    db.flush()
    claims = sso_domains.replace_claims(db, organization_id=organization_id, domains=email_domains)
    if enforced:
        accounts.end_password_sessions(db, organization_id=organization_id)
    evidence.append(
        db,
        organization_id=organization_id,
        type=evidence.SSO_CONFIGURED,
        subject=("organization", organization_id),
        actor_id=actor_id,
        data={
            "enabled": True,
            "issuer": issuer,
            "clientId": client_id,
            "emailDomains": [claim.domain for claim in claims],
            "jitProvisioning": jit_provisioning,
            "enforced": enforced,
        },
    )
    return connection, claims


def delete_settings(db: Session, *, organization_id: str, actor_id: str) -> None:
    """Turn single sign-on off: passwords work again for everyone, the domains are free, sign-ins under way fail."""
    connection = db.get(SsoConnection, organization_id, with_for_update=True)
    if connection is None:
        raise NotFound("Single sign-on is not set up for this organization", code="sso_not_configured")
    db.execute(delete(SsoDomain).where(SsoDomain.organization_id == organization_id))
    db.execute(delete(SsoState).where(SsoState.organization_id == organization_id))
    db.delete(connection)
    db.flush()
    evidence.append(
        db,
        organization_id=organization_id,
        type=evidence.SSO_CONFIGURED,
        subject=("organization", organization_id),
        actor_id=actor_id,
        data={"enabled": False},
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
