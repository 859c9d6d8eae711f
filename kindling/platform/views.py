"""The health check's handler."""

from __future__ import annotations

from kindling import __version__
from kindling.platform import health
from kindling.platform.base import utcnow
from kindling.platform.request import Reply, runtime

SERVICE = "kindling"


def get_health() -> Reply:
    state = runtime()
    settings = state.settings
    results = health.run_checks(state.database_probe, state.cache)
    checks = {name: result.as_dict() for name, result in results.items()}
    healthy = all(result.ok for result in results.values())
    body: dict[str, object]
    if healthy or not settings.strict_health_check:
        body = {
            "status": "ok" if healthy else "degraded",
            "timestamp": utcnow(),
            "service": SERVICE,
            "version": __version__,
            "environment": settings.environment,
            "checks": checks,
            "strictMode": settings.strict_health_check,
        }
        status = 200
    else:
        body = {"status": "unhealthy", "timestamp": utcnow(), "service": SERVICE, "checks": checks}
        status = 503
    if settings.debug_health_check:
        body["diagnostics"] = {
            "latencyMs": {name: result.latency_ms for name, result in results.items()},
            "databaseDialect": state.engine.dialect.name,
            "cacheBackend": state.cache.backend,
        }
    return body, status
