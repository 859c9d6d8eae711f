"""Authentication: the step that turns a request's session credential into a Principal.

openapi.yaml's two security schemes (`sessionCookie`, `bearerAuth`) name `session_info` below.
The credential is resolved once per request by `AuthenticationMiddleware`, before the rate
limits (which are per account for a signed-in caller) and before Connexion's security check,
which then only reads the result. `GET /api/health` is never authenticated.
"""

from __future__ import annotations

import http.cookies
import logging

from sqlalchemy.exc import SQLAlchemyError
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers

from kindling.accounts import sessions
from kindling.accounts.principal_cache import principals
from kindling.accounts.sessions import COOKIE_NAME
from kindling.platform.access import Principal
from kindling.web.errors import database_unavailable_error, send_error
from kindling.web.overrides.handler_signatures import settle

log = logging.getLogger(__name__)

PRINCIPAL_KEY = "kindling.principal"
# Longer than any token Kindling issues: not worth a database lookup.
MAX_TOKEN = 512
# Load balancers and probes poll it: it neither authenticates nor counts against a limit.
UNAUTHENTICATED_PATHS = frozenset({"/api/health"})


def is_api_request(scope) -> bool:
    """Whether authentication and rate limits apply to this request."""
    return scope["type"] == "http" and scope["path"].startswith("/api/") and scope["path"] not in UNAUTHENTICATED_PATHS


def principal_of(scope) -> Principal | None:
    """The caller `AuthenticationMiddleware` found for this request, if any."""
    return scope.get("state", {}).get(PRINCIPAL_KEY)


class AuthenticationMiddleware:
    """Resolves the session credential of every /api request (health aside) to a Principal, or
    None, and leaves it in the request's state; it refuses nothing itself, for an operation may
    be public. A database that cannot be reached answers 503."""

    def __init__(self, app, *, session_factory) -> None:
        self.app = app
        self.session_factory = session_factory

    async def __call__(self, scope, receive, send):
        if not is_api_request(scope):
            await self.app(scope, receive, send)
            return
        token = token_from_headers(Headers(scope=scope))
        principal = None
        if token and len(token) <= MAX_TOKEN:
            principal = principals.get(sessions.hash_token(token))
            if principal is None:
                try:
                    principal = await run_in_threadpool(self._authenticate, token)
                except SQLAlchemyError as exc:
                    log.warning("database unavailable while authenticating: %s", exc.__class__.__name__)
                    await send_error(send, database_unavailable_error())
                    return
        scope.setdefault("state", {})[PRINCIPAL_KEY] = principal
        await self.app(scope, receive, send)

    def _authenticate(self, token: str) -> Principal | None:
        """Look the session up in a transaction of its own: this runs before the request's."""
        with self.session_factory() as db:
            principal = sessions.live_principal(db, token)
            db.commit()
            return principal


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


@settle
async def session_info(_token: str, request) -> dict | None:
    """Connexion's security function for both schemes: the caller AuthenticationMiddleware found."""
    principal = principal_of(request.scope)
    return principal.as_token_info() if principal else None
