"""Real `kindling serve` processes for tests that need a server over a socket."""

from __future__ import annotations

import os
import pathlib
import socket
import subprocess
import sys
import tempfile
import time

import pytest
import requests
from sqlalchemy import create_engine, make_url, text


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LiveServer:
    """`kindling serve` in a process of its own (or `command`, given the port it must serve on)."""

    def __init__(self, env: dict[str, str], workers: int = 1, command: list[str] | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        command = command or [sys.executable, "-m", "kindling.cli", "serve", "--workers", str(workers), "--port"]
        # Logs (stderr, and stdout, where uvicorn's access log goes) go to a file, not a pipe: a pipe
        # nobody reads fills up and blocks a chatty server.
        self.log_path = pathlib.Path(tempfile.mkstemp(prefix="kindling-server-", suffix=".log")[1])
        with self.log_path.open("w") as log:
            self.process = subprocess.Popen(
                [*command, str(self.port)],
                env={**os.environ, "LOG_LEVEL": "WARNING", **env},
                stdout=log,  # the access log
                stderr=log,
            )

    def log(self) -> str:
        """Everything the server has logged so far."""
        return self.log_path.read_text(errors="replace")

    def wait_ready(self, timeout: float = 60) -> None:
        # A minute: `serve --workers 2` on a busy 2-core machine has taken over 30 s to answer.
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited: {self.log()}")
            try:
                requests.get(self.url + "/api/health", timeout=1)
                return
            except requests.ReadTimeout:
                return  # it accepted the request: serving, if slowly (a dependency is down)
            except requests.ConnectionError:
                time.sleep(0.1)
        raise RuntimeError("server did not start in time")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log_path.unlink(missing_ok=True)


@pytest.fixture
def fresh_database_url(settings, tmp_path):
    """A database of its own, for servers whose writes must not reach other tests."""
    if settings.embedded:
        yield f"sqlite:///{tmp_path / 'live.db'}"
        return
    url = make_url(settings.database_url)
    name = f"{url.database}_live"
    admin = create_engine(url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    yield url.set(database=name).render_as_string(hide_password=False)
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture
def live_server(settings):
    """Start servers on the test backends: `live_server(**env)` returns a running LiveServer."""
    servers: list[LiveServer] = []

    def start(workers: int = 1, **env: str) -> LiveServer:
        base = {"DATABASE_URL": settings.database_url, "ENVIRONMENT": "test"}
        if settings.redis_url:
            base["REDIS_URL"] = settings.redis_url
        server = LiveServer({**base, **env}, workers=workers)
        servers.append(server)
        server.wait_ready()
        return server

    yield start
    for server in servers:
        server.stop()
