"""Rate limits of every /api request, shared across processes through Redis."""

from __future__ import annotations

import dataclasses
import logging
import math
import time
from collections.abc import Callable
from typing import TypeVar

from limits import RateLimitItemPerSecond
from limits.storage import MemoryStorage, RedisSentinelStorage, RedisStorage, Storage
from limits.strategies import MovingWindowRateLimiter

from kindling.platform.access import Principal
from kindling.platform.cache import SENTINEL_SCHEME, redis_breaker
from kindling.platform.circuit import CircuitBreaker

log = logging.getLogger(__name__)
T = TypeVar("T")

# Requests per window for each rule (docs/decisions.md §10); RATE_LIMIT_MULTIPLIER scales them.
RULES = {
    "consultant": (100, 60),
    "member": (300, 60),
    "anonymous": (60, 60),
    "bulk": (10, 60),
    "theme-generate": (5, 60),
    "sign-in": (10, 15 * 60),
    # Per organization, for its identity provider on /scim/v2 (docs/decisions.md §13).
    "scim": (1200, 60),
}


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
    """Limits on Redis (or process memory), degrading to memory if Redis fails.

    Requests are counted in fixed windows aligned to the clock: one INCR script per check
    (limits' `Storage.incr`) answers both whether the request is allowed and what the headers
    say, where a moving window needs a second script for the headers. Sign-in attempts use a
    moving window: no burst at a window's edge, and they are few.
    """

    def __init__(
        self, redis_url: str | None, multiplier: float = 1.0, *, breaker: CircuitBreaker | None = None
    ) -> None:
        self._breaker = breaker or redis_breaker()
        self._fallback: Storage = MemoryStorage()
        self._primary: Storage = _redis_storage(redis_url) if redis_url else self._fallback
        self._moving = {id(storage): MovingWindowRateLimiter(storage) for storage in (self._primary, self._fallback)}
        self._items = {
            name: RateLimitItemPerSecond(max(1, int(amount * multiplier)), seconds)
            for name, (amount, seconds) in RULES.items()
        }

    def answers_promptly(self) -> bool:
        """Whether its store is process memory or a Redis that has not failed lately."""
        return self._primary is self._fallback or self._breaker.trusted

    def hit(self, rule: str, key: str) -> Decision:
        """Count one request against `rule` for `key`, in one round trip to the store."""
        item = self._items[rule]
        period = item.get_expiry()
        window_start = int(time.time()) // period * period
        counter = item.key_for(rule, key, window_start)
        used = self._call(lambda storage: storage.incr(counter, period))
        return Decision(used <= item.amount, item.amount, max(0, item.amount - used), window_start + period)

    def attempt(self, rule: str, key: str) -> Decision:
        """Count one attempt against `rule` for `key` in a moving window, atomically: of any
        number of concurrent attempts, no more than the limit are allowed."""
        item = self._items[rule]

        def attempt(storage: Storage) -> Decision:
            limiter = self._moving[id(storage)]
            if limiter.hit(item, rule, key):
                return Decision(True, item.amount, 0, time.time() + item.get_expiry())
            reset, _remaining = limiter.get_window_stats(item, rule, key)
            return Decision(False, item.amount, 0, reset)

        return self._call(attempt)

    def forget(self, rule: str, key: str) -> None:
        """Clear the attempts counted against `rule` for `key`."""
        item = self._items[rule]
        self._call(lambda storage: self._moving[id(storage)].clear(item, rule, key))

    def reset(self) -> None:
        """Forget every counter."""
        self._fallback.reset()
        if self._primary is not self._fallback:
            self._primary.reset()

    def _call(self, operation: Callable[[Storage], T]) -> T:
        return self._breaker.call(lambda: operation(self._primary), lambda: operation(self._fallback))


def caller_rule(principal: Principal | None) -> str:
    """The rule every request of this caller counts against; an operation's class is another."""
    if principal is None:
        return "anonymous"
    return "consultant" if principal.is_consultant else "member"


def _redis_storage(url: str) -> Storage:
    """limits' storage for a Redis URL, or for `redis+sentinel://host:port,…/service`: its
    Sentinel storage finds the master the Sentinels name, and writes only to it."""
    if url.startswith(SENTINEL_SCHEME):
        return RedisSentinelStorage(
            url,
            use_replicas=False,
            key_prefix="kindling:limits",
            sentinel_kwargs={"socket_timeout": 1, "socket_connect_timeout": 1},
            socket_timeout=1,
            socket_connect_timeout=1,
        )
    return RedisStorage(url, key_prefix="kindling:limits", socket_timeout=1, socket_connect_timeout=1)
