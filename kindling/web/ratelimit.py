"""The rate-limit step of every /api request: asks the limiter, answers 429 or adds the headers."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool

from kindling.errors import RateLimited
from kindling.platform.access import Principal
from kindling.platform.ratelimit import Decision, RateLimiter, rules_for
from kindling.web.authentication import is_api_request, principal_of
from kindling.web.errors import send_error
from kindling.web.operations import Operations


class RateLimitMiddleware:
    """Applies the limits of docs/decisions.md §10 to every /api request but health, per account
    for the caller kindling.web.authentication found, else per client address, and the class
    the operation declares in `x-rate-limit`.

    Sits outside Connexion's exception handling so that its headers reach error responses too.
    """

    def __init__(self, app, *, limiter: RateLimiter, operations: Operations) -> None:
        self.app = app
        self.limiter = limiter
        self.operations = operations

    async def __call__(self, scope, receive, send):
        if not is_api_request(scope):
            await self.app(scope, receive, send)
            return
        # A healthy Redis (or process memory) answers in a fraction of a millisecond, so it is
        # asked from the event loop: a trip through the thread pool costs more than that under
        # load. A Redis that failed lately, and may hang until its socket timeout, is waited
        # for in a thread.
        principal = principal_of(scope)
        if self.limiter.answers_promptly():
            decision = self._decide(scope, principal)
        else:
            decision = await run_in_threadpool(self._decide, scope, principal)
        if not decision.allowed:
            error = RateLimited("Rate limit exceeded; retry later", retry_after=decision.retry_after)
            await send_error(send, error, decision.headers())
            return

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                message = {**message, "headers": list(message.get("headers", [])) + decision.headers()}
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def _decide(self, scope, principal: Principal | None) -> Decision:
        key = principal.user_id if principal else _client_ip(scope)
        operation = self.operations.find(scope["method"], scope["path"])
        rules = rules_for(operation.rate_limit if operation else None, principal)
        decisions = [self.limiter.hit(rule, key) for rule in rules]
        denied = [d for d in decisions if not d.allowed]
        # Report the tightest limit: the one a client must respect first.
        return max(denied, key=lambda d: d.reset) if denied else min(decisions, key=lambda d: d.remaining)


def _client_ip(scope) -> str:
    client = scope.get("client")
    return client[0] if client else "unknown"
