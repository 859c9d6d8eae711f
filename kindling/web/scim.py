"""The edge of /scim/v2: an organization's SCIM token on every request, and its rate limit.

openapi.yaml's `scimBearer` scheme names `scim_token_info` below. The token is resolved once per
request by `ScimMiddleware`, which also counts the request against the organization's limit of
1,200 a minute (docs/decisions.md §13); both refusals are raised here and answered by
kindling.web.errors in the SCIM error body, like every other failure under /scim/v2.
"""

from __future__ import annotations

import logging

from scim2_models import UnauthorizedException
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers

from kindling.accounts.scim import tokens
from kindling.errors import RateLimited
from kindling.platform.ratelimit import RateLimiter
from kindling.web.errors import is_scim
from kindling.web.overrides.handler_signatures import settle

ORGANIZATION_KEY = "kindling.scim_organization"


class _OneMediaTypeNotice(logging.Filter):
    """Connexion warns on every request to an operation that accepts two media types, as the SCIM
    operations do (`application/scim+json` and `application/json`, RFC 7644 §3.8); both are JSON
    and validated alike, so the warning says nothing and would fill the log."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("this operation accepts multiple content types")


logging.getLogger("connexion.operations.openapi3").addFilter(_OneMediaTypeNotice())


class ScimMiddleware:
    """Resolves the bearer token of every /scim/v2 request to its organization (401 without one),
    then applies the organization's SCIM rate limit (429 with Retry-After)."""

    def __init__(self, app, *, session_factory, limiter: RateLimiter) -> None:
        self.app = app
        self.session_factory = session_factory
        self.limiter = limiter

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or not is_scim(scope):
            await self.app(scope, receive, send)
            return
        scheme, _, secret = Headers(scope=scope).get("authorization", "").partition(" ")
        organization_id = None
        if scheme.lower() == "bearer" and secret.strip():
            organization_id = await run_in_threadpool(self._organization_of, secret.strip())
        if organization_id is None:
            raise UnauthorizedException(
                detail="A SCIM token of the organization is required: Authorization: Bearer <token>"
            )
        if self.limiter.answers_promptly():
            decision = self.limiter.hit("scim", organization_id)
        else:
            decision = await run_in_threadpool(self.limiter.hit, "scim", organization_id)
        if not decision.allowed:
            raise RateLimited(
                "Too many SCIM requests for this organization; retry later", retry_after=decision.retry_after
            )
        scope.setdefault("state", {})[ORGANIZATION_KEY] = organization_id

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                message = {**message, "headers": list(message.get("headers", [])) + decision.headers()}
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def _organization_of(self, secret: str) -> str | None:
        with self.session_factory() as db:
            return tokens.organization_of(db, secret)


@settle
async def scim_token_info(_token: str, request) -> dict | None:
    """Connexion's security function for `scimBearer`: the organization ScimMiddleware found."""
    organization_id = request.scope.get("state", {}).get(ORGANIZATION_KEY)
    return {"sub": organization_id, "organization_id": organization_id} if organization_id else None
