"""An organization's SCIM tokens: made by an admin, shown once, stored as SHA-256, revoked at once."""

from __future__ import annotations

import datetime as dt
import secrets

from sqlalchemy import bindparam, func, select, update
from sqlalchemy.orm import Session

from kindling.accounts import authority
from kindling.accounts.events import SCIM_TOKEN_CREATED, SCIM_TOKEN_REVOKED
from kindling.accounts.locks import lock_organization
from kindling.accounts.scim.models import ScimToken
from kindling.accounts.sessions import hash_token
from kindling.errors import Conflict, NotFound
from kindling.platform.base import utcnow

MAX_LIVE_TOKENS = 5
PREFIX = "kscim_"
# lastUsedAt is written at most this often, so a busy directory sync does not write on every request.
LAST_USED_RESOLUTION = dt.timedelta(minutes=1)
# Read on every SCIM request: built once, only the hash changes.
_LIVE_TOKEN = select(ScimToken.id, ScimToken.organization_id, ScimToken.last_used_at).where(
    ScimToken.token_hash == bindparam("token_hash"), ScimToken.revoked_at.is_(None)
)


def create_token(db: Session, *, organization_id: str, created_by: str, description: str) -> tuple[ScimToken, str]:
    """A new token of the organization and its secret, which is returned this once only."""
    lock_organization(db, organization_id)
    live = db.execute(
        select(func.count()).where(ScimToken.organization_id == organization_id, ScimToken.revoked_at.is_(None))
    ).scalar_one()
    if live >= MAX_LIVE_TOKENS:
        raise Conflict(
            f"An organization has at most {MAX_LIVE_TOKENS} live SCIM tokens; revoke one first", code="too_many_tokens"
        )
    secret = PREFIX + secrets.token_urlsafe(32)
    token = ScimToken(
        organization_id=organization_id, description=description, token_hash=hash_token(secret), created_by=created_by
    )
    db.add(token)
    db.flush()
    authority.record_token(
        db, organization_id=organization_id, token_id=token.id, type=SCIM_TOKEN_CREATED, actor_id=created_by
    )
    return token, secret


def list_tokens(db: Session, *, organization_id: str) -> list[ScimToken]:
    """The organization's live tokens, newest first."""
    return list(
        db.scalars(
            select(ScimToken)
            .where(ScimToken.organization_id == organization_id, ScimToken.revoked_at.is_(None))
            .order_by(ScimToken.created_at.desc(), ScimToken.id)
        )
    )


def revoke_token(db: Session, *, organization_id: str, token_id: str, revoked_by: str) -> None:
    """Revoke a live token: the next request carrying it is refused."""
    token = db.get(ScimToken, token_id, with_for_update=True)
    if token is None or token.organization_id != organization_id or token.revoked_at is not None:
        raise NotFound("No such SCIM token")
    token.revoked_at = utcnow()
    db.flush()
    authority.record_token(
        db, organization_id=organization_id, token_id=token.id, type=SCIM_TOKEN_REVOKED, actor_id=revoked_by
    )


def organization_of(db: Session, secret: str | None) -> str | None:
    """The organization a live token acts for, noting its use in the caller's transaction; None for anything else."""
    if not secret or not secret.startswith(PREFIX) or len(secret) > 128:
        return None
    # Columns rather than the token: this runs before every SCIM request.
    token = db.execute(_LIVE_TOKEN, {"token_hash": hash_token(secret)}).first()
    if token is None:
        return None
    now = utcnow()
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_RESOLUTION:
        db.execute(update(ScimToken).where(ScimToken.id == token.id).values(last_used_at=now))
    return token.organization_id
