"""Giving at scale: 100,000 giving requests in one organization, timed through the HTTP interface.

    psql -h 127.0.0.1 -U postgres -c "CREATE DATABASE kindling_giving_bench"
    python -m benchmarks.giving \\
        --database-url postgresql+psycopg2://postgres@127.0.0.1:5432/kindling_giving_bench \\
        [--redis-url redis://127.0.0.1:6379/2] [--reset | --reuse]

1. Runs the migrations on the database, which must hold no data (`--reset` drops its public schema
   first; `--reuse` skips this step and the seeding, to time again a database an earlier run seeded).
2. Starts the app `kindling serve` runs, under uvicorn with one worker, wrapped by
   benchmarks/server_timing.py, with RATE_LIMIT_MULTIPLIER=100000 and a payment webhook secret.
3. Signs up an organization, and a second one with no program, creates a 1:1 matching-gift program
   in the first through the API, and seeds in SQL 1,000 members and 100,000 succeeded donations,
   each with its match request (approved, paid, requested, declined and ineligible ones), in the
   program's current period, with the ledger rows that reserve them; then VACUUM ANALYZE.
4. Times, on one keep-alive connection, after a warm-up:
   - webhook, matched: a signed `payment_intent.succeeded` for a pending donation while the program
     is active, so the webhook also makes a match request (locks, ledger, evidence, outbox);
   - webhook, unmatched: the same for a donation in a second organization, which has no program, so
     it makes none; the two alternate, so that both see the same load on a shared machine, and the
     difference of their server medians is what a match adds (target ≤ 5 ms);
   - summary: GET /api/giving/summary over the period's 100,000 requests (target ≤ 200 ms server p50).

"server" is the `Server-Timing: app;dur=` the server reports (benchmarks/server_timing.py). The load
average is printed with the table.
"""

from __future__ import annotations

import argparse
import os
import sys
import uuid

import requests
from sqlalchemy import create_engine, text

from benchmarks.kindness import HERE, PASSWORD, Measurement, Timer, prepare
from tests.factories.donations import PAYMENT_SECRET, signed
from tests.servers.live import LiveServer

PERIOD_START = "date_trunc('year', now())"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", required=True, help="postgresql+psycopg2://… of a database of its own")
    parser.add_argument("--redis-url", help="redis://… (default: the in-process cache and limiter)")
    parser.add_argument("--reset", action="store_true", help="drop the database's public schema first")
    parser.add_argument("--reuse", action="store_true", help="time a database an earlier run seeded, without seeding")
    parser.add_argument("--requests", type=int, default=100_000, help="giving requests in the organization")
    parser.add_argument("--samples", type=int, default=200, help="timed requests per measurement")
    args = parser.parse_args()
    if not args.database_url.startswith("postgresql"):
        parser.error("--database-url must be a PostgreSQL URL")
    engine = create_engine(args.database_url)
    if not args.reuse:
        prepare(engine, reset=args.reset)
    env = {
        "DATABASE_URL": args.database_url,
        "RATE_LIMIT_MULTIPLIER": "100000",
        "REDIS_URL": args.redis_url or "",
        "PAYMENT_WEBHOOK_SECRET": PAYMENT_SECRET,
    }
    server = LiveServer(env, command=[sys.executable, str(HERE / "server_timing.py"), "--port"])
    server.wait_ready(timeout=60)
    try:
        admin, organization_id = account(server.url, "giving-bench@example.test", "Giving Bench", args.reuse)
        _, bystander_organization_id = account(
            server.url, "giving-bench-unmatched@example.test", "Giving Bench Without Programs", args.reuse
        )
        if not args.reuse:
            program = admin.request(
                "POST",
                "/api/giving/programs",
                201,
                json={
                    "name": "Match",
                    "kind": "donation_match",
                    "ratioPercent": 100,
                    "perPersonCap": 1_000_000_000,
                    "approval": "auto",
                },
            )[0].json()["data"]
            seed(engine, organization_id, program["id"], args.requests)
        rows = measure(server.url, admin, engine, organization_id, bystander_organization_id, args.samples)
    finally:
        server.stop()
    print(f"load average during the run: {os.getloadavg()[0]:.2f} over {os.cpu_count()} CPUs")
    header = f"{'measurement':<22} {'n':>4} {'client p50':>11} {'server p50':>11} {'server p95':>11}  target"
    print(header)
    print("-" * len(header))
    for measurement in rows:
        print(
            f"{measurement.name:<22} {len(measurement.server):>4} {measurement.p('client', 50):>8.2f} ms"
            f" {measurement.p('server', 50):>8.2f} ms {measurement.p('server', 95):>8.2f} ms  {measurement.target}"
        )
    matched, unmatched, summary = rows
    added = matched.p("server", 50) - unmatched.p("server", 50)
    print(
        f"a match adds {added:.2f} ms server p50 (target ≤ 5 ms); summary server p50 {summary.p('server', 50):.2f} ms (target ≤ 200 ms)"
    )
    if not tallies_consistent(engine):
        return 1
    return (
        0 if added <= 5 and summary.p("server", 50) <= 200 else 3
    )  # 3: it ran, and a figure missed its target (README, Benchmarks)


def account(url: str, email: str, organization_name: str, existing: bool) -> tuple[Timer, str]:
    """An organization's admin, signed up (or in, when `existing`): a client with their token, and the organization's id."""
    credentials = {"email": email, "password": PASSWORD, "returnToken": True}
    if existing:
        response = requests.post(url + "/api/auth/sign-in", json=credentials, timeout=30)
    else:
        credentials |= {"name": "Bench Admin", "organizationName": organization_name}
        response = requests.post(url + "/api/auth/sign-up", json=credentials, timeout=30)
    response.raise_for_status()
    data = response.json()["data"]
    return Timer(url, data["session"]["token"]), data["user"]["organizationId"]


def tallies_consistent(engine) -> bool:
    """Whether every period's tallies, kept through the benchmark's matches, equal a recomputation."""
    with engine.connect() as connection:
        differing = connection.scalar(
            text(
                """
                SELECT count(*) FROM (
                    SELECT program_id, period_start, """
                + TALLIES
                + """ FROM giving_requests GROUP BY program_id, period_start
                    EXCEPT
                    SELECT program_id, period_start, reserved, requested_count, approved_count, paid_count, declined_count,
                           reversed_count, ineligible_count, requested_amount, approved_amount, paid_amount, granted_hours
                    FROM giving_periods
                ) AS differing
                """
            )
        )
    print(
        f"period tallies against a recomputation from the requests: {'consistent' if not differing else f'{differing} DIFFERENT'}"
    )
    return not differing


# A period's tallies recomputed from its requests (kindling/donations/ledger.py keeps them).
TALLIES = """
    coalesce(sum(amount) FILTER (WHERE status IN ('requested', 'approved', 'paid') OR clawback), 0),
    count(*) FILTER (WHERE status = 'requested'), count(*) FILTER (WHERE status = 'approved'),
    count(*) FILTER (WHERE status = 'paid'), count(*) FILTER (WHERE status = 'declined'),
    count(*) FILTER (WHERE status = 'reversed'), count(*) FILTER (WHERE status = 'ineligible'),
    coalesce(sum(amount) FILTER (WHERE status = 'requested'), 0), coalesce(sum(amount) FILTER (WHERE status = 'approved'), 0),
    coalesce(sum(amount) FILTER (WHERE status = 'paid'), 0),
    coalesce(sum(hours) FILTER (WHERE status IN ('approved', 'paid')), 0)
"""


def seed(engine, organization_id: str, program_id: str, count: int) -> None:
    """Members, succeeded donations and their match requests in SQL, with the ledger that reserves them."""
    params = {"org": organization_id, "program": program_id, "count": count}
    with engine.begin() as connection:
        connection.execute(
            text(
                """
                INSERT INTO users (id, email, name, password_hash, account_type, organization_id, role, active, created_at)
                SELECT gen_random_uuid()::text, 'giving-bench-' || g || '@example.test', 'Member ' || g, '!', 'member', :org,
                       'member', true, now()
                FROM generate_series(1, 1000) AS g;
                CREATE TEMP TABLE seed_people ON COMMIT DROP AS
                SELECT (row_number() OVER (ORDER BY id) - 1)::int AS n, id FROM users WHERE organization_id = :org;
                CREATE TEMP TABLE seed_gifts ON COMMIT DROP AS
                SELECT gen_random_uuid()::text AS donation_id, gen_random_uuid()::text AS request_id, p.id AS user_id,
                       1000 + (g % 50) * 100 AS amount,
                       (ARRAY['approved', 'paid', 'paid', 'requested', 'declined', 'ineligible'])[1 + g % 6] AS status,
                       greatest("""
                + PERIOD_START
                + """, now() - random() * interval '300 days') AS at
                FROM generate_series(1, :count) AS g JOIN seed_people AS p ON p.n = g % 1001;
                INSERT INTO donations (id, organization_id, user_id, amount, currency, recipient_name, status, created_at, updated_at, succeeded_at)
                SELECT donation_id, :org, user_id, amount, 'USD', 'Food bank', 'succeeded', at, at, at FROM seed_gifts;
                INSERT INTO giving_requests (id, organization_id, program_id, program_version, kind, user_id, donation_id, period_start,
                                             status, reason, gift_amount, ratio_percent, computed_amount, amount, currency, capped,
                                             clawback, recipient_name, payout_reference, paid_at, decided_at, created_at, updated_at)
                SELECT request_id, :org, :program, 1, 'donation_match', user_id, donation_id, """
                + PERIOD_START
                + """::date,
                       status, CASE WHEN status = 'ineligible' THEN 'below_minimum' END, amount, 100, amount,
                       CASE WHEN status = 'ineligible' THEN 0 ELSE amount END, 'USD', false, false, 'Food bank',
                       CASE WHEN status = 'paid' THEN 'PAY-' || request_id END, CASE WHEN status = 'paid' THEN at END, at, at, at
                FROM seed_gifts;
                INSERT INTO giving_ledgers (program_id, period_start, user_id, reserved)
                SELECT :program, """
                + PERIOD_START
                + """::date, user_id, sum(amount) FROM seed_gifts
                WHERE status IN ('approved', 'paid', 'requested') GROUP BY user_id;
                INSERT INTO giving_periods (program_id, period_start, reserved, requested_count, approved_count, paid_count,
                                            declined_count, reversed_count, ineligible_count, requested_amount, approved_amount,
                                            paid_amount, granted_hours)
                SELECT :program, """
                + PERIOD_START
                + """::date, """
                + TALLIES
                + """ FROM giving_requests WHERE program_id = :program;
                """
            ),
            params,
        )
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        for table in ("users", "donations", "giving_requests", "giving_ledgers", "giving_periods"):
            connection.execute(text(f"VACUUM ANALYZE {table}"))


def measure(
    url: str, admin: Timer, engine, organization_id: str, bystander_organization_id: str, samples: int
) -> list[Measurement]:
    with engine.connect() as connection:
        giver, bystander = (
            connection.scalar(
                text("SELECT id FROM users WHERE organization_id = :org ORDER BY role = 'member' DESC, id LIMIT 1"),
                {"org": org},
            )
            for org in (organization_id, bystander_organization_id)
        )
    webhook = Timer(url, "")
    del webhook.http.headers["Authorization"]

    def pending_donations(organization: str, user: str, n: int) -> list[dict]:
        with engine.begin() as connection:
            return [
                dict(row._mapping)
                for row in connection.execute(
                    text(
                        """
                        INSERT INTO donations (id, organization_id, user_id, amount, currency, recipient_name, status, created_at, updated_at)
                        SELECT gen_random_uuid()::text, :org, :giver, 2500, 'USD', 'Food bank', 'pending', now(), now()
                        FROM generate_series(1, :n) RETURNING id, amount, currency
                        """
                    ),
                    {"org": organization, "giver": user, "n": n},
                )
            ]

    def settle(measurement: Measurement | None, donation: dict) -> None:
        event = {
            "id": f"evt_{uuid.uuid4().hex}",
            "object": "event",
            "type": "payment_intent.succeeded",
            "data": {
                "object": {
                    "id": f"pi_{uuid.uuid4().hex}",
                    "object": "payment_intent",
                    "amount": donation["amount"],
                    "currency": donation["currency"].lower(),
                    "metadata": {"donationId": donation["id"]},
                }
            },
        }
        payload, headers = signed(event)
        response, client, server = webhook.request("POST", "/webhooks/payments", 200, data=payload, headers=headers)
        if response.json()["outcome"] != "processed":
            raise SystemExit(f"the webhook did not settle donation {donation['id']}")
        if measurement is not None:
            measurement.add(client, server)

    matched = Measurement("webhook, matched", "")
    unmatched = Measurement("webhook, unmatched", "")
    summary = Measurement("summary", "≤ 200 ms server p50")
    pairs = zip(
        pending_donations(organization_id, giver, samples + 20),
        pending_donations(bystander_organization_id, bystander, samples + 20),
        strict=True,
    )
    for n, (with_match, without) in enumerate(pairs):
        settle(matched if n >= 20 else None, with_match)  # the first 20 warm up
        settle(unmatched if n >= 20 else None, without)
    for _ in range(5):
        admin.request("GET", "/api/giving/summary", 200)
    for _ in range(max(20, samples // 4)):
        summary.add(*admin.request("GET", "/api/giving/summary", 200)[1:])
    return [matched, unmatched, summary]


if __name__ == "__main__":
    raise SystemExit(main())
