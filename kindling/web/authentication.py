"""Authentication: every credential a request carries, resolved in this one module.

Under /api a request may carry the session cookie, or `Authorization: Bearer` with a session
token or a personal API token (openapi.yaml's `sessionCookie` and `bearerAuth`); under /scim/v2
it carries an organization's SCIM token (`scimBearer`). Each is read from the headers and looked
up once per request, here, and what was found is left in the request's state as its Credential,
before the rate limits (per account for a signed-in caller, per organization under /scim/v2).
Connexion's security step only reads it (kindling.web.overrides.security_handlers), through
`session_info` and kindling.web.scim.scim_token_info, the functions the schemes name.
`GET /api/health` is never authenticated.
"""

from __future__ import annotations

import dataclasses
import http.cookies
import logging

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from kindling.accounts import sessions
from kindling.accounts.principal_cache import principals
from kindling.accounts.scim import tokens as scim_tokens
from kindling.accounts.sessions import COOKIE_NAME
from kindling.platform.access import Principal
from kindling.web.errors import database_unavailable_error

log = logging.getLogger(__name__)

CREDENTIAL_KEY = "kindling.credential"
# Longer than any token Kindling issues: not worth a database lookup.
MAX_TOKEN = 512
# Load balancers and probes poll it: it neither authenticates nor counts against a limit.
UNAUTHENTICATED_PATHS = frozenset({"/api/health"})


@dataclasses.dataclass(frozen=True, slots=True)
class Credential:
    """What a request presented, and whose it turned out to be."""

    # The session cookie's token, if the request carries the cookie.
    cookie: str | None = None
    # The Authorization header's scheme, lowercased ("" without the header, None for a header of
    # one word, which names no scheme), and the token a Bearer header carries.
    scheme: str | None = ""
    bearer: str | None = None
    # Whose session or personal API token it is, under /api.
    principal: Principal | None = None
    # Whose SCIM token it is, under /scim/v2.
    organization_id: str | None = None


NONE = Credential()


def is_api_request(scope: Scope) -> bool:
    """Whether authentication and rate limits apply to this request."""
    return scope["type"] == "http" and scope["path"].startswith("/api/") and scope["path"] not in UNAUTHENTICATED_PATHS


def credential_of(scope: Scope) -> Credential:
    """The credential this module resolved for the request; NONE before it did."""
    return scope.get("state", {}).get(CREDENTIAL_KEY, NONE)


def principal_of(scope: Scope) -> Principal | None:
    """The caller this module found for this request, if any."""
    return credential_of(scope).principal


def presented(headers: Headers) -> Credential:
    """What the headers carry, read once, looked up in nothing."""
    authorization = headers.get("authorization")
    scheme: str | None = ""
    bearer = None
    if authorization:
        parts = authorization.split(maxsplit=1)
        scheme = parts[0].lower() if len(parts) == 2 else None
        if parts and parts[0].lower() == "bearer":
            # "Bearer" alone presents an empty token, which no cookie matches.
            bearer = parts[1].strip() if len(parts) == 2 else ""
    return Credential(cookie=_cookie_token(headers.get("cookie")), scheme=scheme, bearer=bearer)


async def authenticate(scope: Scope, session_factory: sessionmaker[Session]) -> Credential:
    """Resolve the session credential of an /api request to its Principal, or None; a database
    that cannot be reached raises SQLAlchemyError."""
    credential = presented(Headers(scope=scope))
    token = _session_token(credential)
    principal = None
    if token and len(token) <= MAX_TOKEN:
        principal = principals.get(sessions.hash_token(token))
        if principal is None:
            principal = await run_in_threadpool(_live_principal, session_factory, token)
    return _keep(scope, dataclasses.replace(credential, principal=principal))


async def authenticate_scim(scope: Scope, session_factory: sessionmaker[Session]) -> Credential:
    """Resolve the bearer token of a /scim/v2 request to its organization, or None."""
    credential = presented(Headers(scope=scope))
    organization_id = None
    if credential.bearer:
        organization_id = await run_in_threadpool(_organization_of, session_factory, credential.bearer)
    return _keep(scope, dataclasses.replace(credential, organization_id=organization_id))


class AuthenticationMiddleware:
    """Resolves the session credential of every /api request (health aside) and leaves it in the
    request's state; it refuses nothing itself, for an operation may be public. A database that
    cannot be reached answers 503."""

    def __init__(self, app: ASGIApp, *, session_factory: sessionmaker[Session]) -> None:
        self.app = app
        self.session_factory = session_factory

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if is_api_request(scope):
            try:
                await authenticate(scope, self.session_factory)
            except SQLAlchemyError as exc:
                log.warning("database unavailable while authenticating: %s", exc.__class__.__name__)
                raise database_unavailable_error() from None
        await self.app(scope, receive, send)


def session_info(scope: Scope) -> dict | None:
    """What `sessionCookie` and `bearerAuth` name: the caller of the request, if one was found."""
    principal = principal_of(scope)
    return principal.as_token_info() if principal else None


def _keep(scope: Scope, credential: Credential) -> Credential:
    scope.setdefault("state", {})[CREDENTIAL_KEY] = credential
    return credential


def _session_token(credential: Credential) -> str | None:
    """The session token of `Authorization: Bearer …` or of the session cookie.

    A request carrying both must carry the same token twice: otherwise one of them
    is stale or forged, and the request is not authenticated at all.
    """
    bearer, cookie = credential.bearer, credential.cookie
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


def _live_principal(session_factory: sessionmaker[Session], token: str) -> Principal | None:
    """Look the session up in a transaction of its own: this runs before the request's."""
    with session_factory() as db:
        principal = sessions.live_principal(db, token)
        db.commit()
        return principal


def _organization_of(session_factory: sessionmaker[Session], secret: str) -> str | None:
    """Look the SCIM token up, and note its use, in a transaction of its own: this runs before the request's."""
    with session_factory() as db:
        organization_id = scim_tokens.organization_of(db, secret)
        db.commit()
        return organization_id
