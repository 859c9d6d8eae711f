"""Personal API tokens: bearer credentials with their owner's rights, for scripts, SDKs and CI (docs/decisions.md §2)."""

from __future__ import annotations

import datetime as dt
import secrets

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from kindling.accounts.models import ApiToken, SsoConnection, User
from kindling.accounts.models import Session as SignedInSession
from kindling.accounts.sessions import TOKEN_PREFIX, forget_after_commit, hash_token, password_session_ended
from kindling.errors import Conflict, Forbidden, NotFound
from kindling.platform.base import utcnow

# More than any person needs; a runaway script that keeps minting tokens stops here.
MAX_LIVE_TOKENS = 50


def create_token(
    db: Session, *, user_id: str, session_id: str | None, name: str, expires_in_days: int
) -> tuple[str, ApiToken]:
    """A new token of `user_id` and its value, which is returned once and stored only hashed.

    Only an interactive session (`session_id`; None for a request with a token) mints tokens: a
    leaked token cannot mint others that outlive its revocation. While the person's organization
    enforces single sign-on, a member's or manager's session must have begun through it; this is
    read from the database, not from a principal a process cached before enforcement began.
    """
    if session_id is None:
        raise Forbidden(
            "Personal API tokens are created from a signed-in session, not with another token", code="session_required"
        )
    via_sso, role, enforced = db.execute(
        select(SignedInSession.via_sso, User.role, SsoConnection.enforced)
        .join(User, User.id == SignedInSession.user_id)
        .outerjoin(SsoConnection, SsoConnection.organization_id == User.organization_id)
        .where(SignedInSession.id == session_id)
    ).one()
    if password_session_ended(via_sso=via_sso, role=role, enforced=bool(enforced)):
        raise Forbidden(
            "The organization enforces single sign-on: create tokens from a session signed in through it",
            code="sso_required",
        )
    now = utcnow()
    live = db.execute(
        select(func.count()).where(
            ApiToken.user_id == user_id, ApiToken.revoked_at.is_(None), ApiToken.expires_at > now
        )
    ).scalar_one()
    if live >= MAX_LIVE_TOKENS:
        raise Conflict(
            f"A person holds at most {MAX_LIVE_TOKENS} live tokens; revoke one first", code="token_limit_reached"
        )
    value = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken(
        user_id=user_id,
        name=name.strip(),
        token_hash=hash_token(value),
        created_at=now,
        expires_at=now + dt.timedelta(days=expires_in_days),
    )
    db.add(token)
    db.flush()
    return value, token


def list_tokens(db: Session, *, user_id: str) -> list[ApiToken]:
    """The person's tokens not revoked yet, expired ones included, newest first."""
    statement = (
        select(ApiToken)
        .where(ApiToken.user_id == user_id, ApiToken.revoked_at.is_(None))
        .order_by(ApiToken.created_at.desc(), ApiToken.id.desc())
    )
    return list(db.scalars(statement))


def revoke_token(db: Session, *, user_id: str, token_id: str) -> None:
    """Revoke one of the person's tokens: every server process refuses it within 2 seconds of the commit."""
    token = db.get(ApiToken, token_id)
    if token is None or token.user_id != user_id or token.revoked_at is not None:
        raise NotFound("No such token")
    token.revoked_at = utcnow()
    forget_after_commit(db, [token.token_hash])
    db.flush()


def revoke_all_tokens(db: Session, *, user_id: str) -> list[str]:
    """Revoke every live token of a person; the hashes to forget once that commits."""
    now = utcnow()
    tokens = list(db.scalars(select(ApiToken).where(ApiToken.user_id == user_id, ApiToken.revoked_at.is_(None))))
    for token in tokens:
        token.revoked_at = now
    return [token.token_hash for token in tokens]
