"""The rate-limit steps of every /api request: the caller's limit before anything else, and the
operation's class (`x-rate-limit`) once Connexion has routed the request. One asks the limiter
once per rule; each decision is left in the request's state, and every response, errors
included, carries the headers of the tightest (kindling.web.edge adds them)."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Receive, Scope, Send

from kindling.errors import RateLimited
from kindling.platform.ratelimit import Decision, RateLimiter, caller_rule
from kindling.web.authentication import is_api_request, principal_of
from kindling.web.operations import Operations

# The decisions of the request's limits so far, for the response's headers.
DECISIONS_KEY = "kindling.limits"


class RateLimitMiddleware:
    """Applies the limits of docs/decisions.md §10 to every /api request but health, per account
    for the caller kindling.web.authentication found, else per client address."""

    def __init__(self, app: ASGIApp, *, limiter: RateLimiter) -> None:
        self.app = app
        self.limiter = limiter

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if is_api_request(scope):
            principal = principal_of(scope)
            key = principal.user_id if principal else _client_ip(scope)
            decision = await hit(self.limiter, caller_rule(principal), key)
            keep(scope, decision)
            if not decision.allowed:
                raise RateLimited("Rate limit exceeded; retry later", retry_after=decision.retry_after)
        await self.app(scope, receive, send)


class OperationLimitMiddleware:
    """The limit of the class the routed operation declares, if it declares one."""

    def __init__(self, app: ASGIApp, *, limiter: RateLimiter, operations: Operations) -> None:
        self.app = app
        self.limiter = limiter
        self.operations = operations

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        operation = self.operations.routed(scope) if is_api_request(scope) else None
        if operation is not None and operation.rate_limit is not None:
            principal = principal_of(scope)
            key = principal.user_id if principal else _client_ip(scope)
            decision = await hit(self.limiter, operation.rate_limit, key)
            keep(scope, decision)
            if not decision.allowed:
                raise RateLimited("Rate limit exceeded; retry later", retry_after=decision.retry_after)
        await self.app(scope, receive, send)


async def hit(limiter: RateLimiter, rule: str, key: str) -> Decision:
    # A healthy Redis (or process memory) answers in a fraction of a millisecond, so it is asked
    # from the event loop: a trip through the thread pool costs more than that under load. A
    # Redis that failed lately, and may hang until its socket timeout, is waited for in a thread.
    if limiter.answers_promptly():
        return limiter.hit(rule, key)
    return await run_in_threadpool(limiter.hit, rule, key)


def keep(scope: Scope, decision: Decision) -> None:
    """Leave a decision for the response's headers."""
    scope.setdefault("state", {}).setdefault(DECISIONS_KEY, []).append(decision)


def limit_headers(scope: Scope) -> list[tuple[bytes, bytes]]:
    """The headers of the limit a client must respect first, if any was applied: a refusal's,
    else the one with the least left."""
    decisions = scope.get("state", {}).get(DECISIONS_KEY)
    if not decisions:
        return []
    denied = [d for d in decisions if not d.allowed]
    tightest = max(denied, key=lambda d: d.reset) if denied else min(decisions, key=lambda d: d.remaining)
    return tightest.headers()


def _client_ip(scope: Scope) -> str:
    client = scope.get("client")
    return client[0] if client else "unknown"
