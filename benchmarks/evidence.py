"""The evidence log at scale: appends and a full verification with 1,000,000 events in one organization.

    psql -h 127.0.0.1 -U postgres -c "CREATE DATABASE kindling_evidence_bench"
    python benchmarks/evidence.py \\
        --database-url postgresql+psycopg2://postgres@127.0.0.1:5432/kindling_evidence_bench [--reset | --reuse]

1. Runs the migrations on the database, which must hold no data (`--reset` drops its public schema
   first; `--reuse` skips this step and the seeding, to time again what an earlier run seeded).
2. Seeds one organization with 1,000,000 chained events (and a second with 100,000) through the
   bulk path: the chain is hashed in Python exactly as the service hashes it, then loaded with COPY.
   The mix: 70% act.recorded, 10% act.changed, 10% check_in.recorded (a float distance, so the
   rfc8785 path), 10% donation.status_set. Then VACUUM ANALYZE.
3. Appends: times `evidence.append` (its three statements) and the commit of its transaction, one
   write per transaction, in the large organization. Target: p95 of append + commit ≤ 2 ms.
4. Verification: `evidence.verify` of each organization, each in a fresh process so that its peak
   resident set size is its own. Target: ≤ 30 s for 1,000,000 events, and a peak RSS that does not
   grow with the chain (the 100,000-event organization is the comparison).

The load average is printed: figures mean little on a machine busy with other work.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
import uuid

from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session

from kindling.evidence import log as evidence
from kindling.evidence.chain import GENESIS_HASH, event_hash, timestamp
from kindling.platform.base import utcnow
from kindling.platform.database import upgrade

LARGE, SMALL = 1_000_000, 100_000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", required=True, help="postgresql+psycopg2://… of a database of its own")
    parser.add_argument("--reset", action="store_true", help="drop the database's public schema first")
    parser.add_argument("--reuse", action="store_true", help="time a database an earlier run seeded")
    parser.add_argument("--events", type=int, default=LARGE, help="events in the large organization")
    parser.add_argument("--appends", type=int, default=500, help="timed appends")
    parser.add_argument("--verify-only", metavar="ORGANIZATION_ID", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not args.database_url.startswith("postgresql"):
        parser.error("--database-url must be a PostgreSQL URL")
    engine = create_engine(args.database_url)
    if args.verify_only:
        return verify_in_this_process(engine, args.verify_only)

    if not args.reuse:
        with engine.begin() as connection:
            if args.reset:
                connection.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
        upgrade(args.database_url)
        started = time.perf_counter()
        large = seed(engine, "large", args.events)
        small = seed(engine, "small", SMALL)
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.execute(text("VACUUM ANALYZE evidence_events"))
        print(f"seeded {args.events + SMALL:,} events in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    else:
        large, small = (
            engine.connect().execute(text("SELECT id FROM organizations WHERE slug = :s"), {"s": slug}).scalar_one()
            for slug in ("evidence-bench-large", "evidence-bench-small")
        )

    print(f"load average {os.getloadavg()[0]:.2f} (cores: {os.cpu_count()})")
    appends = time_appends(engine, large, args.appends)
    for name, values in appends.items():
        print(f"{name:<24} p50 {statistics.median(values):6.3f} ms   p95 {percentile(values, 95):6.3f} ms")
    ok = percentile(appends["append + commit"], 95) <= 2.0
    baseline = verify_subprocess(args.database_url, None)
    for organization_id in (small, large):
        result = verify_subprocess(args.database_url, organization_id)
        ok &= result["intact"]
        if result["events"] >= LARGE:
            ok &= result["seconds"] <= 30
        print(
            f"verify {result['events']:>9,} events  {result['seconds']:6.1f} s (this process's CPU {result['cpu_seconds']:.1f} s)  "
            f"intact={result['intact']}  "
            f"peak RSS {result['peak_rss_mb']:.0f} MB (a process that only imports: {baseline['peak_rss_mb']:.0f} MB)"
        )
    print("targets met" if ok else "TARGETS MISSED")
    return 0 if ok else 1


def percentile(values: list[float], p: int) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def seed(engine, name: str, count: int) -> str:
    """An organization with `count` chained events, loaded with COPY."""
    organization_id = str(uuid.uuid4())
    with engine.begin() as connection:
        connection.execute(
            text("INSERT INTO organizations (id, name, slug, join_code, currency, created_at) VALUES (:id, :n, :s, :j, 'USD', now())"),
            {"id": organization_id, "n": f"Evidence bench {name}", "s": f"evidence-bench-{name}", "j": uuid.uuid4().hex[:16]},
        )
    rng = random.Random(17)
    prev_hash, seq, start = GENESIS_HASH, 0, utcnow()
    raw = engine.raw_connection()
    try:
        cursor = raw.cursor()
        while seq < count:
            buffer = io.StringIO()
            for _ in range(min(50_000, count - seq)):
                seq += 1
                kind, type_, data = _event_content(rng)
                moment = start.replace(microsecond=seq % 1_000_000)
                event = {
                    "seq": seq,
                    "organizationId": organization_id,
                    "type": type_,
                    "subject": {"kind": kind, "id": str(uuid.UUID(int=rng.getrandbits(128)))},
                    "actorId": str(uuid.UUID(int=rng.getrandbits(128))) if kind != "donation" else None,
                    "data": data,
                    "occurredAt": timestamp(moment),
                    "prevHash": prev_hash,
                }
                prev_hash = event_hash(event)
                actor = event["actorId"] or "\\N"
                buffer.write(
                    f"{organization_id}\t{seq}\t{type_}\t{kind}\t{event['subject']['id']}\t{actor}\t"
                    f"{json.dumps(data)}\t{moment.isoformat()}\t{event['prevHash']}\t{prev_hash}\n"
                )
            buffer.seek(0)
            cursor.copy_expert(
                "COPY evidence_events (organization_id, seq, type, subject_kind, subject_id, actor_id, data, occurred_at, prev_hash, hash) FROM STDIN",
                buffer,
            )
        cursor.execute(
            "INSERT INTO evidence_heads (organization_id, seq, hash) VALUES (%s, %s, %s)", (organization_id, seq, prev_hash)
        )
        raw.commit()
    finally:
        raw.close()
    return organization_id


def _event_content(rng: random.Random) -> tuple[str, str, dict]:
    draw = rng.random()
    if draw < 0.7:
        return "act", evidence.ACT_RECORDED, {"requestedLevel": rng.randint(1, 5), "category": "community"}
    if draw < 0.8:
        return "act", evidence.ACT_CHANGED, {"changed": ["description"], "requestedLevel": 3, "category": "wellbeing"}
    if draw < 0.9:
        distance = round(rng.uniform(0, 5000), 1)
        return "check_in", evidence.CHECK_IN_RECORDED, {"opportunityId": str(uuid.uuid4()), "distanceMeters": distance, "verified": distance < 200}
    return "donation", evidence.DONATION_STATUS_SET, {
        "status": "succeeded", "previousStatus": "pending", "amount": rng.randint(100, 100_000), "currency": "USD",
        "providerEventId": f"evt_{rng.getrandbits(64):x}", "providerEventType": "payment_intent.succeeded",
    }


def time_appends(engine, organization_id: str, count: int) -> dict[str, list[float]]:
    """Milliseconds of each append's statements, and of the append with its transaction's commit."""
    timings: dict[str, list[float]] = {"append": [], "append + commit": [], "append CPU (this process)": []}
    with Session(engine) as session:
        for n in range(count + 50):
            started, cpu = time.perf_counter(), time.process_time()
            evidence.append(
                session,
                organization_id=organization_id,
                type=evidence.ACT_RECORDED,
                subject=("act", str(uuid.uuid4())),
                actor_id=str(uuid.uuid4()),
                data={"requestedLevel": 3, "category": "community"},
            )
            appended, cpu_used = time.perf_counter(), time.process_time() - cpu
            session.commit()
            finished = time.perf_counter()
            if n >= 50:  # warm-up: connection, statement caches
                timings["append"].append((appended - started) * 1000)
                timings["append + commit"].append((finished - started) * 1000)
                timings["append CPU (this process)"].append(cpu_used * 1000)
    return timings


def verify_subprocess(database_url: str, organization_id: str | None) -> dict:
    command = [sys.executable, __file__, "--database-url", database_url, "--verify-only", organization_id or "-"]
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def verify_in_this_process(engine, organization_id: str) -> int:
    result = {"events": 0, "intact": True, "seconds": 0.0, "cpu_seconds": 0.0}
    if organization_id != "-":
        with Session(engine) as session:
            started, cpu = time.perf_counter(), time.process_time()
            verified = evidence.verify(session, organization_id=organization_id)
            result = {
                "events": verified["events"],
                "intact": verified["intact"],
                "seconds": time.perf_counter() - started,
                "cpu_seconds": time.process_time() - cpu,
            }
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
