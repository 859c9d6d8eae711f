"""Sessions and personal API tokens: their tokens, their lifetime, and the caller a live one stands for."""

from __future__ import annotations

import datetime as dt
import hashlib
import time

from sqlalchemy import event, select
from sqlalchemy.orm import Session as DbSession

from kindling.accounts.models import ApiToken, Session, SsoConnection, User
from kindling.accounts.principal_cache import principals
from kindling.platform.access import Principal
from kindling.platform.base import utcnow

COOKIE_NAME = "kindling.session_token"
SESSION_LIFETIME = dt.timedelta(days=7)
# A session is pushed forward at most once a day, so most requests never write.
SESSION_RENEWAL = dt.timedelta(days=1)
# Personal API tokens start with it, so a bearer token says which table holds it (and secret scanners know it).
TOKEN_PREFIX = "kpat_"
# A token's last use is recorded to the minute, so a busy token writes once a minute at most.
LAST_USE_PRECISION = dt.timedelta(minutes=1)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def live_principal(db: DbSession, token: str) -> Principal | None:
    """The principal of a live session or personal API token for `token`, renewing a session when
    due (the caller commits). The principal is kept in this process's cache for up to a second,
    never past the credential's expiry, so most requests skip the database."""
    token_hash = hash_token(token)
    read_at, now = time.monotonic(), utcnow()
    found = (
        _api_token_principal(db, token_hash, now)
        if token.startswith(TOKEN_PREFIX)
        else _session_principal(db, token_hash, now)
    )
    if found is None:
        return None
    principal, expires_at = found
    principals.put(token_hash, principal, (expires_at - now).total_seconds(), read_at=read_at)
    return principal


def _session_principal(db: DbSession, token_hash: str, now: dt.datetime) -> tuple[Principal, dt.datetime] | None:
    row = db.execute(
        select(Session, User, SsoConnection.enforced)
        .join(User, User.id == Session.user_id)
        .outerjoin(SsoConnection, SsoConnection.organization_id == User.organization_id)
        .where(Session.token_hash == token_hash)
    ).first()
    if row is None:
        return None
    session, user, enforced = row
    if session.revoked_at is not None or session.expires_at <= now or not user.active:
        return None
    if password_session_ended(via_sso=session.via_sso, role=user.role, enforced=bool(enforced)):
        return None
    if session.expires_at - SESSION_LIFETIME + SESSION_RENEWAL <= now:
        session.expires_at = now + SESSION_LIFETIME
    return principal_of(user, session_id=session.id), session.expires_at


def password_session_ended(*, via_sso: bool, role: str | None, enforced: bool) -> bool:
    """Whether a session no longer holds because it was begun with a password by a member or
    manager of an organization that enforces single sign-on (docs/decisions.md §2). Turning
    enforcement on revokes such sessions; this covers one a sign-in was starting meanwhile, and an
    admin's once they are one no longer."""
    return enforced and not via_sso and role != "admin"


def _api_token_principal(db: DbSession, token_hash: str, now: dt.datetime) -> tuple[Principal, dt.datetime] | None:
    row = db.execute(
        select(ApiToken, User).join(User, User.id == ApiToken.user_id).where(ApiToken.token_hash == token_hash)
    ).first()
    if row is None:
        return None
    token, user = row
    if token.revoked_at is not None or token.expires_at <= now or not user.active:
        return None
    if token.last_used_at is None or token.last_used_at + LAST_USE_PRECISION <= now:
        token.last_used_at = now
    return principal_of(user, token_id=token.id), token.expires_at


def principal_of(user: User, *, session_id: str | None = None, token_id: str | None = None) -> Principal:
    """The person as the services see a caller: through a session, a token, or neither (a request Slack signed)."""
    return Principal(
        user_id=user.id,
        account_type=user.account_type,
        organization_id=user.organization_id,
        role=user.role,
        session_id=session_id,
        token_id=token_id,
        auditor=user.auditor,
    )


def forget_after_commit(db: DbSession, token_hashes: list[str]) -> None:
    """Drop this process's cached principals of these sessions once the transaction revoking
    them commits (earlier, a concurrent request could cache them again from the unrevoked rows).
    Other processes drop theirs within PRINCIPAL_TTL."""
    event.listen(db, "after_commit", lambda _session: principals.forget(token_hashes), once=True)
