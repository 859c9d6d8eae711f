"""Availability of the service and of the database and cache it depends on."""

from __future__ import annotations

import concurrent.futures
import dataclasses
import logging
import time

from sqlalchemy import Engine

from kindling.infrastructure.cache import Cache

log = logging.getLogger(__name__)

DATABASE_TIMEOUT = 5.0
CACHE_TIMEOUT = 3.0
# Checks run in their own threads so that a hung dependency costs its timeout, never more;
# a thread stuck on a dead socket is abandoned, and the pool is sized to survive a few.
# Two checks per request from every server thread at once, plus some abandoned ones.
_checks = concurrent.futures.ThreadPoolExecutor(max_workers=32, thread_name_prefix="health")


@dataclasses.dataclass(frozen=True)
class CheckResult:
    ok: bool
    message: str | None
    latency_ms: float

    def as_dict(self) -> dict:
        return {"status": "ok"} if self.ok else {"status": "error", "message": self.message}


def check_database(engine: Engine) -> None:
    # The dialect's own ping, on the driver's connection: on PostgreSQL a SELECT 1 in autocommit,
    # one round trip where a plain SELECT takes three (BEGIN and ROLLBACK around it). No
    # transaction, so no lock for a writer to hold up.
    connection = engine.raw_connection()
    try:
        engine.dialect.do_ping(connection.dbapi_connection)
    finally:
        connection.close()


def run_checks(engine: Engine, cache: Cache) -> dict[str, CheckResult]:
    """Run the database and cache checks side by side, each within its timeout."""
    started = time.perf_counter()
    futures = {
        "database": (_checks.submit(_timed, check_database, engine), DATABASE_TIMEOUT),
        "cache": (_checks.submit(_timed, cache.ping, CACHE_TIMEOUT), CACHE_TIMEOUT),
    }
    results = {}
    for name, (future, timeout) in futures.items():
        remaining = max(0.0, timeout - (time.perf_counter() - started))
        try:
            results[name] = CheckResult(True, None, future.result(timeout=remaining))
        except concurrent.futures.TimeoutError:
            results[name] = CheckResult(False, f"no answer within {timeout:g} s", timeout * 1000)
        except Exception as exc:  # any failure of a dependency is a failed check
            results[name] = CheckResult(False, _describe(exc), _ms(started))
    for name, result in results.items():
        if not result.ok:
            log.warning("health check %s failed: %s", name, result.message)
    return results


def _timed(check, argument) -> float:
    started = time.perf_counter()
    check(argument)
    return _ms(started)


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)


def _describe(exc: Exception) -> str:
    # The first line only: driver messages can run long, and never need to carry a URL.
    first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{exc.__class__.__name__}: {first_line}"[:300]
