"""Webhook throughput: the cost of `emit` in a transaction, and deliveries per second by workers.

Events go to a receiver on loopback that answers 200 at once, so the figures are Kindling's
own overhead (claim, sign, send, record), not a network's.

    DATABASE_URL=postgresql+psycopg2://postgres@127.0.0.1:5432/kindling_bench \
        .venv/bin/python -m benchmarks.webhook_delivery --events 2000 --workers 1 2 4

Use a database of its own: the script migrates it and leaves its rows behind.
"""

from __future__ import annotations

import argparse
import os
import threading
import time
import uuid

from kindling import outbox
from kindling.accounts import service as accounts
from kindling.platform.database import make_engine, make_session_factory, upgrade
from kindling.platform.destinations import DestinationPolicy
from kindling.webhooks import endpoints as webhook_endpoints
from kindling.webhooks.delivery import deliver_due
from tests.servers.receiver import Receiver

LOOPBACK = DestinationPolicy(allow_private=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    args = parser.parse_args()
    url = os.environ.get("DATABASE_URL", "sqlite:///benchmark.db")
    upgrade(url)
    engine = make_engine(url)
    session_factory = make_session_factory(engine)
    receiver = Receiver()
    try:
        with session_factory() as db, db.begin():
            user = accounts.sign_up(
                db,
                email=f"bench-{uuid.uuid4().hex}@example.test",
                password="benchmark password",
                name="Bench",
                account_type="consultant",
            )
            webhook_endpoints.create_endpoint(
                db,
                consultant_id=user.id,
                url=receiver.url,
                events=list(outbox.EVENT_TYPES),
                description=None,
                policy=LOOPBACK,
            )
        print(f"database: {engine.dialect.name}, events per run: {args.events}")
        for workers in args.workers:
            emit_ms = emit_events(session_factory, user.id, args.events)
            seconds = drain(url, workers)
            print(
                f"emit: {emit_ms:.2f} ms per event (one transaction each); "
                f"{workers} worker(s): {args.events / seconds:.0f} deliveries/s ({seconds:.2f} s)"
            )
    finally:
        receiver.close()
        engine.dispose()


def emit_events(session_factory, consultant_id: str, count: int) -> float:
    spent = 0.0
    for n in range(count):
        with session_factory() as db, db.begin():
            started = time.perf_counter()
            outbox.emit(db, consultant_id=consultant_id, type="client.invited", data={"n": n})
            spent += time.perf_counter() - started
    return spent / count * 1000


def drain(url: str, workers: int) -> float:
    engines = [make_engine(url) for _ in range(workers)]

    def work(engine) -> None:
        factory = make_session_factory(engine)
        while deliver_due(factory, LOOPBACK):
            pass

    threads = [threading.Thread(target=work, args=(engine,)) for engine in engines]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    for engine in engines:
        engine.dispose()
    return elapsed


if __name__ == "__main__":
    main()
