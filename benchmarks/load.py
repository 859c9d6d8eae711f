"""Load: Kindling in its production setup against a floor, with wrk, route by route.

    python -m benchmarks.load \\
        --database-url postgresql+psycopg2://postgres@127.0.0.1:5432/kindling_load \\
        --redis-url redis://127.0.0.1:6379/11 [--duration 10] [--connections 50]

Needs `wrk` (Debian: apt-get install wrk). Use a scratch database: it is migrated and an
organization with 2,000 acts is added to it.

1. Starts `kindling serve --workers 2` on PostgreSQL and Redis (RATE_LIMIT_MULTIPLIER=100000,
   so the limiter counts every request without refusing any) and reports the time from
   spawning the command to its first healthy answer, with the package's bytecode compiled
   first, as `pip install` leaves it.
2. Starts the floor, benchmarks/floor.py: a minimal Flask app answering the same JSON from the
   same service functions and queries, served the same way (uvicorn, 2 workers, a2wsgi), with
   no validation, no session lookup and no rate limiting.
3. Runs wrk against both, one route at a time, with the same threads, connections and duration:
   GET /api/health, GET /api/kindness/stats, POST /api/kindness, GET /api/kindness?limit=100.
   Kindling's requests carry a Bearer session token; the floor's need none. Each route runs
   `--rounds` times (default 3), Kindling then the floor each time.
4. Prints, from the round with the median ratio, requests per second and p50/p99 latency for
   each (with the non-2xx answers of every round), and the ratio Kindling/floor, with the targets: health p99 < 100 ms at 50
   connections, Kindling ≥ 0.6 × floor on every route, start-up ≤ 2 s. wrk, both servers,
   PostgreSQL and Redis share the machine's cores, as they would on any single host; the load
   average before the run is printed with the table.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

import requests

from kindling.cache import MemoryCache
from kindling.persistence.database import make_engine, make_session_factory, upgrade
from kindling.security import authenticate
from kindling.services import accounts, kindness
from tests.live import LiveServer

ROOT = pathlib.Path(__file__).resolve().parent.parent
ACT = {"description": "Covered a shift", "category": "peer_recognition", "verificationLevel": 3, "recipientId": "external-1"}
ROUTES = [
    ("GET /api/health", "GET", "/api/health", None),
    ("GET /api/kindness/stats", "GET", "/api/kindness/stats", None),
    ("POST /api/kindness", "POST", "/api/kindness", ACT),
    ("GET /api/kindness?limit=100", "GET", "/api/kindness?limit=100", None),
]
HEALTH_P99_TARGET_MS = 100
RATIO_TARGET = 0.6
STARTUP_TARGET_S = 2.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--redis-url", required=True)
    parser.add_argument("--duration", type=int, default=10, help="seconds per route and server")
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3, help="alternating runs per route; the median round is reported")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        print("benchmarks/load.py needs wrk: apt-get install wrk", file=sys.stderr)
        return 2

    upgrade(args.database_url)
    token, user_id, organization_id = seed(args.database_url)
    env = {
        "DATABASE_URL": args.database_url,
        "REDIS_URL": args.redis_url,
        "RATE_LIMIT_MULTIPLIER": "100000",
        "ENVIRONMENT": "production",
        "SECRET_KEY": "benchmark-secret-key-of-32-characters!",
    }
    # pip compiles an installed package's bytecode; a checkout run in place may have none (or
    # PYTHONDONTWRITEBYTECODE set), and then every worker would compile Kindling at each start.
    compileall.compile_dir(ROOT / "kindling", quiet=1)
    started = time.perf_counter()
    kindling = LiveServer(env, workers=2)
    startup = time.perf_counter() - started if wait_healthy(kindling.url) else float("inf")
    floor = LiveServer(
        {**env, "FLOOR_USER_ID": user_id, "FLOOR_ORGANIZATION_ID": organization_id},
        command=[sys.executable, "-m", "uvicorn", "benchmarks.floor:app", "--workers", "2", "--log-level", "warning", "--port"],
    )
    wait_healthy(floor.url)
    load = os.getloadavg()[0]
    try:
        rows = []
        with tempfile.TemporaryDirectory() as scripts:
            for name, method, path, body in ROUTES:
                rounds = [
                    (wrk(kindling.url + path, method, body, token, args, scripts),
                     wrk(floor.url + path, method, body, None, args, scripts))
                    for _ in range(args.rounds)
                ]
                # The round with the median ratio, whole: a shared machine makes single runs swing.
                # Its error counts are every round's, so no failed request hides in another round.
                rounds.sort(key=lambda pair: pair[0]["rps"] / pair[1]["rps"])
                ours, theirs = rounds[len(rounds) // 2]
                rows.append((
                    name,
                    {**ours, "errors": sum(pair[0]["errors"] for pair in rounds)},
                    {**theirs, "errors": sum(pair[1]["errors"] for pair in rounds)},
                ))
    finally:
        kindling_log = kindling.log()
        kindling.stop()
        floor.stop()
    failed = report(rows, startup, load, args)
    if any(ours["errors"] for _, ours, _ in rows):
        print("Kindling answered non-2xx; the end of its log (warnings and errors):")
        print("\n".join(kindling_log.splitlines()[-20:]))
    return failed


def seed(database_url: str) -> tuple[str, str, str]:
    """An organization admin with a session token, and 2,000 acts in the organization."""
    sessions = make_session_factory(make_engine(database_url))
    with sessions.begin() as db:
        stamp = str(time.time_ns())
        user = accounts.sign_up(
            db, email=f"load-{stamp}@example.test", password="load benchmark password", name="Load",
            organization_name=f"Load {stamp}",
        )
        token, _ = accounts.start_session(db, user)
    cache = MemoryCache()
    caller = authenticate(sessions, cache, token)
    with sessions.begin() as db:
        for n in range(2000):
            kindness.create_act(db, cache, caller=caller, **_act_fields(n))
    return token, caller.user_id, caller.organization_id


def _act_fields(n: int) -> dict:
    return {
        "description": f"Act {n}",
        "category": ("peer_recognition", "community", "wellbeing")[n % 3],
        "verification_level": 1 + n % 5,
        "recipient_id": f"external-{n % 50}",
    }


def wait_healthy(url: str, timeout: float = 30) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if requests.get(url + "/api/health", timeout=1).status_code == 200:
                return True
        except requests.ConnectionError:
            pass
        time.sleep(0.01)
    return False


def wrk(url: str, method: str, body: dict | None, token: str | None, args, scripts: str) -> dict:
    """Requests per second, p50 and p99 (ms) and non-2xx count of one wrk run."""
    lines = [f'wrk.method = "{method}"']
    if body is not None:
        lines += [f"wrk.body = {json.dumps(json.dumps(body))}", 'wrk.headers["Content-Type"] = "application/json"']
    if token is not None:
        lines.append(f'wrk.headers["Authorization"] = "Bearer {token}"')
    script = pathlib.Path(scripts) / f"{abs(hash((url, method)))}.lua"
    script.write_text("\n".join(lines) + "\n")
    command = ["wrk", "-t", str(args.threads), "-c", str(args.connections), "-d", f"{args.duration}s", "--latency", "-s", str(script), url]
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    return {
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1)),
        "p50": _ms(re.search(r"50%\s+([\d.]+\w+)", output).group(1)),
        "p99": _ms(re.search(r"99%\s+([\d.]+\w+)", output).group(1)),
        "errors": int(errors.group(1)) if errors else 0,
    }


def _ms(value: str) -> float:
    number, unit = re.fullmatch(r"([\d.]+)(us|ms|s|m)", value).groups()
    return float(number) * {"us": 0.001, "ms": 1, "s": 1000, "m": 60000}[unit]


def report(rows, startup: float, load: float, args) -> int:
    print(f"wrk -t{args.threads} -c{args.connections} -d{args.duration}s per route, median of {args.rounds} rounds; load average before: {load:.2f}")
    print(f"{'route':<30} {'kindling rps':>12} {'p50 ms':>8} {'p99 ms':>8} {'floor rps':>10} {'p50 ms':>8} {'p99 ms':>8} {'ratio':>6}  verdict")
    failed = False
    for name, ours, theirs in rows:
        ratio = ours["rps"] / theirs["rps"]
        ok = ratio >= RATIO_TARGET and not ours["errors"] and not theirs["errors"]
        if name == "GET /api/health":
            ok = ok and ours["p99"] < HEALTH_P99_TARGET_MS
        failed = failed or not ok
        errors = f" ({ours['errors']}/{theirs['errors']} non-2xx)" if ours["errors"] or theirs["errors"] else ""
        print(
            f"{name:<30} {ours['rps']:>12.0f} {ours['p50']:>8.1f} {ours['p99']:>8.1f} "
            f"{theirs['rps']:>10.0f} {theirs['p50']:>8.1f} {theirs['p99']:>8.1f} {ratio:>6.2f}  {'ok' if ok else 'MISSED'}{errors}"
        )
    startup_ok = startup <= STARTUP_TARGET_S
    print(f"start-up of kindling serve --workers 2 to first healthy answer: {startup:.2f} s (target {STARTUP_TARGET_S} s) {'ok' if startup_ok else 'MISSED'}")
    print(f"targets: health p99 < {HEALTH_P99_TARGET_MS} ms; Kindling >= {RATIO_TARGET} x floor throughput on every route")
    return 1 if failed or not startup_ok else 0


if __name__ == "__main__":
    sys.exit(main())
