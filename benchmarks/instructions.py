"""Instructions per request, counted by callgrind: Kindling against its two floors.

    python -m benchmarks.instructions \\
        --database-url postgresql+psycopg2://postgres@127.0.0.1:5432/kindling_bench \\
        --redis-url redis://127.0.0.1:6379/11 [--rounds 5]

Needs valgrind. Use a scratch database: it is migrated and an organization with 2,000 acts is
added to it (as benchmarks/load.py does). Instruction counts do not swing with the machine's
load the way requests per second do, so one run tells a change of a few percent.

Each app runs in a process of its own under `valgrind --tool=callgrind --instr-atstart=no`:
uvicorn serves it in-process (uvloop and httptools, as `kindling serve` has them) and a client
in the same event loop sends one request at a time over one keep-alive connection, so the
count includes uvicorn's HTTP handling and that small client. Start-up and warm-up requests
run uninstrumented; then `callgrind_control` switches instrumentation on and dumps the
counters after each round of requests, while the process waits for the next command. A
round's count, less that of an empty round (the command handling), divided by its requests,
is one figure; the table shows the median of `--rounds` rounds, after one discarded round per
route, and their median absolute deviation from it. A round now and then also pays for work
the app does once in a while, such as reading the session from the database (about 1.5
million instructions) when the process's 1 s memory of it has lapsed, which under callgrind's
slowness happens every few seconds; the median leaves those rounds out, and a machine busy
with other work makes them more common.

The apps, with production settings on PostgreSQL and Redis (`RATE_LIMIT_MULTIPLIER=100000`,
so the limiter counts every request without refusing any):
- Kindling: GET /api/health (as a probe sends it, with no credentials), cached
  GET /api/kindness/stats with a session, and GET /api/kindness?limit=100;
- the framework floor, benchmarks/framework_floor.py: a Connexion FlaskApp with one handler,
  Connexion's defaults, the same session lookup and the same cached statistics;
- the bare Flask floor, benchmarks/floor.py (no session lookup, no validation, no limiter).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

import uvicorn

HEALTH = ("GET /api/health", "/api/health", False)
STATS = ("GET /api/kindness/stats (cached)", "/api/kindness/stats", True)
PAGE = ("GET /api/kindness?limit=100", "/api/kindness?limit=100", True)
# App name, the object uvicorn serves, its routes.
APPS = {
    "kindling": ("kindling.web.app:app_from_environment()", [HEALTH, STATS, PAGE]),
    "framework floor": ("benchmarks.framework_floor:app", [STATS]),
    "bare Flask floor": ("benchmarks.floor:app", [HEALTH, STATS, PAGE]),
}
# Requests per round: some 10 to 20 million instructions, a few seconds under callgrind.
REQUESTS = {HEALTH[0]: 5, STATS[0]: 5, PAGE[0]: 1}
WARMUP = 20


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--redis-url", required=True)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--apps", nargs="*", default=list(APPS), choices=list(APPS))
    args = parser.parse_args()
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        print("benchmarks/instructions.py needs valgrind: apt-get install valgrind", file=sys.stderr)
        return 2
    # Here, not at the top: the measured processes import only the app they serve.
    from benchmarks.load import production_env, seed
    from kindling.platform.database import upgrade

    upgrade(args.database_url)
    token, user_id, organization_id = seed(args.database_url)
    env = {
        **os.environ,
        **production_env(args.database_url, args.redis_url),
        "FLOOR_USER_ID": user_id,
        "FLOOR_ORGANIZATION_ID": organization_id,
        "BENCHMARK_TOKEN": token,
        # The same hashes in every run: dict and set layouts, and so the work, stay the same.
        "PYTHONHASHSEED": "0",
    }
    rows = []
    with tempfile.TemporaryDirectory() as out:
        for name in args.apps:
            rows += [(name, *row) for row in measure(name, env, args.rounds, pathlib.Path(out))]
    print(
        f"callgrind instructions per request, median of {args.rounds} rounds (spread: median absolute deviation / median)"
    )
    print(f"{'app':<18} {'route':<34} {'instructions':>14} {'spread':>8}")
    for app, route, median, spread in rows:
        print(f"{app:<18} {route:<34} {median / 1e6:>13.3f}M {spread:>7.2%}")
    return 0


def measure(name: str, env: dict, rounds: int, out: pathlib.Path) -> list[tuple[str, float, float]]:
    """(route, median instructions per request, spread) for each route of one app."""
    target, routes = APPS[name]
    command = [
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",
        f"--callgrind-out-file={out}/callgrind.%p",
        sys.executable,
        "-m",
        "benchmarks.instructions",
        "--serve",
        target,
        *[f"{path}{'#auth' if auth else ''}" for _, path, auth in routes],
    ]
    child = subprocess.Popen(command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    dumps = 0

    def ask(line: str) -> int:
        """Send one command, wait for it to be done, and return the instructions it took."""
        nonlocal dumps
        child.stdin.write(line + "\n")
        child.stdin.flush()
        answer = child.stdout.readline().strip()
        if answer != "done":
            raise RuntimeError(f"{name}: {line!r} answered {answer!r}")
        subprocess.run(["callgrind_control", "--dump", str(child.pid)], check=True, capture_output=True)
        dumps += 1
        text = (out / f"callgrind.{child.pid}.{dumps}").read_text()
        return int(re.search(r"^summary: (\d+)", text, re.MULTILINE).group(1))

    try:
        if child.stdout.readline().strip() != "ready":
            raise RuntimeError(f"{name} did not start")
        subprocess.run(["callgrind_control", "--instr=on", str(child.pid)], check=True, capture_output=True)
        idle = min(ask("0 0") for _ in range(3))
        results = []
        for index, (route, _, _) in enumerate(routes):
            count = REQUESTS[route]
            ask(f"{index} {count}")
            per_request = [(ask(f"{index} {count}") - idle) / count for _ in range(rounds)]
            median = statistics.median(per_request)
            results.append((route, median, statistics.median(abs(value - median) for value in per_request) / median))
        return results
    finally:
        child.stdin.close()
        child.wait(timeout=300)


def serve(target: str, routes: list[str]) -> None:
    """Under callgrind: serve `target`, warm each route up, then run the rounds stdin asks for."""
    module, _, attribute = target.partition(":")
    factory = attribute.endswith("()")
    app = getattr(importlib.import_module(module), attribute.removesuffix("()"))
    app = app() if factory else app
    # Kindling with the HTTP protocol `kindling serve` runs, the floors with plain httptools.
    http = (
        "kindling.web.overrides.http_protocol:BoundedHttpToolsProtocol"
        if module.startswith("kindling.")
        else "httptools"
    )
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", timeout_keep_alive=3600, http=http)
    with asyncio.Runner(loop_factory=config.get_loop_factory()) as runner:
        runner.run(_serve(config, routes))


async def _serve(config, routes: list[str]) -> None:
    # Started without uvicorn's main loop, whose tick every 0.1 s would add work by wall time.
    config.load()
    server = uvicorn.Server(config)
    server.lifespan = config.lifespan_class(config)
    await server.startup()
    await server.on_tick(0)  # sets the Date header once
    port = server.servers[0].sockets[0].getsockname()[1]
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    token = os.environ["BENCHMARK_TOKEN"]
    requests = []
    for route in routes:
        path, _, auth = route.partition("#")
        headers = f"Authorization: Bearer {token}\r\n" if auth else ""
        requests.append(f"GET {path} HTTP/1.1\r\nHost: benchmark\r\n{headers}\r\n".encode())
    for request in requests:
        for _ in range(WARMUP):
            await _request(reader, writer, request)
    print("ready", flush=True)
    for line in sys.stdin:  # blocks the loop on purpose: nothing else runs between rounds
        index, count = map(int, line.split())
        for _ in range(count):
            await _request(reader, writer, requests[index])
        print("done", flush=True)
    writer.close()
    await server.shutdown()


async def _request(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes) -> None:
    writer.write(request)
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = int(re.search(rb"(?i)\r\ncontent-length: *(\d+)", head).group(1))
    body = await reader.readexactly(length)
    if status != 200:
        raise RuntimeError(f"{request.split(b' ', 2)[1].decode()} answered {status}: {body[:200]!r}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        serve(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(main())
