"""Kindness at scale: 1,000,000 acts in one of 10 organizations, timed through the HTTP interface.

    psql -h 127.0.0.1 -U postgres -c "CREATE DATABASE kindling_kindness_bench"
    python -m benchmarks.kindness \\
        --database-url postgresql+psycopg2://postgres@127.0.0.1:5432/kindling_kindness_bench \\
        [--redis-url redis://127.0.0.1:6379/2] [--reset | --reuse]

1. Runs the migrations on the database, which must hold no data (`--reset` drops its public schema
   first; `--reuse` skips this step and the seeding, to time again a database an earlier run seeded).
2. Starts a real server in a subprocess: the app `kindling serve` runs, under uvicorn with one
   worker, wrapped by benchmarks/server_timing.py, with RATE_LIMIT_MULTIPLIER=100000.
3. Signs up 10 organizations through the API, then seeds in SQL with generate_series: 1,000 members
   and 1,000,000 acts in the first organization, 100 members and 10,000 acts (`--other-acts`) in
   each of the others, spread over the last 365 days; 80% of the acts go to members, so ripples are common. Each act
   asks for a level 1–5 and has only level 1 on record, as the upgrade to earned verification
   leaves them. Ripple counts and tallies are derived in SQL straight from their definition, then
   VACUUM ANALYZE. In the first organization two members joined by its join code are made managers:
   one with 20 reports who sent acts, one with 10 reports who sent none.
4. Times each measurement through HTTP on one keep-alive connection, after a warm-up:
   - baseline: GET /api/auth/session, the cost of any authenticated request (no target);
   - create: POST /api/kindness by the first organization's admin (target: server median ≤ 10 ms);
   - stats uncached: GET /api/kindness/stats right after a create (which retires the cached entry);
   - stats cached: the same request again;
   - page 1: GET /api/kindness?limit=1000, also with a category and with a userId filter;
   - page 500: a walk follows nextCursor from page 1 to page 500, then page 500 is fetched again;
   - pending: GET /api/verifications/pending?limit=100 for each kind of caller: the admin, the
     manager with reports, and the manager whose reports sent nothing (target: server median ≤ 20 ms);
   - decision: POST /api/kindness/{id}/verifications, the admin approving the requested level 3 or
     4 of acts from that list (target: server median ≤ 15 ms);
   then the statistics served after the decisions are compared with a recomputation from the acts.
5. Checks every tally, every act's verified level (against its decisions), and the stored ripple
   counts of a sample of acts (including all those the benchmark's creates changed), against a
   recomputation; exits 1 on any difference.

"client" is the round trip the benchmark measures (loopback HTTP, uvicorn's parsing included);
"server" is the `Server-Timing: app;dur=` the server reports: from the request entering the
application to the start of its response (rate limiter, session lookup, validation, handler,
queries, JSON encoding). Targets are checked on client p95, except the cached statistics (server
p95), page 500 (client p50 against 1.5 × page 1's), the create, the pending lists and the decision
(server p50).
The load average is printed with the table: the numbers mean little on a machine busy with other work.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import random
import sys
import time

import requests
from sqlalchemy import create_engine, text

from kindling.platform.database import upgrade
from tests.servers.live import LiveServer

HERE = pathlib.Path(__file__).resolve().parent
PASSWORD = "benchmark password 1"
CATEGORIES = ("peer_recognition", "community", "wellbeing")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", required=True, help="postgresql+psycopg2://… of a database of its own")
    parser.add_argument("--redis-url", help="redis://… (default: the in-process cache and limiter)")
    parser.add_argument("--reset", action="store_true", help="drop the database's public schema first")
    parser.add_argument("--reuse", action="store_true", help="time a database an earlier run seeded, without seeding")
    parser.add_argument("--acts", type=int, default=1_000_000, help="acts in the large organization")
    parser.add_argument("--other-acts", type=int, default=10_000, help="acts in each of the nine others")
    parser.add_argument("--samples", type=int, default=50, help="timed requests per measurement")
    parser.add_argument("--pages", type=int, default=500, help="depth of the cursor walk")
    args = parser.parse_args()
    if not args.database_url.startswith("postgresql"):
        parser.error("--database-url must be a PostgreSQL URL")

    engine = create_engine(args.database_url)
    if not args.reuse:
        prepare(engine, reset=args.reset)
    server = start_server(args.database_url, args.redis_url)
    try:
        if args.reuse:
            admins = [sign_in(server.url, 0)]
        else:
            admins = [sign_up(server.url, n) for n in range(10)]
            started = time.perf_counter()
            seed(engine, [admin["organizationId"] for admin in admins], args.acts, args.other_acts)
            add_managers(server.url, engine, admins[0]["organizationId"])
            print(f"seeded in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        managers = [sign_in(server.url, n, who="manager") for n in MANAGERS]
        rows, stats_consistent = measure(server.url, admins[0], managers, engine, args.samples, args.pages)
    finally:
        server.stop()
    print_table(rows)
    return verify(engine, admins[0]) or (0 if stats_consistent else 1)


# --- setup ---


def prepare(engine, *, reset: bool) -> None:
    with engine.begin() as connection:
        if reset:
            connection.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
        else:
            tables = connection.scalar(text("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"))
            if (
                tables
                and connection.scalar(text("SELECT to_regclass('users') IS NOT NULL"))
                and connection.scalar(text("SELECT EXISTS (SELECT 1 FROM users)"))
            ):
                raise SystemExit("the database holds data: use a fresh one or pass --reset")
    upgrade(engine.url.render_as_string(hide_password=False))


def start_server(database_url: str, redis_url: str | None) -> LiveServer:
    """The app `kindling serve` runs, wrapped by server_timing.py, on the benchmark's database."""
    env = {"DATABASE_URL": database_url, "RATE_LIMIT_MULTIPLIER": "100000", "REDIS_URL": redis_url or ""}
    server = LiveServer(env, command=[sys.executable, str(HERE / "server_timing.py"), "--port"])
    server.wait_ready(timeout=60)
    return server


def sign_up(url: str, n: int) -> dict:
    body = {"name": f"Bench Admin {n}", "organizationName": f"Bench Organization {n}"}
    return _signed_in(url + "/api/auth/sign-up", n, body)


def sign_in(url: str, n: int, who: str = "admin") -> dict:
    return _signed_in(url + "/api/auth/sign-in", n, {}, who=who)


def _signed_in(url: str, n: int, body: dict, who: str = "admin") -> dict:
    body = {"email": f"bench-{who}-{n}@example.test", "password": PASSWORD, "returnToken": True, **body}
    response = requests.post(url, json=body, timeout=30)
    response.raise_for_status()
    data = response.json()["data"]
    return {
        "token": data["session"]["token"],
        "userId": data["user"]["id"],
        "organizationId": data["user"]["organizationId"],
    }


def seed(engine, organization_ids: list[str], acts: int, other_acts: int) -> None:
    """Members and acts in SQL; ripple counts and tallies derived from their definitions."""
    with engine.begin() as connection:
        connection.execute(text("SET LOCAL temp_buffers = '1GB'"))
        connection.execute(text("SET LOCAL work_mem = '256MB'"))
        for index, organization_id in enumerate(organization_ids):
            large = index == 0
            seed_organization(
                connection, organization_id, index, members=1000 if large else 100, acts=acts if large else other_acts
            )
        connection.execute(
            text(
                """
                INSERT INTO kindness_tallies (organization_id, category, acts, verification_sum, ripple_sum)
                SELECT organization_id, category, count(*), sum(verified_level), sum(ripple_count)
                FROM kindness_acts GROUP BY organization_id, category;
                INSERT INTO kindness_recipient_tallies (organization_id, recipient_id, acts)
                SELECT organization_id, recipient_id, count(*) FROM kindness_acts GROUP BY organization_id, recipient_id;
                """
            )
        )
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        for table in ("kindness_acts", "kindness_tallies", "kindness_recipient_tallies", "users", "sessions"):
            connection.execute(text(f"VACUUM ANALYZE {table}"))


# The first organization's managers, by their number: how many reports each has, and whether
# those reports sent acts.
MANAGERS = {1: (20, True), 2: (10, False)}


def add_managers(url: str, engine, organization_id: str) -> None:
    """Two members who join by the join code, made managers in SQL, with their reports."""
    with engine.begin() as connection:
        join_code = connection.scalar(
            text("SELECT join_code FROM organizations WHERE id = :org"), {"org": organization_id}
        )
    for n in MANAGERS:
        _signed_in(url + "/api/auth/sign-up", n, {"name": f"Bench Manager {n}", "joinCode": join_code}, who="manager")
    with engine.begin() as connection:
        for n, (reports, active) in MANAGERS.items():
            params = {"org": organization_id, "email": f"bench-manager-{n}@example.test", "reports": reports, "n": n}
            manager = connection.scalar(
                text("UPDATE users SET role = 'manager', hand_role = 'manager' WHERE email = :email RETURNING id"),
                params,
            )
            params["manager"] = manager
            if active:  # members who sent acts
                connection.execute(
                    text(
                        """
                        UPDATE users SET manager_id = :manager WHERE id IN (
                            SELECT id FROM users WHERE organization_id = :org AND email LIKE 'bench-0-%'
                            AND manager_id IS NULL ORDER BY id LIMIT :reports)
                        """
                    ),
                    params,
                )
            else:  # new members, who sent nothing
                connection.execute(
                    text(
                        """
                        INSERT INTO users (id, email, name, password_hash, account_type, organization_id, role,
                                           manager_id, active, created_at)
                        SELECT gen_random_uuid()::text, 'bench-quiet-' || :n || '-' || g || '@example.test',
                               'Quiet ' || g, '!', 'member', :org, 'member', :manager, true, now()
                        FROM generate_series(1, :reports) AS g
                        """
                    ),
                    params,
                )
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.execute(text("VACUUM ANALYZE users"))


def seed_organization(connection, organization_id: str, index: int, *, members: int, acts: int) -> None:
    params = {"org": organization_id, "index": index, "members": members, "acts": acts}
    connection.execute(
        text(
            """
            INSERT INTO users (id, email, name, password_hash, account_type, organization_id, role, active, created_at)
            SELECT gen_random_uuid()::text, 'bench-' || :index || '-' || g || '@example.test', 'Member ' || g,
                   '!', 'member', :org, 'member', true, now()
            FROM generate_series(1, :members) AS g
            """
        ),
        params,
    )
    # Everyone in the organization, the admin included, numbered from 0.
    connection.execute(
        text(
            """
            CREATE TEMP TABLE seed_people ON COMMIT DROP AS
            SELECT (row_number() OVER (ORDER BY id) - 1)::int AS n, id FROM users WHERE organization_id = :org
            """
        ),
        params,
    )
    people = connection.scalar(text("SELECT count(*) FROM seed_people"))
    connection.execute(
        text(
            """
            CREATE TEMP TABLE seed_acts ON COMMIT DROP AS
            WITH draws AS (
                SELECT g, floor(random() * :people)::int AS s, floor(random() * (:people - 1))::int AS r,
                       random() AS outside, now() - random() * interval '365 days' AS at
                FROM generate_series(1, :acts) AS g
            )
            SELECT gen_random_uuid()::text AS id, sender.id AS user_id,
                   CASE WHEN d.outside < 0.2 THEN 'outsider-' || (g % 20000) ELSE recipient.id END AS recipient_id,
                   (ARRAY['peer_recognition', 'community', 'wellbeing'])[1 + g % 3] AS category,
                   1 + (g * 7) % 5 AS verification_level,
                   CASE WHEN g % 10 = 0 THEN '[{"type": "image", "url": "https://cdn.example.test/' || g || '.jpg"}]'
                        ELSE '[]' END AS media,
                   'Seeded act ' || g || ': covered a colleague''s shift so they could rest' AS description,
                   d.at AS created_at
            FROM draws AS d
            JOIN seed_people AS sender ON sender.n = d.s
            JOIN seed_people AS recipient ON recipient.n = (d.s + 1 + d.r) % :people
            """
        ),
        {**params, "people": people},
    )
    connection.execute(text("CREATE INDEX ON seed_acts (user_id, created_at)"))
    connection.execute(text("ANALYZE seed_acts"))
    # n of the definition: acts the recipient sent in (created_at, created_at + 30 days], capped at 10.
    connection.execute(
        text(
            """
            INSERT INTO kindness_acts (id, organization_id, user_id, recipient_id, description, category,
                                       verification_level, verified_level, verification_status, verification_awaiting,
                                       media, ripple_count, created_at, updated_at)
            SELECT a.id, :org, a.user_id, a.recipient_id, a.description, a.category, a.verification_level, 1,
                   CASE WHEN a.verification_level = 1 THEN 'verified' ELSE 'pending' END,
                   CASE a.verification_level
                       WHEN 1 THEN NULL
                       WHEN 2 THEN CASE WHEN a.recipient_id LIKE 'outsider-%' THEN 'external' ELSE 'recipient' END
                       WHEN 3 THEN 'manager' WHEN 4 THEN 'admin' ELSE 'external'
                   END,
                   a.media::json,
                   (SELECT count(*) FROM (
                        SELECT 1 FROM seed_acts AS b
                        WHERE b.user_id = a.recipient_id
                          AND b.created_at > a.created_at AND b.created_at <= a.created_at + interval '30 days'
                        LIMIT 10) AS passed_on),
                   a.created_at, a.created_at
            FROM seed_acts AS a
            """
        ),
        params,
    )
    connection.execute(text("DROP TABLE seed_acts; DROP TABLE seed_people"))


# --- measurements ---


class Timer:
    """Times requests on one keep-alive connection: the client's round trip and the server's own time."""

    def __init__(self, url: str, token: str) -> None:
        self.url = url
        self.http = requests.Session()
        self.http.headers["Authorization"] = f"Bearer {token}"

    def request(self, method: str, path: str, expect: int, **kwargs) -> tuple[requests.Response, float, float]:
        started = time.perf_counter()
        response = self.http.request(method, self.url + path, timeout=60, **kwargs)
        client = (time.perf_counter() - started) * 1000
        if response.status_code != expect:
            raise SystemExit(f"{method} {path}: {response.status_code} {response.text[:300]}")
        server = float(response.headers["server-timing"].split("dur=")[1])
        return response, client, server


class Measurement:
    def __init__(self, name: str, target: str) -> None:
        self.name = name
        self.target = target
        self.client: list[float] = []
        self.server: list[float] = []

    def add(self, client: float, server: float) -> None:
        self.client.append(client)
        self.server.append(server)

    def p(self, which: str, percent: int) -> float:
        values = sorted(getattr(self, which))
        return values[min(len(values) - 1, round(percent / 100 * (len(values) - 1)))]


def measure(
    url: str, admin: dict, managers: list[dict], engine, samples: int, pages: int
) -> tuple[list[tuple[Measurement, bool | None]], bool]:
    """The measurements with whether each met its target, and whether the statistics stayed consistent."""
    timer = Timer(url, admin["token"])
    with engine.connect() as connection:
        member_ids = list(
            connection.scalars(
                text("SELECT id FROM users WHERE organization_id = :org AND id <> :me ORDER BY id"),
                {"org": admin["organizationId"], "me": admin["userId"]},
            )
        )
    rng = random.Random(1)

    def create() -> tuple[float, float]:
        body = {
            "description": "Stayed late to help ship the release",
            "category": rng.choice(CATEGORIES),
            "verificationLevel": rng.randint(1, 5),
            "recipientId": rng.choice(member_ids),
        }
        _, client, server = timer.request("POST", "/api/kindness", 201, json=body)
        return client, server

    baseline = Measurement("baseline: GET auth/session", "")
    creates = Measurement("create", "≤ 10 ms server p50")
    uncached = Measurement("stats, uncached", "≤ 300 ms")
    cached = Measurement("stats, cached", "≤ 5 ms server")
    page_one = Measurement("page 1 (1000 acts)", "≤ 150 ms")
    by_category = Measurement("page 1, category filter", "≤ 150 ms")
    by_sender = Measurement("page 1, userId filter", "≤ 150 ms")
    read_one = Measurement("one act by id", "")
    walk = Measurement(f"walk, pages 1–{pages}", "")
    page_500 = Measurement(f"page {pages} (1000 acts)", "≤ 1.5 × page 1")
    pending = [
        (Measurement(f"pending, {caller}", "≤ 20 ms server p50"), Timer(url, account["token"]))
        for caller, account in (("admin", admin), ("manager", managers[0]), ("quiet manager", managers[1]))
    ]
    decisions = Measurement("decision", "≤ 15 ms server p50")

    for _ in range(10):  # warm-up: connections, validators, caches
        create()
        timer.request("GET", "/api/kindness/stats", 200)
        timer.request("GET", "/api/kindness?limit=1000", 200)
    for _ in range(samples):
        baseline.add(*timer.request("GET", "/api/auth/session", 200)[1:])
    for _ in range(samples):
        creates.add(*create())
    for _ in range(samples):
        create()
        uncached.add(*timer.request("GET", "/api/kindness/stats", 200)[1:])
        for _ in range(3):
            cached.add(*timer.request("GET", "/api/kindness/stats", 200)[1:])
    sender = member_ids[0]
    for _ in range(samples):
        response, client, server = timer.request("GET", "/api/kindness?limit=1000", 200)
        page_one.add(client, server)
        by_category.add(*timer.request("GET", "/api/kindness?limit=1000&category=community", 200)[1:])
        by_sender.add(*timer.request("GET", f"/api/kindness?limit=1000&userId={sender}", 200)[1:])
        act_id = response.json()["data"][rng.randrange(1000)]["id"]
        read_one.add(*timer.request("GET", f"/api/kindness/{act_id}", 200)[1:])

    cursor = None
    for _ in range(pages):
        params = {"limit": 1000} | ({"cursor": cursor} if cursor else {})
        response, client, server = timer.request("GET", "/api/kindness", 200, params=params)
        walk.add(client, server)
        previous, cursor = cursor, response.json()["nextCursor"]
        if cursor is None:
            raise SystemExit(f"the walk ended before page {pages}")
    for _ in range(samples):
        page_500.add(*timer.request("GET", "/api/kindness", 200, params={"limit": 1000, "cursor": previous})[1:])

    for measurement, caller in pending:
        for _ in range(5):  # warm-up: the caller's session and line
            caller.request("GET", "/api/verifications/pending", 200, params={"limit": 100})
        for _ in range(samples):
            response, client, server = caller.request("GET", "/api/verifications/pending", 200, params={"limit": 100})
            if len(response.json()["data"]) != 100:
                raise SystemExit(f"{measurement.name}: fewer than 100 acts await this caller")
            measurement.add(client, server)

    awaiting: list[dict] = []
    while len(decisions.client) < samples + 10:
        if not awaiting:
            response = timer.request("GET", "/api/verifications/pending", 200, params={"limit": 100})[0]
            awaiting = response.json()["data"]
            if not awaiting:
                raise SystemExit("no act awaits the admin's decision")
        act = awaiting.pop()
        level = act["verificationLevel"]
        body = {"level": level, "decision": "confirm" if level == 2 else "approve"} | (
            {"reference": f"HR-{act['id'][:8]}"} if level == 4 else {}
        )
        decisions.add(*timer.request("POST", f"/api/kindness/{act['id']}/verifications", 201, json=body)[1:])
    del decisions.client[:10], decisions.server[:10]  # the first ones warm up
    stats_consistent = check_stats(timer, engine, admin["organizationId"])

    def within(measurement: Measurement, limit: float, which: str = "client") -> bool:
        return measurement.p(which, 95) <= limit

    return [
        (baseline, None),
        (creates, creates.p("server", 50) <= 10),
        (uncached, within(uncached, 300)),
        (cached, within(cached, 5, "server")),
        (page_one, within(page_one, 150)),
        (by_category, within(by_category, 150)),
        (by_sender, within(by_sender, 150)),
        (read_one, None),
        (walk, None),
        (page_500, page_500.p("client", 50) <= 1.5 * page_one.p("client", 50)),
        *((measurement, measurement.p("server", 50) <= 20) for measurement, _ in pending),
        (decisions, decisions.p("server", 50) <= 15),
    ], stats_consistent


def check_stats(timer: Timer, engine, organization_id: str) -> bool:
    """Whether the statistics served after the decisions match the acts' verified levels and ripple counts."""
    served = timer.request("GET", "/api/kindness/stats", 200)[0].json()["data"]
    with engine.connect() as connection:
        total, half_points = connection.execute(
            text(
                "SELECT count(*), sum(2 * verified_level + ripple_count) FROM kindness_acts WHERE organization_id = :org"
            ),
            {"org": organization_id},
        ).one()
    consistent = (served["total"], served["totalRippleScore"]) == (total, half_points / 2)
    print(
        f"statistics after the decisions: served total {served['total']}, ripple {served['totalRippleScore']};"
        f" recomputed {total}, {half_points / 2}: {'consistent' if consistent else 'DIFFERENT'}"
    )
    return consistent


def print_table(rows: list[tuple[Measurement, bool | None]]) -> None:
    print(f"load average during the run: {os.getloadavg()[0]:.2f} over {os.cpu_count()} CPUs")
    header = f"{'measurement':<26} {'n':>4} {'client p50':>11} {'client p95':>11} {'server p50':>11} {'server p95':>11}  {'target':<16} ok"
    print(header)
    print("-" * len(header))
    for measurement, ok in rows:
        print(
            f"{measurement.name:<26} {len(measurement.client):>4}"
            f" {measurement.p('client', 50):>8.2f} ms {measurement.p('client', 95):>8.2f} ms"
            f" {measurement.p('server', 50):>8.2f} ms {measurement.p('server', 95):>8.2f} ms"
            f"  {measurement.target:<16} {'' if ok is None else 'yes' if ok else 'NO'}"
        )


def verify(engine, admin: dict) -> int:
    """Compare what the service maintained against a recomputation; 1 on any difference."""
    with engine.connect() as connection:
        tallies = connection.scalar(
            text(
                """
                SELECT count(*) FROM (
                    SELECT organization_id, category, count(*) AS acts, sum(verified_level) AS verification_sum,
                           sum(ripple_count) AS ripple_sum
                    FROM kindness_acts GROUP BY organization_id, category
                    EXCEPT SELECT organization_id, category, acts, verification_sum, ripple_sum FROM kindness_tallies
                ) AS differing
                """
            )
        )
        recipients = connection.scalar(
            text(
                """
                SELECT count(*) FROM (
                    SELECT organization_id, recipient_id, count(*) FROM kindness_acts GROUP BY organization_id, recipient_id
                    EXCEPT SELECT organization_id, recipient_id, acts FROM kindness_recipient_tallies
                ) AS differing
                """
            )
        )
        levels = connection.scalar(
            text(
                """
                SELECT count(*) FROM kindness_acts AS a
                WHERE a.verified_level <> COALESCE((
                    SELECT max(d.level) FROM verification_decisions AS d
                    WHERE d.act_id = a.id AND d.decision IN ('confirm', 'approve')), 1)
                """
            )
        )
        # The acts the benchmark's creates counted towards, the newest acts, and a random sample.
        ripples = connection.scalar(
            text(
                """
                WITH checked AS (
                    SELECT * FROM kindness_acts WHERE organization_id = :org
                    AND (recipient_id = :admin AND created_at > now() - interval '31 days'
                         OR created_at > now() - interval '1 day' OR random() < 0.002)
                )
                SELECT count(*) FROM checked AS a
                WHERE a.ripple_count <> (
                    SELECT count(*) FROM (
                        SELECT 1 FROM kindness_acts AS b
                        WHERE b.organization_id = a.organization_id AND b.user_id = a.recipient_id
                          AND b.created_at > a.created_at AND b.created_at <= a.created_at + interval '30 days'
                        LIMIT 10) AS passed_on)
                """
            ),
            {"org": admin["organizationId"], "admin": admin["userId"]},
        )
    print(
        f"\nconsistency: {tallies} category tallies, {recipients} recipient tallies, {levels} verified levels,"
        f" {ripples} sampled ripple counts differ"
    )
    return 1 if tallies or recipients or levels or ripples else 0


if __name__ == "__main__":
    sys.exit(main())
