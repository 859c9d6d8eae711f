"""The cache store: in-process for embedded mode, Redis when REDIS_URL or REDIS_SENTINELS is set."""

from __future__ import annotations

import threading
import time
import typing
from typing import Protocol

import redis
import redis.sentinel

from kindling.platform.circuit import CircuitBreaker

SENTINEL_SCHEME = "redis+sentinel://"


def redis_client(url: str, *, timeout: float, decode_responses: bool = False) -> redis.Redis:
    """A client for `url`: a Redis URL, or `redis+sentinel://host:port,…/service`, whose client
    asks the Sentinels for the master at every new connection. redis-py's Sentinel pool drops a
    connection that meets READONLY (a master demoted to replica) and raises a ConnectionError, so
    the next command connects to the master the Sentinels name by then."""
    if not url.startswith(SENTINEL_SCHEME):
        return redis.Redis.from_url(
            url, socket_timeout=timeout, socket_connect_timeout=timeout, decode_responses=decode_responses
        )
    hosts, _, service = url.removeprefix(SENTINEL_SCHEME).partition("/")
    sentinels = [(host, int(port)) for host, _, port in (item.rpartition(":") for item in hosts.split(","))]
    sentinel = redis.sentinel.Sentinel(
        sentinels,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        sentinel_kwargs={"socket_timeout": timeout, "socket_connect_timeout": timeout},
    )
    return sentinel.master_for(
        service, socket_timeout=timeout, socket_connect_timeout=timeout, decode_responses=decode_responses
    )


class Cache(Protocol):
    backend: str

    def get(self, key: str) -> str | None: ...
    def get_many(self, keys: list[str]) -> list[str | None]: ...
    def set(self, key: str, value: str, ttl: int) -> None: ...
    def delete(self, key: str) -> None: ...
    def ping(self, timeout: float) -> None: ...
    def clear(self) -> None: ...


class MemoryCache:
    """A dict with expiry, shared by the threads of one process."""

    backend = "memory"

    def __init__(self) -> None:
        self._items: dict[str, tuple[float, str]] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> str | None:
        with self._lock:
            item = self._items.get(key)
            if item is None:
                return None
            expires, value = item
            if expires <= time.monotonic():
                del self._items[key]
                return None
            return value

    def get_many(self, keys: list[str]) -> list[str | None]:
        return [self.get(key) for key in keys]

    def set(self, key: str, value: str, ttl: int) -> None:
        with self._lock:
            self._items[key] = (time.monotonic() + ttl, value)

    def delete(self, key: str) -> None:
        with self._lock:
            self._items.pop(key, None)

    def ping(self, timeout: float) -> None:
        return None

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


class RedisCache:
    """Redis, shared by every process; a Redis outage degrades to the process's own cache."""

    backend = "redis"

    def __init__(self, url: str, breaker: CircuitBreaker, *, prefix: str = "kindling:cache:") -> None:
        self.url = url
        self._redis = redis_client(url, timeout=1, decode_responses=True)
        self._prefix = prefix
        self._fallback = MemoryCache()
        self._breaker = breaker
        self._health_clients: dict[float, redis.Redis] = {}
        # Invalidations Redis missed during an outage: replayed when it answers again, so a value
        # it kept through the outage (a hang or a partition keeps data) cannot be served stale.
        self._missed: set[str] = set()
        self._missed_lock = threading.Lock()
        breaker.before_trusting_again(self._replay_missed)

    def get(self, key: str) -> str | None:
        # redis-py types every reply as "sync or async"; this client is the synchronous one.
        return self._breaker.call(
            lambda: typing.cast(str | None, self._redis.get(self._prefix + key)), lambda: self._fallback.get(key)
        )

    def get_many(self, keys: list[str]) -> list[str | None]:
        """The values of `keys`, in one round trip."""
        return self._breaker.call(
            lambda: typing.cast(list[str | None], self._redis.mget([self._prefix + key for key in keys])),
            lambda: self._fallback.get_many(keys),
        )

    def set(self, key: str, value: str, ttl: int) -> None:
        self._breaker.call(
            lambda: self._redis.set(self._prefix + key, value, ex=ttl), lambda: self._fallback.set(key, value, ttl)
        )

    def delete(self, key: str) -> None:
        # Delete in both places so a value cached during an outage cannot outlive it.
        self._fallback.delete(key)
        self._breaker.call(lambda: self._redis.delete(self._prefix + key), lambda: self._miss(key))

    def ping(self, timeout: float) -> None:
        """Raise unless Redis answers PING within `timeout` seconds (past the circuit breaker,
        on a pool of its own, so health always asks Redis itself)."""
        client = self._health_clients.get(timeout)
        if client is None:
            client = self._health_clients[timeout] = redis_client(self.url, timeout=timeout)
        client.ping()

    def clear(self) -> None:
        self._fallback.clear()
        for key in self._redis.scan_iter(self._prefix + "*"):
            self._redis.delete(key)

    def _miss(self, key: str) -> None:
        with self._missed_lock:
            self._missed.add(key)

    def _replay_missed(self) -> None:
        with self._missed_lock:
            keys, self._missed = self._missed, set()
        if not keys:
            return
        try:
            self._redis.delete(*(self._prefix + key for key in keys))
        except redis.RedisError:
            with self._missed_lock:
                self._missed |= keys
            raise


def redis_breaker() -> CircuitBreaker:
    """One breaker for everything on Redis: once the cache finds it down, the limiter skips it too."""
    return CircuitBreaker("Redis (cache and rate limits)", errors=(redis.RedisError, OSError))


def make_cache(redis_url: str | None, breaker: CircuitBreaker) -> Cache:
    return RedisCache(redis_url, breaker) if redis_url else MemoryCache()
