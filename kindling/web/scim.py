"""The edge of /scim/v2: an organization's SCIM token on every request, and its rate limit.

openapi.yaml's `scimBearer` scheme names `scim_token_info` below. `ScimMiddleware` has the token
resolved by kindling.web.authentication, then counts the request against the organization's
limit of 1,200 a minute (docs/decisions.md §13); both refusals are raised here and answered by
kindling.web.errors in the SCIM error body, like every other failure under /scim/v2.
"""

from __future__ import annotations

from scim2_models import UnauthorizedException
from sqlalchemy.orm import Session, sessionmaker
from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kindling.errors import RateLimited
from kindling.platform.ratelimit import RateLimiter
from kindling.web.authentication import authenticate_scim, credential_of
from kindling.web.errors import is_scim


class ScimMiddleware:
    """Resolves the bearer token of every /scim/v2 request to its organization (401 without one),
    then applies the organization's SCIM rate limit (429 with Retry-After)."""

    def __init__(self, app: ASGIApp, *, session_factory: sessionmaker[Session], limiter: RateLimiter) -> None:
        self.app = app
        self.session_factory = session_factory
        self.limiter = limiter

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not is_scim(scope):
            await self.app(scope, receive, send)
            return
        organization_id = (await authenticate_scim(scope, self.session_factory)).organization_id
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

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": list(message.get("headers", [])) + decision.headers()}
            await send(message)

        await self.app(scope, receive, send_with_headers)


def scim_token_info(scope: Scope) -> dict | None:
    """What `scimBearer` names: the organization whose SCIM token the request carries."""
    organization_id = credential_of(scope).organization_id
    return {"sub": organization_id, "organization_id": organization_id} if organization_id else None
