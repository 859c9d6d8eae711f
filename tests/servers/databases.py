"""Throwaway PostgreSQL and Redis servers of a test's own, which it may stop and start at will.

The machine's shared PostgreSQL and Redis serve other people and CI, so fault tests never
touch them: these servers listen on free loopback ports and live in temporary directories.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time

import pytest
import redis

from kindling.platform.database import upgrade
from tests.servers.live import free_port


def _wait_for(ready, what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready():
            return
        time.sleep(0.05)
    raise RuntimeError(f"{what} did not start in time")


class RedisServer:
    """A `redis-server` that keeps nothing on disk, on a port of its own."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        """Start (again) on the same port."""
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                self.directory,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _wait_for(self._answers, "redis-server")

    def stop(self) -> None:
        """SHUTDOWN NOSAVE, as an operator (or a crash) would take it away."""
        client = redis.Redis(port=self.port, socket_timeout=5)
        try:
            client.shutdown(nosave=True)
        except redis.ConnectionError:
            pass  # it closes the connection as it goes
        finally:
            client.close()
        self.process.wait(timeout=10)

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def _answers(self) -> bool:
        client = redis.Redis(port=self.port, socket_timeout=1, socket_connect_timeout=1)
        try:
            return client.ping()
        except redis.RedisError:
            return False
        finally:
            client.close()


def _postgres_bin() -> str:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda path: int(path.split("/")[4]))
    if not found:
        raise RuntimeError("fault tests need PostgreSQL's server binaries (initdb, pg_ctl): apt-get install postgresql")
    return os.path.dirname(found[-1])


class PostgresCluster:
    """A cluster of its own (initdb + pg_ctl), trust auth, listening on loopback only."""

    def __init__(self, directory: str) -> None:
        self.bin = _postgres_bin()
        self.directory = directory
        self.data = os.path.join(directory, "data")
        self.port = free_port()
        self.url = f"postgresql+psycopg2://postgres@127.0.0.1:{self.port}/postgres"
        # PostgreSQL refuses to run as root: as root, the cluster belongs to the postgres user.
        self._as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self._as:
            account = pwd.getpwnam("postgres")
            os.chown(directory, account.pw_uid, account.pw_gid)
        self._run(
            "initdb",
            "--pgdata",
            self.data,
            "--username",
            "postgres",
            "--auth",
            "trust",
            "--no-sync",
            "--no-instructions",
            "--encoding",
            "UTF8",
        )

    def start(self) -> None:
        """Start (again) on the same port and wait until it answers."""
        options = f"-k {self.directory} -c listen_addresses=127.0.0.1 -p {self.port} -c fsync=off"
        self._run(
            "pg_ctl",
            "start",
            "--pgdata",
            self.data,
            "--log",
            os.path.join(self.directory, "server.log"),
            "--options",
            options,
            "--wait",
        )

    def stop(self, mode: str = "immediate") -> None:
        """Stop the cluster; `immediate` drops every connection at once, as a crash would."""
        self._run("pg_ctl", "stop", "--pgdata", self.data, "--mode", mode, "--wait")

    def freeze(self) -> None:
        """Stop every process of the cluster dead (SIGSTOP), as a stalled disk or a paused VM
        would: its sockets stay open and the kernel acknowledges what is sent, but nothing answers."""
        self._signal(signal.SIGSTOP)

    def thaw(self) -> None:
        self._signal(signal.SIGCONT)

    def close(self) -> None:
        if os.path.exists(os.path.join(self.data, "postmaster.pid")):
            self.thaw()
            self.stop()

    def _signal(self, signum: int) -> None:
        with open(os.path.join(self.data, "postmaster.pid")) as pidfile:
            postmaster = int(pidfile.readline())
        children = subprocess.run(["pgrep", "-P", str(postmaster)], capture_output=True, text=True).stdout.split()
        for pid in [postmaster, *map(int, children)]:
            os.kill(pid, signum)

    def _run(self, program: str, *args: str) -> None:
        subprocess.run([*self._as, os.path.join(self.bin, program), *args], check=True, capture_output=True, timeout=60)


@pytest.fixture(scope="session")
def redis_service():
    """A Redis server of the test session's own."""
    directory = tempfile.mkdtemp(prefix="kindling-redis-")
    server = RedisServer(directory)
    server.start()
    yield server
    server.close()
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_service():
    """A PostgreSQL cluster of the test session's own, migrated to the newest schema."""
    # Not under pytest's tmp_path: its parents are private to root, and postgres must reach it.
    directory = tempfile.mkdtemp(prefix="kindling-pg-")
    cluster = PostgresCluster(directory)
    try:
        cluster.start()
        upgrade(cluster.url)
        yield cluster
    finally:
        cluster.close()
        shutil.rmtree(directory, ignore_errors=True)
