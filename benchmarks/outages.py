"""Request times while Redis is up, stopped or hung, and while PostgreSQL is stopped.

    python -m benchmarks.outages [--rounds 10]

Needs `redis-server` and PostgreSQL's server binaries; it starts throwaway servers of its own
(never the machine's shared ones) and a real `kindling serve` on them. Each figure is the wall
time of one HTTP request on loopback. A hung Redis accepts connections and never answers.
"""

from __future__ import annotations

import argparse
import shutil
import socket
import statistics
import tempfile
import threading
import time

from kindling.platform.database import upgrade
from tests.helpers import Caller
from tests.servers.databases import PostgresCluster, RedisServer
from tests.servers.live import LiveServer


def hung_port() -> tuple[int, socket.socket]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    held = []

    def accept():
        while True:
            try:
                held.append(listener.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    return listener.getsockname()[1], listener


def measure(label: str, server: LiveServer, caller: Caller, rounds: int) -> None:
    for name, call in caller.requests(server).items():
        seconds, statuses = [], set()
        for _ in range(rounds):
            started = time.perf_counter()
            statuses.add(call().status_code)
            seconds.append(time.perf_counter() - started)
        print(
            f"{label:<18} {name:<8} {rounds:>6} {statistics.median(seconds) * 1000:>9.1f} {max(seconds) * 1000:>9.1f}  {sorted(statuses)}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=10)
    rounds = parser.parse_args().rounds
    directories = [tempfile.mkdtemp(prefix="kindling-pg-"), tempfile.mkdtemp(prefix="kindling-redis-")]
    postgres, redis = PostgresCluster(directories[0]), RedisServer(directories[1])
    port, listener = hung_port()
    servers = []
    try:
        postgres.start()
        upgrade(postgres.url)
        redis.start()
        env = {"DATABASE_URL": postgres.url, "ENVIRONMENT": "test", "RATE_LIMIT_MULTIPLIER": "1000"}
        servers.append(LiveServer({**env, "REDIS_URL": redis.url}))
        servers.append(LiveServer({**env, "REDIS_URL": f"redis://127.0.0.1:{port}/0"}))
        for server in servers:
            server.wait_ready(timeout=60)  # two servers start side by side
        shared, hung = servers
        caller = Caller(shared)
        print(f"{'state':<18} {'request':<8} {'runs':>6} {'median ms':>9} {'max ms':>9}  statuses")
        measure("redis up", shared, caller, rounds)
        redis.stop()
        measure("redis stopped", shared, caller, rounds)
        redis.start()
        time.sleep(5)  # the breaker's cooldown: back on Redis
        measure("redis restarted", shared, caller, rounds)
        measure("redis hung", hung, caller, rounds)
        postgres.stop()
        measure("postgres stopped", shared, caller, rounds)
        postgres.start()
        measure("postgres restarted", shared, caller, rounds)
    finally:
        for server in servers:
            server.stop()
        listener.close()
        redis.close()
        postgres.close()
        for directory in directories:
            shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
