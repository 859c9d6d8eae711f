"""Session credentials: the cookie or bearer token on a request, resolved to a Principal."""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import hashlib
import http.cookies
import json

from connexion.security import AbstractSecurityHandler, ApiKeySecurityHandler, BearerSecurityHandler
from sqlalchemy import event, select
from sqlalchemy.orm import Session as DbSession, sessionmaker

from kindling.access import Principal
from kindling.cache import Cache
from kindling.persistence.accounts import Session, User
from kindling.persistence.base import utcnow

COOKIE_NAME = "kindling.session_token"
SESSION_LIFETIME = dt.timedelta(days=7)
# A session is pushed forward at most once a day, so most requests never write.
SESSION_RENEWAL = dt.timedelta(days=1)
PRINCIPAL_KEY = "kindling.principal"
PRINCIPAL_TTL = 30


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def token_from_headers(headers) -> str | None:
    """The session token of `Authorization: Bearer …` or of the session cookie.

    A request carrying both must carry the same token twice: otherwise one of them
    is stale or forged, and the request is not authenticated at all.
    """
    scheme, _, value = headers.get("authorization", "").partition(" ")
    bearer = value.strip() if scheme.lower() == "bearer" else None
    cookie = _cookie_token(headers.get("cookie"))
    if bearer is not None and cookie is not None and bearer != cookie:
        return None
    return bearer or cookie or None


def _cookie_token(cookie_header: str | None) -> str | None:
    if not cookie_header:
        return None
    cookies = http.cookies.SimpleCookie()
    try:
        cookies.load(cookie_header)
    except http.cookies.CookieError:
        return None
    morsel = cookies.get(COOKIE_NAME)
    return morsel.value if morsel is not None else None


NOT_CACHED = object()


def cached_principal(cache: Cache, token: str | None) -> Principal | None | object:
    """What the cache store alone knows of `token`: a Principal, None for a token that cannot be
    a session's, or NOT_CACHED when only the database can tell."""
    if not token or len(token) > 512:
        return None
    cached = cache.get(_principal_key(hash_token(token)))
    return NOT_CACHED if cached is None else Principal(**json.loads(cached))


def authenticate(session_factory: sessionmaker[DbSession], cache: Cache, token: str | None) -> Principal | None:
    """The principal of a live session for `token`, renewing the session when due.

    Principals are kept in the cache store for up to PRINCIPAL_TTL seconds (never past the
    session's expiry), so most requests skip the database; revoking a session forgets it.
    """
    cached = cached_principal(cache, token)
    if cached is not NOT_CACHED:
        return cached
    token_hash = hash_token(token)
    now = utcnow()
    with session_factory() as db:
        row = db.execute(
            select(Session, User)
            .join(User, User.id == Session.user_id)
            .where(Session.token_hash == token_hash)
        ).first()
        if row is None:
            return None
        session, user = row
        if session.revoked_at is not None or session.expires_at <= now or not user.active:
            return None
        if session.expires_at - SESSION_LIFETIME + SESSION_RENEWAL <= now:
            session.expires_at = now + SESSION_LIFETIME
            db.commit()
        principal = Principal(
            user_id=user.id,
            account_type=user.account_type,
            organization_id=user.organization_id,
            role=user.role,
            session_id=session.id,
        )
        ttl = min(PRINCIPAL_TTL, int((session.expires_at - now).total_seconds()))
        if ttl > 0:
            cache.set(_principal_key(token_hash), json.dumps(dataclasses.asdict(principal)), ttl)
        return principal


def forget_after_commit(db: DbSession, cache: Cache, token_hashes: list[str]) -> None:
    """Drop cached principals of these sessions once the transaction revoking them commits
    (earlier, a concurrent request could cache them again from the unrevoked rows)."""

    def forget(_session: DbSession) -> None:
        for token_hash in token_hashes:
            cache.delete(_principal_key(token_hash))

    event.listen(db, "after_commit", forget, once=True)


def _principal_key(token_hash: str) -> str:
    return f"principal:{token_hash}"


async def session_info(_token: str, request) -> dict | None:
    """Connexion security function for both schemes: the rate-limit middleware already
    resolved the request's credential, so this only reads its result."""
    principal = request.scope.get("state", {}).get(PRINCIPAL_KEY)
    return principal.as_token_info() if principal else None


class _SignatureOnce:
    # Connexion inspects the info function's signature on every request to learn whether it
    # takes `request`; the answer never changes, and asking costs a tenth of a millisecond.
    _accepts_kwarg = staticmethod(functools.cache(AbstractSecurityHandler._accepts_kwarg))


class _BearerHandler(_SignatureOnce, BearerSecurityHandler):
    pass


class _CookieHandler(_SignatureOnce, ApiKeySecurityHandler):
    pass


# Connexion's handlers for the two schemes of openapi.yaml, as its `security_map` takes them.
SECURITY_MAP = {"bearer": _BearerHandler, "apiKey": _CookieHandler}
