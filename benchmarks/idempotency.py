"""What an Idempotency-Key adds to an act create, measured side by side over HTTP.

    psql -h 127.0.0.1 -U postgres -c "CREATE DATABASE kindling_idempotency_bench"
    python -m benchmarks.idempotency \\
        --database-url postgresql+psycopg2://postgres@127.0.0.1:5432/kindling_idempotency_bench \\
        [--redis-url redis://127.0.0.1:6379/2] [--reset] [--samples 500]

1. Runs the migrations on the database, which must hold no data (`--reset` drops its public
   schema first).
2. Starts the app `kindling serve` runs, under uvicorn with one worker, wrapped by
   benchmarks/server_timing.py, and signs up two organizations.
3. After a warm-up, creates acts on one keep-alive connection, alternating one with a new
   `Idempotency-Key` and one without, so that both see the same load on a shared machine. The
   difference of their server medians is what the key costs (target ≤ 0.5 ms). Each kind
   creates into an organization of its own: in one organization the alternation would give
   every keyed create the same parity in its evidence log, whose appends cost more at odd
   sizes (the Merkle tree's nodes they complete), and that difference would be counted as the
   key's.
"""

from __future__ import annotations

import argparse
import os
import uuid

from sqlalchemy import create_engine

from benchmarks.kindness import Measurement, Timer, prepare, sign_up, start_server

ACT = {"description": "Covered a shift", "category": "peer_recognition", "verificationLevel": 1, "recipientId": "out-1"}
TARGET_MS = 0.5


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", required=True, help="postgresql+psycopg2://… of a database of its own")
    parser.add_argument("--redis-url", help="redis://… (default: the in-process cache and limiter)")
    parser.add_argument("--reset", action="store_true", help="drop the database's public schema first")
    parser.add_argument("--samples", type=int, default=500, help="timed creates of each kind")
    args = parser.parse_args()
    if not args.database_url.startswith("postgresql"):
        parser.error("--database-url must be a PostgreSQL URL")
    prepare(create_engine(args.database_url), reset=args.reset)
    server = start_server(args.database_url, args.redis_url)
    try:
        keyed, plain = Measurement("create, with a key", ""), Measurement("create, without", "")
        # Each kind in an organization of its own (see above), on the same connection.
        callers = {measurement: sign_up(server.url, n)["token"] for n, measurement in enumerate((keyed, plain))}
        timer = Timer(server.url, callers[keyed])
        for sample in range(-min(50, args.samples), args.samples):
            for measurement, token in callers.items():
                headers = {"Authorization": f"Bearer {token}"}
                if measurement is keyed:
                    headers["Idempotency-Key"] = str(uuid.uuid4())
                _, client, server_ms = timer.request("POST", "/api/kindness", 201, json=ACT, headers=headers)
                if sample >= 0:  # the first rounds warm up
                    measurement.add(client, server_ms)
    finally:
        server.stop()
    print(f"load average during the run: {os.getloadavg()[0]:.2f} over {os.cpu_count()} CPUs")
    for measurement in (keyed, plain):
        print(
            f"{measurement.name:<20} n={len(measurement.server)} server p50 {measurement.p('server', 50):.3f} ms"
            f" p95 {measurement.p('server', 95):.3f} ms, client p50 {measurement.p('client', 50):.3f} ms"
        )
    added = keyed.p("server", 50) - plain.p("server", 50)
    print(f"a key adds {added:.3f} ms server p50 (target ≤ {TARGET_MS} ms)")
    return 0 if added <= TARGET_MS else 3  # exit 3: measured, but a figure missed its target


if __name__ == "__main__":
    raise SystemExit(main())
