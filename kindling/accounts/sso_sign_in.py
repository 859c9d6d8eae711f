"""Signing in through the organization's OpenID provider: the authorization code flow with PKCE
(docs/decisions.md §2). The state is kept in the database, so any server process can finish a
sign-in another began."""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import secrets
import typing

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from kindling.accounts import authority, oidc_client, saml_sp, secrets_box, sso_domains, sso_settings
from kindling.accounts.events import MEMBER_JOINED
from kindling.accounts.models import Organization, SamlAssertionSeen, SsoConnection, SsoState, User
from kindling.errors import BadRequest, Forbidden, NotFound, ServiceUnavailable, Unauthenticated
from kindling.platform.base import utcnow
from kindling.platform.destinations import DestinationPolicy

log = logging.getLogger(__name__)

STATE_LIFETIME = dt.timedelta(minutes=10)
# Never a password: a person made by single sign-on signs in through the provider (argon2 cannot verify it).
NO_PASSWORD = "!sso"
# OpenID Connect Core 1.0 §3.1.2.6 and RFC 6749 §4.1.2.1: the only values of `error` an answer repeats.
PROVIDER_ERRORS = frozenset(
    {
        "access_denied",
        "interaction_required",
        "login_required",
        "account_selection_required",
        "consent_required",
        "invalid_request",
        "unauthorized_client",
        "unsupported_response_type",
        "invalid_scope",
        "server_error",
        "temporarily_unavailable",
        "invalid_request_uri",
        "invalid_request_object",
        "request_not_supported",
        "request_uri_not_supported",
        "registration_not_supported",
    }
)


def _hash(state: str) -> str:
    return hashlib.sha256(state.encode()).hexdigest()


def start(
    db: Session,
    *,
    email: str | None,
    organization_slug: str | None,
    return_to: str,
    redirect_uri: str,
    secret_key: str | None,
    public_url: str,
) -> str:
    """Begin a sign-in at the provider of the organization that verified `email`'s domain (or has
    the slug); the provider URL to send the person to (SAML: a signed AuthnRequest)."""
    if (email is None) == (organization_slug is None):
        raise BadRequest("Give exactly one of email or organization", code="validation_error")
    if email is not None:
        organization_id = sso_domains.owner_of(db, domain=email.rpartition("@")[2])
    else:
        organization_id = db.scalar(select(Organization.id).where(Organization.slug == organization_slug))
    connection = db.get(SsoConnection, organization_id) if organization_id else None
    if connection is None:
        raise NotFound(
            "No organization signs in with single sign-on for this email or organization", code="sso_not_configured"
        )
    now = utcnow()
    db.execute(delete(SsoState).where(SsoState.expires_at <= now))
    state, nonce, code_verifier = secrets.token_urlsafe(32), secrets.token_urlsafe(32), secrets.token_urlsafe(64)
    url = None
    if connection.protocol == "saml":
        slug = db.scalar(select(Organization.slug).where(Organization.id == connection.organization_id)) or ""
        sp = sso_settings.service_provider(connection, secret_key=secret_key, public_url=public_url, slug=slug)
        nonce, url = saml_sp.authn_request(sp, relay_state=state)
        code_verifier = ""
    db.add(
        SsoState(
            state_hash=_hash(state),
            organization_id=connection.organization_id,
            nonce=nonce,
            code_verifier=code_verifier,
            return_to=return_to,
            expires_at=now + STATE_LIFETIME,
        )
    )
    db.flush()
    if url is not None:
        return url
    return oidc_client.authorization_url(
        sso_settings.discovery_of(connection),
        client_id=connection.client_id,
        redirect_uri=redirect_uri,
        state=state,
        nonce=nonce,
        code_verifier=code_verifier,
    )


def consume_state(db: Session, *, state: str) -> SsoState:
    """The sign-in `state` began, removed so that it is used once; 400 `sso_state_invalid` when
    unknown, used or older than 10 minutes."""
    pending = db.get(SsoState, _hash(state), with_for_update=True)
    if pending is None:
        raise BadRequest("The sign-in state is unknown, used or expired; start again", code="sso_state_invalid")
    db.delete(pending)
    db.flush()
    if pending.expires_at <= utcnow():
        raise BadRequest("The sign-in state is unknown, used or expired; start again", code="sso_state_invalid")
    return pending


def finish(
    db: Session,
    *,
    pending: SsoState,
    code: str,
    secret_key: str | None,
    policy: DestinationPolicy,
    redirect_uri: str,
) -> User:
    """The person the provider signed in for `pending`'s organization: found by their linked
    provider account, else by email within the verified domains (and linked), else made just in time."""
    connection = db.get(SsoConnection, pending.organization_id)
    if connection is None:
        raise BadRequest("Single sign-on was turned off while signing in", code="sso_state_invalid")
    try:
        client_secret = secrets_box.open_sealed(
            secret_key or "", connection.client_secret_encrypted, context=connection.organization_id
        )
    except secrets_box.UnreadableSecret:
        log.error(
            "SSO client secret of organization %s cannot be read with this SECRET_KEY; an admin must save it again",
            connection.organization_id,
        )
        raise ServiceUnavailable(
            "Single sign-on is misconfigured; an organization admin must save its settings again",
            code="sso_provider_unavailable",
        ) from None
    discovery = sso_settings.discovery_of(connection)
    deadline = oidc_client.Deadline()
    try:
        id_token = oidc_client.exchange_code(
            discovery,
            policy,
            deadline,
            client_id=connection.client_id,
            client_secret=client_secret,
            redirect_uri=redirect_uri,
            code=code,
            code_verifier=pending.code_verifier,
        )
        claims = oidc_client.validate_id_token(
            id_token, discovery, policy, deadline, client_id=connection.client_id, nonce=pending.nonce
        )
    except oidc_client.ProviderUnavailable as exc:
        raise ServiceUnavailable(
            f"The identity provider is unavailable: {exc}", code="sso_provider_unavailable"
        ) from None
    except oidc_client.TokenRefused as exc:
        log.info("SSO sign-in refused for organization %s: %s", connection.organization_id, exc)
        raise Unauthenticated(f"The identity provider's answer is not valid: {exc}", code="sso_token_invalid") from None
    subject = claims["sub"]
    if not isinstance(subject, str) or not 1 <= len(subject) <= 255:
        raise Unauthenticated(
            "The identity provider's answer is not valid: the ID token is not valid (sub)", code="sso_token_invalid"
        )
    if claims.get("email_verified") is False:
        raise Unauthenticated("The identity provider has not verified this email address", code="sso_token_invalid")
    return _person(db, connection=connection, subject=subject, email=claims.get("email"), name=claims.get("name"))


def finish_saml(
    db: Session,
    *,
    pending: SsoState,
    saml_response: str,
    secret_key: str | None,
    public_url: str,
) -> User:
    """The person a SAML response for `pending`'s request signs in, once it checks out and its
    assertion is spent; then found, linked or provisioned as through OpenID Connect."""
    connection = db.get(SsoConnection, pending.organization_id)
    if connection is None or connection.protocol != "saml":
        raise BadRequest("Single sign-on was turned off while signing in", code="sso_state_invalid")
    slug = db.scalar(select(Organization.slug).where(Organization.id == connection.organization_id)) or ""
    sp = sso_settings.service_provider(connection, secret_key=secret_key, public_url=public_url, slug=slug)
    try:
        assertion = saml_sp.validate(
            sp, saml_response=saml_response, request_id=pending.nonce, email_attribute=connection.saml_email_attribute
        )
    except saml_sp.Invalid as exc:
        raise invalid_response(exc.reason) from None
    spend_assertion(db, organization_id=connection.organization_id, issuer=connection.issuer, assertion=assertion)
    if assertion.email is None:
        raise invalid_response("email")
    return _person(db, connection=connection, subject=assertion.subject, email=assertion.email, name=assertion.name)


def spend_assertion(db: Session, *, organization_id: str, issuer: str, assertion: saml_sp.Assertion) -> None:
    """Remember the assertion until it expires; one seen before, in any process, is a replay."""
    now = utcnow()
    db.execute(delete(SamlAssertionSeen).where(SamlAssertionSeen.expires_at <= now - saml_sp.SKEW))
    db.add(
        SamlAssertionSeen(
            assertion_hash=hashlib.sha256(f"{issuer}\n{assertion.id}".encode()).hexdigest(),
            organization_id=organization_id,
            expires_at=assertion.not_on_or_after + saml_sp.SKEW,
        )
    )
    try:
        with db.begin_nested():
            db.flush()
    except IntegrityError:
        raise invalid_response("replayed") from None


def invalid_response(reason: str) -> BadRequest:
    return BadRequest(
        f"The SAML response is not valid ({reason})", code="saml_response_invalid", details={"reason": reason}
    )


def _person(db: Session, *, connection: SsoConnection, subject: str, email: object, name: object) -> User:
    organization_id = connection.organization_id
    user = db.scalar(
        select(User).where(User.sso_issuer == connection.issuer, User.sso_subject == subject).with_for_update()
    )
    if user is not None and user.organization_id != organization_id:
        user = None  # linked by an earlier provider of another organization at the same issuer: not this one's
    email = (
        email.strip().lower() if isinstance(email, str) and 3 <= len(email.strip()) <= 254 and "@" in email else None
    )
    # Only a domain the organization proved is its own: another's unverified claim routes nobody.
    verified = email is not None and email.rpartition("@")[2] in sso_domains.verified_domains(
        db, organization_id=organization_id
    )
    if user is None and email is not None and verified:
        found = db.scalar(select(User).where(User.email == email).with_for_update())
        if found is not None:
            if found.organization_id != organization_id or (
                found.sso_subject is not None and found.sso_issuer == connection.issuer
            ):
                raise Forbidden(
                    "This email's account cannot sign in with this organization's provider", code="sso_no_account"
                )
            user = found
            if user.active:
                user.sso_issuer, user.sso_subject = connection.issuer, subject
        elif connection.jit_provisioning:
            user = _provision(db, connection=connection, subject=subject, email=email, name=name)
    if user is None:
        raise Forbidden(
            "No account of this organization matches this sign-in; ask an organization admin", code="sso_no_account"
        )
    if not user.active:
        raise Forbidden("This account is deactivated", code="account_deactivated")
    db.flush()
    return user


def _provision(db: Session, *, connection: SsoConnection, subject: str, email: str, name: object) -> User:
    display = name.strip()[:200] if isinstance(name, str) and name.strip() else email.partition("@")[0][:200]
    user = User(
        email=email,
        name=display,
        password_hash=NO_PASSWORD,
        account_type="member",
        organization_id=connection.organization_id,
        role="member",
        sso_issuer=connection.issuer,
        sso_subject=subject,
    )
    db.add(user)
    try:
        with db.begin_nested():
            db.flush()
    except IntegrityError:  # the same person finishing two sign-ins at once
        raise Forbidden("This account is being created by another sign-in; try again", code="sso_no_account") from None
    authority.record(db, user=user, type=MEMBER_JOINED, actor_id=None, data={"role": "member", "source": "sso"})
    return user


def refused_at_provider(error: str | None) -> typing.NoReturn:
    """The provider sent the person back without a code (they cancelled, or it refused them)."""
    reason = error if error in PROVIDER_ERRORS else "no code"
    raise Unauthenticated(f"The identity provider did not sign the person in ({reason})", code="sso_token_invalid")
