"""GET /api/health: healthy, degraded, strict and debug answers, and enforced timeouts."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
import time

from sqlalchemy import event

from kindling import __version__
from kindling.platform.database import make_engine
from kindling.platform.health import DatabaseProbe
from kindling.web.app import create_app
from tests.servers.live import free_port


def health_of(settings, **changes):
    app = create_app(dataclasses.replace(settings, **changes))
    with app.test_client() as client:
        started = time.monotonic()
        response = client.get("/api/health")
        return response, time.monotonic() - started


def test_healthy(client, settings):
    response = client.get("/api/health")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok" and body["service"] == "kindling"
    assert body["version"] == __version__ and body["environment"] == "test"
    assert body["checks"] == {"database": {"status": "ok"}, "cache": {"status": "ok"}}
    assert body["strictMode"] is False and "diagnostics" not in body
    assert dt.datetime.fromisoformat(body["timestamp"]).tzinfo is not None


def test_cache_refusing_connections_degrades(settings, caplog):
    response, _ = health_of(settings, redis_url=f"redis://127.0.0.1:{free_port()}/0")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "degraded"
    assert body["checks"]["database"] == {"status": "ok"}
    assert body["checks"]["cache"]["status"] == "error"
    assert "ConnectionError" in body["checks"]["cache"]["message"]
    assert any("health check cache failed" in record.getMessage() for record in caplog.records)


def test_hung_cache_answers_within_timeout(settings, silent_server):
    response, elapsed = health_of(settings, redis_url=silent_server.url("redis") + "/0")
    assert response.status_code == 200
    check = response.json()["checks"]["cache"]
    assert check["status"] == "error"
    assert re.search(r"no answer within 3 s|Timeout", check["message"])
    assert elapsed < 5.5


def test_hung_database_answers_within_timeout(settings, silent_server):
    url = f"postgresql+psycopg2://kindling@127.0.0.1:{silent_server.port}/kindling"
    response, elapsed = health_of(settings, database_url=url, strict_health_check=True)
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unhealthy"
    assert set(body) == {"status", "timestamp", "service", "checks"}
    assert body["checks"]["database"]["status"] == "error"
    # A server that never answers gets 2 s to set up a connection (CONNECT_LIMIT).
    assert body["checks"]["database"]["message"] == "OperationalError: no answer from the database in 2 s"
    assert elapsed < 3.5


def test_strict_mode_when_healthy_is_200(settings):
    response, _ = health_of(settings, strict_health_check=True)
    assert response.status_code == 200 and response.json()["strictMode"] is True


def test_debug_diagnostics_carry_no_secret(settings):
    response, _ = health_of(settings, debug_health_check=True, secret_key="s3cret-" * 6)
    diagnostics = response.json()["diagnostics"]
    assert diagnostics["databaseDialect"] in ("sqlite", "postgresql")
    assert diagnostics["cacheBackend"] == ("redis" if settings.redis_url else "memory")
    assert set(diagnostics["latencyMs"]) == {"database", "cache"}
    assert "s3cret" not in response.text and "postgres@" not in response.text


def test_health_neither_authenticates_nor_counts(rate_window, client, make, runtime):
    """Load balancers poll it from one address: 1,000 polls, all 200, no rate-limit headers,
    and no session is looked up for the credential they may carry."""
    account = make.admin()
    statements = []

    def record(_connection, _cursor, statement, *_args):
        statements.append(statement)

    event.listen(runtime.engine, "before_cursor_execute", record)
    try:
        for i in range(1000):
            response = client.get("/api/health", headers=account.headers if i % 2 else {})
            assert response.status_code == 200, (i, response.text)
            assert not any(name.startswith("x-ratelimit") for name in response.headers), i
    finally:
        event.remove(runtime.engine, "before_cursor_execute", record)
    assert not [statement for statement in statements if "sessions" in statement]
    # And the polls left the address's budget untouched.
    assert client.get("/api/auth/session").headers["x-ratelimit-remaining"] == "59"


def test_the_database_probe_asks_on_one_connection_kept_out_of_the_pool(settings):
    engine = make_engine(settings.database_url)
    connects = []
    event.listen(engine, "connect", lambda *_: connects.append(1))
    probe = DatabaseProbe(engine)
    for _ in range(20):
        probe.ping()
    assert len(connects) == 1
    assert engine.pool.checkedout() == 0
