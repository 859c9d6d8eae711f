"""Failovers under a running server, on throwaway servers of the test's own.

PostgreSQL: a multi-host DATABASE_URL with `target_session_attrs=read-write` moves to the server
that accepts writes once the primary is gone; requests caught in between answer 503 with
Retry-After, never 500. Redis: with Sentinels in place of REDIS_URL, a SIGKILLed master's
promoted replica takes over the cache and the rate limits.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time

import pytest
import redis
import requests
from sqlalchemy import create_engine, text

from kindling.platform.database import upgrade
from tests.helpers import OUTSIDER_ACT, Caller
from tests.servers.databases import PostgresCluster, RedisServer, _wait_for
from tests.servers.live import free_port

pytestmark = pytest.mark.live


def execute(url: str, statement: str) -> None:
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        connection.execute(text(statement))
    engine.dispose()


@pytest.fixture
def two_postgres():
    """Two clusters: the first takes writes, the second is read-only (as a standby is) until promoted."""
    directories = [tempfile.mkdtemp(prefix="kindling-pg-") for _ in range(2)]
    clusters = [PostgresCluster(directory) for directory in directories]
    try:
        for cluster in clusters:
            cluster.start()
            upgrade(cluster.url)
        execute(clusters[1].url, "ALTER SYSTEM SET default_transaction_read_only = on")
        execute(clusters[1].url, "SELECT pg_reload_conf()")
        yield clusters
    finally:
        for cluster in clusters:
            cluster.close()
        for directory in directories:
            shutil.rmtree(directory, ignore_errors=True)


@pytest.mark.parametrize("fault", ["crash", "demotion"])
def test_multi_host_database_url_fails_over_with_503_and_retry_after(two_postgres, live_server, fault):
    primary, standby = two_postgres
    url = (
        "postgresql+psycopg2://postgres@/postgres"
        f"?host=127.0.0.1:{primary.port}&host=127.0.0.1:{standby.port}&target_session_attrs=read-write"
    )
    server = live_server(DATABASE_URL=url, RATE_LIMIT_MULTIPLIER="100")
    caller = Caller(server)
    answered: list[tuple[int, str | None, float]] = []
    writing = threading.Event()
    writing.set()

    def write() -> None:
        with requests.Session() as http:
            while writing.is_set():
                started = time.perf_counter()
                response = http.post(
                    f"{server.url}/api/kindness", json=OUTSIDER_ACT, headers=caller.headers, timeout=10
                )
                answered.append(
                    (response.status_code, response.headers.get("retry-after"), time.perf_counter() - started)
                )
                time.sleep(0.02)

    writers = [threading.Thread(target=write) for _ in range(3)]
    for writer in writers:
        writer.start()
    try:
        time.sleep(0.5)
        if fault == "crash":
            primary.stop()  # immediate: every pooled connection to it breaks
        else:
            # Demoted as a manager demotes a primary: pooled connections stay open, and refuse writes.
            execute(primary.url, "ALTER SYSTEM SET default_transaction_read_only = on")
            execute(primary.url, "SELECT pg_reload_conf()")
        time.sleep(1.5)
        during = len(answered)
        execute(standby.url, "ALTER SYSTEM SET default_transaction_read_only = off")
        execute(standby.url, "SELECT pg_reload_conf()")  # promoted: it accepts writes now
        time.sleep(1.5)
    finally:
        writing.clear()
        for writer in writers:
            writer.join()

    statuses = [status for status, _, _ in answered]
    assert set(statuses) <= {201, 401, 503}, statuses
    assert 503 in statuses[:during], statuses
    assert all(retry_after == "5" for status, retry_after, _ in answered if status == 503)
    assert max(elapsed for _, _, elapsed in answered) < 6.5
    # The caller's account was on the old primary; on the new one, a new caller writes at once.
    after = Caller(server)
    response = requests.post(f"{server.url}/api/kindness", json=OUTSIDER_ACT, headers=after.headers, timeout=10)
    assert response.status_code == 201, response.text
    health = requests.get(f"{server.url}/api/health", timeout=10).json()
    assert health["checks"]["database"]["status"] == "ok", health


class Sentinel:
    """A `redis-server --sentinel` watching one master as service `kindling`, quick to fail over."""

    def __init__(self, directory: str, master_port: int) -> None:
        self.port = free_port()
        config = os.path.join(directory, f"sentinel-{self.port}.conf")
        with open(config, "w") as file:
            file.write(
                f"port {self.port}\nbind 127.0.0.1\ndir {directory}\n"
                f"sentinel monitor kindling 127.0.0.1 {master_port} 1\n"
                "sentinel down-after-milliseconds kindling 1000\n"
                "sentinel failover-timeout kindling 5000\n"
            )
        self.process = subprocess.Popen(
            ["redis-server", config, "--sentinel"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        _wait_for(self._answers, "redis-sentinel")

    def master_port(self) -> int:
        client = redis.Redis(port=self.port, socket_timeout=1)
        try:
            return int(client.sentinel_get_master_addr_by_name("kindling")[1])
        finally:
            client.close()

    def _answers(self) -> bool:
        try:
            return self.master_port() > 0
        except (redis.RedisError, TypeError):
            return False

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


def role(port: int) -> str | None:
    """The server's replication role; None while it is closing its clients' connections, as a
    master does when it is demoted."""
    client = redis.Redis(port=port, socket_timeout=1)
    try:
        return client.info("replication")["role"]
    except redis.ConnectionError:
        return None
    finally:
        client.close()


@pytest.fixture
def sentinel_redis():
    directory = tempfile.mkdtemp(prefix="kindling-sentinel-")
    master, replica = RedisServer(directory), RedisServer(directory)
    master.start()
    replica.start()
    redis.Redis(port=replica.port).replicaof("127.0.0.1", master.port)
    sentinel = Sentinel(directory, master.port)
    try:
        yield master, replica, sentinel
    finally:
        sentinel.close()
        replica.close()
        master.close()
        shutil.rmtree(directory, ignore_errors=True)


def test_sentinel_settings_serve_several_workers_and_follow_a_promotion(sentinel_redis, postgres_service, live_server):
    master, replica, sentinel = sentinel_redis
    env = {
        "DATABASE_URL": postgres_service.url,
        "REDIS_URL": "",
        "REDIS_SENTINELS": f"127.0.0.1:{sentinel.port}",
        "REDIS_SENTINEL_SERVICE": "kindling",
        "RATE_LIMIT_MULTIPLIER": "10",
    }
    first, second = live_server(workers=2, **env), live_server(**env)
    caller = Caller(first)

    def shared_on(port: int) -> bool:
        """Both servers count on one counter (a fixed window may roll over between two reads),
        kept in the Redis on `port`."""
        seen = caller.remaining(first)
        return caller.remaining(second) == seen - 1 and bool(redis.Redis(port=port).keys("kindling:limits*"))

    _wait_for(lambda: shared_on(master.port), "one counter in the master", timeout=15)

    assert master.process is not None
    master.process.send_signal(signal.SIGKILL)
    master.process.wait()
    _wait_for(lambda: sentinel.master_port() == replica.port, "the Sentinel's promotion", timeout=30)
    # Answering throughout, from the per-process fallback while the old master is gone.
    for _ in range(5):
        assert requests.get(f"{first.url}/api/auth/session", headers=caller.headers, timeout=10).status_code == 200

    _wait_for(lambda: shared_on(replica.port), "the limiter on the promoted master", timeout=30)
    health = requests.get(f"{second.url}/api/health", timeout=10).json()
    assert health["checks"]["cache"]["status"] == "ok", health


def test_sentinel_demotion_answers_readonly_then_reconnects_to_the_new_master(
    sentinel_redis, postgres_service, live_server
):
    """A master the Sentinels demote stays up as a replica: the connections kept to it meet READONLY
    on their next write, and must leave for the new master rather than fail every write after."""
    master, replica, sentinel = sentinel_redis
    env = {
        "DATABASE_URL": postgres_service.url,
        "REDIS_URL": "",
        "REDIS_SENTINELS": f"127.0.0.1:{sentinel.port}",
        "REDIS_SENTINEL_SERVICE": "kindling",
        "RATE_LIMIT_MULTIPLIER": "10",
    }
    first, second = live_server(**env), live_server(**env)
    caller = Caller(first)

    def shared_on(port: int) -> bool:
        seen = caller.remaining(first)
        return caller.remaining(second) == seen - 1 and bool(redis.Redis(port=port).keys("kindling:limits*"))

    _wait_for(lambda: shared_on(master.port), "one counter in the master", timeout=15)
    sentinel_client = redis.Redis(port=sentinel.port)
    sentinel_client.execute_command("SENTINEL FAILOVER", "kindling")
    sentinel_client.close()
    _wait_for(lambda: sentinel.master_port() == replica.port, "the Sentinel's promotion", timeout=30)
    _wait_for(lambda: role(master.port) == "slave", "the demotion", timeout=30)
    for _ in range(5):
        assert requests.get(f"{first.url}/api/auth/session", headers=caller.headers, timeout=10).status_code == 200
    _wait_for(lambda: shared_on(replica.port), "the limiter on the promoted master", timeout=30)
    for server in (first, second):
        health = requests.get(f"{server.url}/api/health", timeout=10).json()
        assert health["checks"]["cache"]["status"] == "ok", health


def test_unreachable_sentinels_keep_the_fallbacks_and_health_degraded(postgres_service, live_server):
    server = live_server(
        DATABASE_URL=postgres_service.url,
        REDIS_URL="",
        REDIS_SENTINELS=f"127.0.0.1:{free_port()}",
        REDIS_SENTINEL_SERVICE="kindling",
    )
    caller = Caller(server)
    assert requests.get(f"{server.url}/api/auth/session", headers=caller.headers, timeout=10).status_code == 200
    health = requests.get(f"{server.url}/api/health", timeout=10).json()
    assert health["status"] == "degraded" and health["checks"]["cache"]["status"] == "error", health
