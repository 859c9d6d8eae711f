"""Sign-up, sign-in and sessions."""

from __future__ import annotations

import datetime as dt
import re
import secrets

import babel
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session as DbSession

from kindling.accounts import api_tokens, authority
from kindling.accounts.events import MEMBER_JOINED
from kindling.accounts.models import ApiToken, Organization, Session, SsoConnection, SsoDomain, User
from kindling.accounts.sessions import SESSION_LIFETIME, forget_after_commit, hash_token
from kindling.errors import BadRequest, Conflict, Forbidden, RateLimited, Unauthenticated, invalid
from kindling.platform import money
from kindling.platform.base import utcnow
from kindling.platform.ratelimit import RateLimiter

# OWASP's argon2id baseline: 19 MiB, 2 iterations, 1 lane.
_hasher = PasswordHasher(time_cost=2, memory_cost=19456, parallelism=1)
# Verified against when the email is unknown, so both failures cost the same time.
_DUMMY_HASH = _hasher.hash("kindling-no-such-account")
SIGN_IN = "sign-in"


def sign_up(
    db: DbSession,
    *,
    email: str,
    password: str,
    name: str,
    account_type: str = "member",
    organization_name: str | None = None,
    join_code: str | None = None,
    firm_name: str | None = None,
    reporting_currency: str | None = None,
    locale: str | None = None,
) -> User:
    """Create an account; a member creates (in `reporting_currency` and `locale`, by default USD
    and en) or joins an organization in the same step."""
    email = email.strip().lower()
    name = name.strip()
    if account_type == "consultant":
        if organization_name is not None or join_code is not None or (reporting_currency, locale) != (None, None):
            raise BadRequest("Consultant accounts neither create nor join an organization")
        organization, role = None, None
    else:
        if firm_name is not None:
            raise BadRequest("firmName is only for consultant accounts")
        if organization_name is None and (reporting_currency, locale) != (None, None):
            raise BadRequest("reportingCurrency and locale are for a new organization")
        if (organization_name is None) == (join_code is None):
            raise BadRequest("A member account needs exactly one of organizationName or joinCode")
        if organization_name is not None:
            organization = create_organization(
                db,
                name=organization_name.strip(),
                reporting_currency=reporting_currency or "USD",
                locale=locale or "en",
            )
            role, source = "admin", "sign_up"
        elif join_code is not None:
            organization = db.scalar(
                select(Organization).where(
                    Organization.join_code == join_code.strip(), Organization.join_code_enabled.is_(True)
                )
            )
            # A code turned off is no code: the answer is the unknown code's.
            if organization is None:
                raise BadRequest("Unknown join code", code="unknown_join_code")
            if _sso_enforced(db, organization.id, email_domain=email.rpartition("@")[2]):
                raise Forbidden(
                    "People of this email domain join through the organization's single sign-on", code="sso_required"
                )
            role, source = "member", "join_code"
    if db.scalar(select(User.id).where(User.email == email)) is not None:
        raise Conflict("An account with this email already exists", code="email_taken")
    user = User(
        email=email,
        name=name,
        password_hash=_hasher.hash(password),
        account_type=account_type,
        organization_id=organization.id if organization else None,
        role=role,
        hand_role=role,
        firm_name=firm_name.strip() if firm_name else None,
    )
    db.add(user)
    try:
        db.flush()
    except IntegrityError:  # a concurrent sign-up took the email first
        raise Conflict("An account with this email already exists", code="email_taken") from None
    if organization is not None:
        # The founding admin's authority, like every member's, starts in the log.
        authority.record(db, user=user, type=MEMBER_JOINED, actor_id=user.id, data={"role": role, "source": source})
    return user


def create_organization(
    db: DbSession, *, name: str, reporting_currency: str = "USD", locale: str = "en"
) -> Organization:
    """A new organization with a unique slug and join code."""
    organization = Organization(
        name=name,
        slug=_unique_slug(db, name),
        join_code=new_join_code(),
        reporting_currency=money.checked(reporting_currency, field="reportingCurrency"),
        locale=checked_locale(locale),
    )
    db.add(organization)
    db.flush()
    return organization


def new_join_code() -> str:
    """12 URL-safe characters from 9 random bytes."""
    return secrets.token_urlsafe(9)


def set_join_code(
    db: DbSession, *, organization_id: str, enabled: bool | None = None, rotate: bool = False
) -> Organization:
    """Turn joining by code on or off, and issue a new code on `rotate` (the old one stops working)."""
    organization = db.get_one(Organization, organization_id, with_for_update=True, populate_existing=True)
    if enabled is not None:
        organization.join_code_enabled = enabled
    if rotate:
        organization.join_code = new_join_code()
    db.flush()
    return organization


def _unique_slug(db: DbSession, name: str) -> str:
    base = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:200] or "organization"
    taken = set(db.scalars(select(Organization.slug).where(Organization.slug.startswith(base))))
    if base not in taken:
        return base
    suffix = 2
    while f"{base}-{suffix}" in taken:
        suffix += 1
    return f"{base}-{suffix}"


def sign_in(db: DbSession, limiter: RateLimiter, *, email: str, password: str) -> User:
    """The account for these credentials; at most 10 attempts per email in 15 minutes are checked.

    Each attempt is counted before its password is checked, in one atomic step, so concurrent
    guesses get no more checks than sequential ones. A successful sign-in clears the count.
    """
    email = email.strip().lower()
    throttle = limiter.attempt(SIGN_IN, email)
    if not throttle.allowed:
        raise RateLimited("Too many sign-in attempts; try again later", retry_after=throttle.retry_after)
    user = db.scalar(select(User).where(User.email == email))
    password_ok = _verify(user.password_hash if user is not None else _DUMMY_HASH, password)
    if user is None or not user.active or not password_ok:
        raise Unauthenticated("Email or password is incorrect", code="invalid_credentials")
    # Admins keep their password: the way back in when the identity provider fails.
    if user.organization_id is not None and user.role != "admin" and _sso_enforced(db, user.organization_id):
        raise Forbidden(
            "This organization signs in through its identity provider: use single sign-on", code="sso_required"
        )
    limiter.forget(SIGN_IN, email)
    if _hasher.check_needs_rehash(user.password_hash):
        user.password_hash = _hasher.hash(password)
    return user


def _sso_enforced(db: DbSession, organization_id: str, *, email_domain: str | None = None) -> bool:
    """Whether the organization requires single sign-on (of people of `email_domain`, one of its verified domains, if given)."""
    statement = select(SsoConnection.organization_id).where(
        SsoConnection.organization_id == organization_id, SsoConnection.enforced.is_(True)
    )
    if email_domain is not None:
        statement = statement.join(SsoDomain, SsoDomain.organization_id == SsoConnection.organization_id).where(
            SsoDomain.domain == email_domain, SsoDomain.verified_at.is_not(None)
        )
    return db.scalar(statement) is not None


def _verify(password_hash: str, password: str) -> bool:
    try:
        return _hasher.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


def start_session(db: DbSession, user: User, *, via_sso: bool = False) -> tuple[str, Session]:
    """A new session for `user` and its token, which is returned once and stored only hashed;
    `via_sso` when the person signed in through the organization's identity provider."""
    token = secrets.token_urlsafe(32)
    session = Session(
        user_id=user.id, token_hash=hash_token(token), expires_at=utcnow() + SESSION_LIFETIME, via_sso=via_sso
    )
    db.add(session)
    db.flush()
    return token, session


def sign_out(db: DbSession, *, session_id: str | None, token_id: str | None, user_id: str) -> None:
    """End the credential a request came with: its session, or the personal API token it used."""
    if token_id is not None:
        api_tokens.revoke_token(db, user_id=user_id, token_id=token_id)
    elif session_id is not None:
        end_session(db, session_id)


def credential_expiry(db: DbSession, *, session_id: str | None, token_id: str | None) -> dt.datetime:
    """When the session or personal API token a request came with expires."""
    if token_id is not None:
        return db.get_one(ApiToken, token_id).expires_at
    return db.get_one(Session, session_id).expires_at


def end_session(db: DbSession, session_id: str) -> None:
    """Revoke one session: every server process refuses it within 2 seconds of the commit."""
    session = db.get(Session, session_id)
    if session is not None and session.revoked_at is None:
        session.revoked_at = utcnow()
        forget_after_commit(db, [session.token_hash])


def revoke_all_sessions(db: DbSession, user_id: str) -> None:
    """Revoke every live session and personal API token of a user (signed out everywhere,
    deactivated, deleted): every server process refuses them within 2 seconds of the commit.
    Every path that deactivates a person comes through here."""
    now = utcnow()
    sessions = list(db.scalars(select(Session).where(Session.user_id == user_id, Session.revoked_at.is_(None))))
    for session in sessions:
        session.revoked_at = now
    token_hashes = api_tokens.revoke_all_tokens(db, user_id=user_id)
    forget_after_commit(db, [session.token_hash for session in sessions] + token_hashes)


def end_password_sessions(db: DbSession, *, organization_id: str) -> None:
    """Revoke the live password sessions of the organization's members and managers, as it turns
    single sign-on enforcement on: every server process refuses them within 2 seconds of the
    commit. Their API tokens stay. Revoked, not only refused while enforced (as
    `sessions.live_principal` does meanwhile), so that turning enforcement off brings none back."""
    now = utcnow()
    sessions = list(
        db.scalars(
            select(Session)
            .join(User, User.id == Session.user_id)
            .where(
                User.organization_id == organization_id,
                User.role != "admin",
                Session.via_sso.is_(False),
                Session.revoked_at.is_(None),
                Session.expires_at > now,
            )
        )
    )
    for session in sessions:
        session.revoked_at = now
    forget_after_commit(db, [session.token_hash for session in sessions])


def get_user(db: DbSession, user_id: str) -> User:
    return db.get_one(User, user_id)


def get_organization(db: DbSession, organization_id: str) -> Organization:
    return db.get_one(Organization, organization_id)


def update_organization(
    db: DbSession, *, organization_id: str, reporting_currency: str | None = None, locale: str | None = None
) -> Organization:
    """Set the currency the organization's reports state money in, and the locale its PDFs format it in."""
    organization = db.get_one(Organization, organization_id, with_for_update=True, populate_existing=True)
    if reporting_currency is not None:
        organization.reporting_currency = money.checked(reporting_currency, field="reportingCurrency")
    if locale is not None:
        organization.locale = checked_locale(locale)
    db.flush()
    return organization


def checked_locale(tag: str) -> str:
    """The locale `tag` names (BCP 47, `de-CH` or `de_CH`) in Babel's form, or the 400 `unknown_locale`."""
    try:
        return str(babel.Locale.parse(tag.replace("-", "_")))
    except (ValueError, babel.UnknownLocaleError):
        raise invalid("body", "locale", "is not a locale of the CLDR", code="unknown_locale") from None


def forget_cached_sessions(db: DbSession, user_id: str) -> None:
    """Make the user's live sessions and API tokens be looked up afresh, so a change to the account applies at once."""
    session_hashes = db.scalars(
        select(Session.token_hash).where(Session.user_id == user_id, Session.revoked_at.is_(None))
    )
    token_hashes = db.scalars(
        select(ApiToken.token_hash).where(ApiToken.user_id == user_id, ApiToken.revoked_at.is_(None))
    )
    forget_after_commit(db, list(session_hashes) + list(token_hashes))
