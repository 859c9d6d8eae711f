"""The rate-limit steps of every /api request: the caller's limit before anything else, and the
operation's class (`x-rate-limit`) once Connexion has routed the request. One asks the limiter
once per rule, and every response, errors included, carries the headers of the tightest."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool

from kindling.errors import RateLimited
from kindling.platform.ratelimit import Decision, RateLimiter, caller_rule
from kindling.web.authentication import is_api_request, principal_of
from kindling.web.errors import send_error
from kindling.web.operations import Operations

# The operation class's decision, left in the request's state for the headers.
OPERATION_DECISION_KEY = "kindling.operation_limit"


class RateLimitMiddleware:
    """Applies the limits of docs/decisions.md §10 to every /api request but health, per account
    for the caller kindling.web.authentication found, else per client address.

    Sits outside Connexion's exception handling so that its headers reach error responses too.
    """

    def __init__(self, app, *, limiter: RateLimiter) -> None:
        self.app = app
        self.limiter = limiter

    async def __call__(self, scope, receive, send):
        if not is_api_request(scope):
            await self.app(scope, receive, send)
            return
        principal = principal_of(scope)
        key = principal.user_id if principal else _client_ip(scope)
        decision = await _hit(self.limiter, caller_rule(principal), key)
        if not decision.allowed:
            error = RateLimited("Rate limit exceeded; retry later", retry_after=decision.retry_after)
            await send_error(send, error, decision.headers())
            return

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                tightest = _tightest([decision, scope["state"].get(OPERATION_DECISION_KEY) or decision])
                message = {**message, "headers": list(message.get("headers", [])) + tightest.headers()}
            await send(message)

        await self.app(scope, receive, send_with_headers)


class OperationLimitMiddleware:
    """The limit of the class the routed operation declares, if it declares one; a refusal is
    raised, so Connexion answers it and RateLimitMiddleware adds the headers."""

    def __init__(self, app, *, limiter: RateLimiter, operations: Operations) -> None:
        self.app = app
        self.limiter = limiter
        self.operations = operations

    async def __call__(self, scope, receive, send):
        operation = self.operations.routed(scope) if is_api_request(scope) else None
        if operation is not None and operation.rate_limit is not None:
            principal = principal_of(scope)
            key = principal.user_id if principal else _client_ip(scope)
            decision = await _hit(self.limiter, operation.rate_limit, key)
            scope["state"][OPERATION_DECISION_KEY] = decision
            if not decision.allowed:
                raise RateLimited("Rate limit exceeded; retry later", retry_after=decision.retry_after)
        await self.app(scope, receive, send)


async def _hit(limiter: RateLimiter, rule: str, key: str) -> Decision:
    # A healthy Redis (or process memory) answers in a fraction of a millisecond, so it is asked
    # from the event loop: a trip through the thread pool costs more than that under load. A
    # Redis that failed lately, and may hang until its socket timeout, is waited for in a thread.
    if limiter.answers_promptly():
        return limiter.hit(rule, key)
    return await run_in_threadpool(limiter.hit, rule, key)


def _tightest(decisions: list[Decision]) -> Decision:
    """The limit a client must respect first: a refusal's, else the one with the least left."""
    denied = [d for d in decisions if not d.allowed]
    return max(denied, key=lambda d: d.reset) if denied else min(decisions, key=lambda d: d.remaining)


def _client_ip(scope) -> str:
    client = scope.get("client")
    return client[0] if client else "unknown"
