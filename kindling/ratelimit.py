"""Rate limits of every /api request, shared across processes through Redis."""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import time

from limits import RateLimitItemPerSecond
from limits.storage import MemoryStorage, RedisStorage
from limits.strategies import MovingWindowRateLimiter
from sqlalchemy.exc import SQLAlchemyError
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers

from kindling import security
from kindling.access import Principal
from kindling.cache import redis_breaker
from kindling.circuit import CircuitBreaker

log = logging.getLogger(__name__)

# Requests per window for each rule (§10 of the design); RATE_LIMIT_MULTIPLIER scales them.
RULES = {
    "consultant": (100, 60),
    "member": (300, 60),
    "anonymous": (60, 60),
    "bulk": (10, 60),
    "theme-generate": (5, 60),
    "sign-in-failures": (10, 15 * 60),
}
BULK_PREFIX = "/api/bulk/"
THEME_GENERATE_PATH = "/api/theme/generate"


@dataclasses.dataclass(frozen=True)
class Decision:
    allowed: bool
    limit: int
    remaining: int
    reset: float  # Unix time at which the window has room again

    @property
    def retry_after(self) -> int:
        return max(1, math.ceil(self.reset - time.time()))

    def headers(self) -> list[tuple[bytes, bytes]]:
        return [
            (b"x-ratelimit-limit", str(self.limit).encode()),
            (b"x-ratelimit-remaining", str(self.remaining).encode()),
            (b"x-ratelimit-reset", str(math.ceil(self.reset)).encode()),
        ]


class RateLimiter:
    """Moving-window limits on Redis (or process memory), degrading to memory if Redis fails."""

    def __init__(self, redis_url: str | None, multiplier: float = 1.0, *, breaker: CircuitBreaker | None = None) -> None:
        self._breaker = breaker or redis_breaker()
        self._fallback = MovingWindowRateLimiter(MemoryStorage())
        self._primary = (
            MovingWindowRateLimiter(
                RedisStorage(redis_url, key_prefix="kindling:limits", socket_timeout=1, socket_connect_timeout=1)
            )
            if redis_url
            else self._fallback
        )
        self._items = {
            name: RateLimitItemPerSecond(max(1, int(amount * multiplier)), seconds)
            for name, (amount, seconds) in RULES.items()
        }

    def answers_promptly(self) -> bool:
        """Whether its store is process memory or a Redis that has not failed lately."""
        return self._primary is self._fallback or self._breaker.trusted

    def hit(self, rule: str, key: str) -> Decision:
        """Count one request against `rule` for `key`."""
        return self._run(rule, key, count=True)

    def peek(self, rule: str, key: str) -> Decision:
        """The state of `rule` for `key` without counting anything."""
        return self._run(rule, key, count=False)

    def reset(self) -> None:
        """Forget every counter."""
        self._fallback.storage.reset()
        if self._primary is not self._fallback:
            self._primary.storage.reset()

    def _run(self, rule: str, key: str, *, count: bool) -> Decision:
        item = self._items[rule]

        def check(limiter: MovingWindowRateLimiter) -> Decision:
            allowed = limiter.hit(item, rule, key) if count else limiter.test(item, rule, key)
            reset, remaining = limiter.get_window_stats(item, rule, key)
            return Decision(allowed, item.amount, max(0, remaining), reset)

        return self._call(check)

    def _call(self, operation):
        return self._breaker.call(lambda: operation(self._primary), lambda: operation(self._fallback))


def rules_for(path: str, principal: Principal | None) -> list[str]:
    if principal is None:
        rules = ["anonymous"]
    else:
        rules = ["consultant" if principal.is_consultant else "member"]
    if path.startswith(BULK_PREFIX):
        rules.append("bulk")
    elif path == THEME_GENERATE_PATH:
        rules.append("theme-generate")
    return rules


class RateLimitMiddleware:
    """Resolves the caller's session once and applies the limits of §10 to every /api request.

    Sits outside Connexion's exception handling so that its headers reach error responses too.
    """

    def __init__(self, app, *, limiter: RateLimiter, session_factory, cache) -> None:
        self.app = app
        self.limiter = limiter
        self.session_factory = session_factory
        self.cache = cache

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or not scope["path"].startswith("/api/"):
            await self.app(scope, receive, send)
            return
        try:
            principal, decision = await self._admit(scope)
        except SQLAlchemyError as exc:
            log.warning("database unavailable while authenticating: %s", exc.__class__.__name__)
            await _send_json(send, 503, {"error": "The database is unavailable; try again shortly", "code": "service_unavailable"}, [(b"retry-after", b"5")])
            return
        scope.setdefault("state", {})[security.PRINCIPAL_KEY] = principal
        if not decision.allowed:
            body = {"error": "Rate limit exceeded; retry later", "code": "rate_limited", "retryAfter": decision.retry_after}
            await _send_json(send, 429, body, decision.headers() + [(b"retry-after", str(decision.retry_after).encode())])
            return

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                message = {**message, "headers": list(message.get("headers", [])) + decision.headers()}
            await send(message)

        await self.app(scope, receive, send_with_headers)

    async def _admit(self, scope) -> tuple[Principal | None, Decision]:
        token = security.token_from_headers(Headers(scope=scope))
        # A healthy Redis (or process memory) answers in a fraction of a millisecond, so it is
        # asked from the event loop: a trip through the thread pool costs more than that under
        # load. The database, and a Redis that failed lately and may hang until its socket
        # timeout, are waited for in a thread.
        if not self.limiter.answers_promptly():
            return await run_in_threadpool(self._admit_in_thread, scope, token)
        principal = security.cached_principal(self.cache, token)
        if principal is security.NOT_CACHED:
            principal = await run_in_threadpool(security.authenticate, self.session_factory, self.cache, token)
        return principal, self._decide(scope, principal)

    def _admit_in_thread(self, scope, token: str | None) -> tuple[Principal | None, Decision]:
        principal = security.authenticate(self.session_factory, self.cache, token)
        return principal, self._decide(scope, principal)

    def _decide(self, scope, principal: Principal | None) -> Decision:
        key = principal.user_id if principal else _client_ip(scope)
        decisions = [self.limiter.hit(rule, key) for rule in rules_for(scope["path"], principal)]
        denied = [d for d in decisions if not d.allowed]
        # Report the tightest limit: the one a client must respect first.
        return max(denied, key=lambda d: d.reset) if denied else min(decisions, key=lambda d: d.remaining)


def _client_ip(scope) -> str:
    client = scope.get("client")
    return client[0] if client else "unknown"


async def _send_json(send, status: int, body: dict, headers: list[tuple[bytes, bytes]]) -> None:
    payload = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())] + headers,
        }
    )
    await send({"type": "http.response.body", "body": payload})
