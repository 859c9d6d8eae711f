"""Session credentials: the cookie or bearer token on a request, resolved to a Principal."""

from __future__ import annotations

import datetime as dt
import hashlib
import http.cookies
import threading
import time

from sqlalchemy import event, select
from sqlalchemy.orm import Session as DbSession
from sqlalchemy.orm import sessionmaker

from kindling.accounts.models import Session, User
from kindling.platform.access import Principal
from kindling.platform.base import utcnow

COOKIE_NAME = "kindling.session_token"
SESSION_LIFETIME = dt.timedelta(days=7)
# A session is pushed forward at most once a day, so most requests never write.
SESSION_RENEWAL = dt.timedelta(days=1)
# How long a process trusts what it learnt of a session: a revocation elsewhere reaches it after this.
PRINCIPAL_TTL = 1.0


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


class PrincipalCache:
    """The principals of sessions this process saw lately, each kept PRINCIPAL_TTL seconds.

    Kept in the process, not in Redis: a revocation must reach every process within 2 seconds
    (docs/decisions.md §10) even while Redis is down, and a shared copy written before the
    revocation could outlive it in a Redis the revoking process cannot reach. A copy that lives
    at most a second anywhere cannot; the revoking process forgets its own copy at once.
    """

    def __init__(self, ttl: float = PRINCIPAL_TTL, max_entries: int = 100_000) -> None:
        self._ttl = ttl
        self._max_entries = max_entries
        self._entries: dict[str, tuple[float, Principal]] = {}
        self._lock = threading.Lock()

    def get(self, token_hash: str) -> Principal | None:
        entry = self._entries.get(token_hash)
        if entry is None or entry[0] <= time.monotonic():
            return None
        return entry[1]

    def put(self, token_hash: str, principal: Principal, ttl: float) -> None:
        expires = time.monotonic() + min(ttl, self._ttl)
        with self._lock:
            if len(self._entries) >= self._max_entries:
                now = time.monotonic()
                self._entries = {key: entry for key, entry in self._entries.items() if entry[0] > now}
                if len(self._entries) >= self._max_entries:
                    self._entries.clear()
            self._entries[token_hash] = (expires, principal)

    def forget(self, token_hashes: list[str]) -> None:
        with self._lock:
            for token_hash in token_hashes:
                self._entries.pop(token_hash, None)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


principals = PrincipalCache()
NOT_CACHED = object()


def cached_principal(token: str | None) -> Principal | None | object:
    """What this process alone knows of `token`: a Principal, None for a token that cannot be
    a session's, or NOT_CACHED when only the database can tell."""
    if not token or len(token) > 512:
        return None
    principal = principals.get(hash_token(token))
    return NOT_CACHED if principal is None else principal


def authenticate(session_factory: sessionmaker[DbSession], token: str | None) -> Principal | None:
    """The principal of a live session for `token`, renewing the session when due.

    Principals are kept in this process for up to PRINCIPAL_TTL seconds (never past the
    session's expiry), so most requests skip the database.
    """
    cached = cached_principal(token)
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
        principals.put(token_hash, principal, (session.expires_at - now).total_seconds())
        return principal


def forget_after_commit(db: DbSession, token_hashes: list[str]) -> None:
    """Drop this process's cached principals of these sessions once the transaction revoking
    them commits (earlier, a concurrent request could cache them again from the unrevoked rows).
    Other processes drop theirs within PRINCIPAL_TTL."""
    event.listen(db, "after_commit", lambda _session: principals.forget(token_hashes), once=True)
