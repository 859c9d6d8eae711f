"""Availability of the service and of the database and cache it depends on."""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import logging
import threading
import time
from collections.abc import Callable

from sqlalchemy import Engine
from sqlalchemy.pool import PoolProxiedConnection

from kindling.platform.cache import Cache

log = logging.getLogger(__name__)

CACHE_TIMEOUT = 3.0
# Below the driver's 2 s to connect and 3 s of silence: a failure this quick was not a wait.
QUICK_FAILURE = 1.0
# The cache is asked from a thread of its own, side by side with the database, so that a hung
# Redis costs its timeout and never more; a thread stuck on a dead socket is abandoned, and
# the pool is sized to survive a few. The database is asked from the calling thread: the
# driver's own limits already bound it (2 s to connect, 3 s of silence).
_checks = concurrent.futures.ThreadPoolExecutor(max_workers=32, thread_name_prefix="health")


@dataclasses.dataclass(frozen=True)
class CheckResult:
    ok: bool
    message: str | None
    latency_ms: float

    def as_dict(self) -> dict:
        return {"status": "ok"} if self.ok else {"status": "error", "message": self.message}


class DatabaseProbe:
    """Asks the database itself, as the cache's health client asks Redis itself: on a connection
    of its own, taken from the engine once and kept out of its pool. A ping is then one round
    trip, where a pooled connection adds the pool's pre-ping and bookkeeping, and a pool drained
    by slow requests does not make a healthy database look down."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._connection: PoolProxiedConnection | None = None
        self._lock = threading.Lock()

    def ping(self) -> None:
        """Raise unless the database answers a trivial query."""
        if not self._lock.acquire(blocking=False):
            self._ping_pooled()  # another check is using the probe's connection
            return
        started = time.perf_counter()
        try:
            self._ping_own()
        except Exception:
            self._discard()
            # A connection the database closed, as a restart does, fails at once: ask again
            # through the pool, which replaces dead connections. A silent database has had its time.
            if time.perf_counter() - started >= QUICK_FAILURE:
                raise
            self._ping_pooled()
        finally:
            self._lock.release()

    def _ping_own(self) -> None:
        if self._connection is None:
            connection = self.engine.raw_connection()
            connection.detach()
            self._connection = connection
        self._ping(self._connection)

    def _ping(self, connection: PoolProxiedConnection) -> None:
        # The dialect's own ping: on PostgreSQL a SELECT 1 in autocommit, no transaction.
        if connection.dbapi_connection is None:
            raise ConnectionError("the database connection was invalidated")
        self.engine.dialect.do_ping(connection.dbapi_connection)

    def _ping_pooled(self) -> None:
        connection = self.engine.raw_connection()
        try:
            self._ping(connection)
        finally:
            connection.close()

    def _discard(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            with contextlib.suppress(Exception):
                connection.close()


def run_checks(database: DatabaseProbe, cache: Cache) -> dict[str, CheckResult]:
    """Run the database and cache checks side by side, each within its limit."""
    started = time.perf_counter()
    cache_check = _checks.submit(_timed, cache.ping, CACHE_TIMEOUT)
    results = {}
    try:
        results["database"] = CheckResult(True, None, _timed(database.ping))
    except Exception as exc:  # any failure of a dependency is a failed check
        results["database"] = CheckResult(False, _describe(exc), _ms(started))
    try:
        remaining = max(0.0, CACHE_TIMEOUT - (time.perf_counter() - started))
        results["cache"] = CheckResult(True, None, cache_check.result(timeout=remaining))
    except concurrent.futures.TimeoutError:
        results["cache"] = CheckResult(False, f"no answer within {CACHE_TIMEOUT:g} s", CACHE_TIMEOUT * 1000)
    except Exception as exc:
        results["cache"] = CheckResult(False, _describe(exc), _ms(started))
    for name, result in results.items():
        if not result.ok:
            log.warning("health check %s failed: %s", name, result.message)
    return results


def _timed(check: Callable[..., object], *arguments: object) -> float:
    started = time.perf_counter()
    check(*arguments)
    return _ms(started)


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)


def _describe(exc: Exception) -> str:
    # The first line only: driver messages can run long, and never need to carry a URL.
    first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{exc.__class__.__name__}: {first_line}"[:300]
