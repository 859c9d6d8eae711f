"""Speed of the consultant side, over HTTP against a real `kindling serve`.

    DATABASE_URL=postgresql+psycopg2://… [REDIS_URL=redis://…] python -m benchmarks.consultant [--runs 5] \\
        [--rows 500] [--clients 1000] [--acts 1000000]

Use a scratch database: organizations, consultants and invitations are added to it, and for
the portfolio export (PostgreSQL only) 1,000 client organizations of one consultant, seeded in
SQL with generate_series: 10 members each, 1,000,000 kindness acts in all spread over the last
364 days, 3 volunteer opportunities each with every member checked in (a quarter unverified),
and 100 donations each in mixed statuses. The export is timed for a month (CSV and JSON) and
for a year, whose window holds all 1,000,000 acts.
Each measurement is the wall time of one HTTP request on loopback, so it is the server's
time plus a fraction of a millisecond. The server runs with RATE_LIMIT_MULTIPLIER=1000.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import os
import statistics
import sys
import time
import uuid

import requests
from sqlalchemy import text

from kindling.accounts import service as accounts
from kindling.accounts.models import Organization
from kindling.config import Settings
from kindling.platform.database import make_engine, make_session_factory, upgrade
from tests.servers.live import LiveServer

ROWS = 500
EXPORT_CLIENTS = 1_000
EXPORT_ACTS = 1_000_000
EXPORT_MEMBERS = 10  # per client


@dataclasses.dataclass
class Result:
    name: str
    seconds: list[float]
    target: float

    def row(self) -> str:
        median, worst = statistics.median(self.seconds), max(self.seconds)
        verdict = "ok" if worst <= self.target else "SLOW"
        return f"{self.name:<44} {len(self.seconds):>4} {median * 1000:>9.1f} {worst * 1000:>9.1f} {self.target * 1000:>9.0f}  {verdict}"


class Fixtures:
    """Records made straight in the database, committed, with names unique to this run."""

    def __init__(self, settings: Settings) -> None:
        # Seeding a million acts takes one long statement: no limit on the server's silence.
        self.engine = make_engine(settings.database_url, silence_limit=None)
        self.sessions = make_session_factory(self.engine)
        self.run = uuid.uuid4().hex[:8]
        self.sequence = itertools.count(1)

    def organizations(self, count: int) -> list[str]:
        with self.sessions() as db:
            made = [
                Organization(
                    name=f"Bench {self.run} {n}", slug=f"bench-{self.run}-{n}", join_code=uuid.uuid4().hex[:16]
                )
                for n in range(count)
            ]
            db.add_all(made)
            db.commit()
            return [organization.id for organization in made]

    def consultant_headers(self) -> dict:
        return self.consultant()[1]

    def consultant(self) -> tuple[str, dict]:
        """A new consultant's id and the headers of its session."""
        with self.sessions() as db:
            user = accounts.sign_up(
                db,
                email=f"bench-{self.run}-{next(self.sequence)}@example.test",
                password="benchmark password",
                name="Bench Consultant",
                account_type="consultant",
            )
            token, _ = accounts.start_session(db, user)
            db.commit()
        return user.id, {"Authorization": f"Bearer {token}"}


def timed(method: str, url: str, **kwargs) -> tuple[float, requests.Response]:
    started = time.perf_counter()
    response = requests.request(method, url, timeout=60, **kwargs)
    elapsed = time.perf_counter() - started
    response.raise_for_status()
    return elapsed, response


def bulk_invite(server: LiveServer, fixtures: Fixtures, args: argparse.Namespace) -> list[Result]:
    """A file of `--rows` new invitations, then the same file again (every row already pending)."""
    organization_ids = fixtures.organizations(args.rows)
    csv = ("organizationId,message\n" + "".join(f"{oid},Let us work together\n" for oid in organization_ids)).encode()
    files = {"file": ("clients.csv", csv, "text/csv")}
    fresh, repeated = [], []
    for _ in range(args.runs):
        headers = fixtures.consultant_headers()
        seconds, response = timed("POST", server.url + "/api/bulk/invite", files=files, headers=headers)
        assert response.json()["invited"] == args.rows, response.json()["failed"]
        fresh.append(seconds)
        seconds, response = timed("POST", server.url + "/api/bulk/invite", files=files, headers=headers)
        assert response.json()["invited"] == args.rows
        repeated.append(seconds)
    return [
        Result(f"bulk invite, {args.rows} new invitations", fresh, target=1.0),
        Result(f"bulk invite, {args.rows} rows already pending", repeated, target=1.0),
    ]


# The portfolio of one consultant: clients with members, a year of acts, check-ins and donations.
PORTFOLIO_SEED = [
    """
    CREATE TEMP TABLE seed_clients ON COMMIT DROP AS
    SELECT g - 1 AS n, gen_random_uuid()::text AS id FROM generate_series(1, :clients) AS g
    """,
    """
    INSERT INTO organizations (id, name, slug, join_code, reporting_currency, created_at)
    SELECT id, 'Bench ' || :run || ' client ' || lpad(n::text, 4, '0'), 'bench-' || :run || '-client-' || n,
           substr(md5(id), 1, 16), 'USD', now()
    FROM seed_clients
    """,
    """
    CREATE TEMP TABLE seed_people ON COMMIT DROP AS
    SELECT c.n AS client, m - 1 AS m, c.id AS organization_id, gen_random_uuid()::text AS id
    FROM seed_clients AS c CROSS JOIN generate_series(1, :members) AS m
    """,
    """
    INSERT INTO users (id, email, name, password_hash, account_type, organization_id, role, active, created_at)
    SELECT id, 'bench-' || :run || '-' || client || '-' || m || '@example.test', 'Member ' || m, '!', 'member',
           organization_id, CASE WHEN m = 0 THEN 'admin' ELSE 'member' END, true, now()
    FROM seed_people
    """,
    """
    INSERT INTO invitations (id, consultant_id, organization_id, status, created_at, expires_at, responded_at)
    SELECT gen_random_uuid()::text, :consultant, id, 'accepted', now(), now() + interval '14 days', now()
    FROM seed_clients
    """,
    """
    INSERT INTO client_relationships (id, consultant_id, organization_id, invitation_id, status, accepted_at)
    SELECT gen_random_uuid()::text, consultant_id, organization_id, id, 'active', now()
    FROM invitations WHERE consultant_id = :consultant
    """,
    # Act g belongs to client g % clients; its moment is spread over the last 364 days. Each act
    # has the evidence of the level it asked for, so that reports count a mix of levels.
    """
    INSERT INTO kindness_acts (id, organization_id, user_id, recipient_id, description, category,
                               verification_level, verified_level, verification_status, media, ripple_count,
                               created_at, updated_at)
    SELECT gen_random_uuid()::text, p.organization_id, p.id, 'outsider-' || (g % 997), 'Covered a shift',
           (ARRAY['peer_recognition', 'community', 'wellbeing'])[1 + g % 3], 1 + (g / 7) % 5, 1 + (g / 7) % 5,
           'verified', '[]', 0,
           now() - ((g::bigint * 7919) % (364 * 1440)) * interval '1 minute',
           now() - ((g::bigint * 7919) % (364 * 1440)) * interval '1 minute'
    FROM generate_series(0, :acts - 1) AS g
    JOIN seed_people AS p ON p.client = g % :clients AND p.m = (g / :clients) % :members
    """,
    # Three opportunities a client (10, 100 and 300 days ago), each with every member checked in.
    """
    INSERT INTO volunteer_opportunities (id, organization_id, created_by, title, starts_at, ends_at,
                                         latitude, longitude, radius_meters, code_secret, created_at)
    SELECT gen_random_uuid()::text, p.organization_id, p.id, 'Beach clean-up',
           now() - d * interval '1 day', now() - d * interval '1 day' + interval '3 hours', 51.5, -0.12, 200,
           translate(upper(md5(random()::text)), '0189', 'WXYZ'), now()
    FROM seed_people AS p CROSS JOIN (VALUES (10), (100), (300)) AS days(d) WHERE p.m = 0
    """,
    """
    INSERT INTO volunteer_check_ins (id, opportunity_id, organization_id, user_id, checked_in_at, latitude,
                                     longitude, distance_meters, location_verified, verified, hours)
    SELECT gen_random_uuid()::text, o.id, o.organization_id, p.id, o.starts_at, 51.5, -0.12, 0, p.m % 4 <> 3, p.m % 4 <> 3, 3
    FROM volunteer_opportunities AS o JOIN seed_people AS p ON p.organization_id = o.organization_id
    """,
    # 100 donations a client over the year: most succeeded, some pending, failed or refunded.
    """
    INSERT INTO donations (id, organization_id, user_id, amount, currency, recipient_name, status,
                           created_at, updated_at, succeeded_at)
    SELECT gen_random_uuid()::text, p.organization_id, p.id, 500 + (g * 37) % 10000, 'USD', 'Shelter Trust',
           (ARRAY['succeeded', 'succeeded', 'succeeded', 'pending', 'failed', 'refunded'])[1 + g % 6],
           now() - (g % 364) * interval '1 day', now(), NULL
    FROM generate_series(0, 100 * :clients - 1) AS g
    JOIN seed_people AS p ON p.client = g % :clients AND p.m = (g / :clients) % :members
    """,
]


def portfolio_export(server: LiveServer, fixtures: Fixtures, args: argparse.Namespace) -> list[Result]:
    """GET /api/bulk/export of a consultant with `--clients` clients holding `--acts` kindness acts."""
    engine = fixtures.engine
    if engine.dialect.name != "postgresql":
        print(
            "note: the portfolio export is measured on PostgreSQL only (it seeds with generate_series)", file=sys.stderr
        )
        return []
    consultant_id, headers = fixtures.consultant()
    started = time.perf_counter()
    params = {
        "run": fixtures.run,
        "consultant": consultant_id,
        "clients": args.clients,
        "members": EXPORT_MEMBERS,
        "acts": args.acts,
    }
    with engine.begin() as connection:
        for statement in PORTFOLIO_SEED:
            connection.execute(text(statement), params)
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        for table in (
            "organizations",
            "users",
            "client_relationships",
            "kindness_acts",
            "volunteer_check_ins",
            "donations",
        ):
            connection.execute(text(f"VACUUM ANALYZE {table}"))
    print(f"portfolio seeded in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    results = []
    for period, file_format in (("month", "csv"), ("month", "json"), ("year", "csv")):
        seconds = []
        for _ in range(args.runs):
            elapsed, response = timed(
                "GET",
                server.url + "/api/bulk/export",
                params={"format": file_format, "period": period},
                headers=headers,
            )
            seconds.append(elapsed)
        if file_format == "json":
            rows = response.json()["data"]
            assert len(rows) == args.clients
        else:
            lines = response.text.splitlines()
            assert len(lines) == args.clients + 1
            if period == "year":
                assert sum(int(line.split(",")[1]) for line in lines[1:]) == args.acts
        results.append(Result(f"portfolio export, {period}, {file_format}", seconds, target=2.0))
    return results


# Each measurement takes the server, the fixtures and the arguments (runs and sizes).
MEASUREMENTS = [bulk_invite, portfolio_export]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rows", type=int, default=ROWS, help="rows of the bulk invitation file")
    parser.add_argument("--clients", type=int, default=EXPORT_CLIENTS, help="client organizations in the portfolio")
    parser.add_argument("--acts", type=int, default=EXPORT_ACTS, help="kindness acts across the portfolio")
    args = parser.parse_args(argv)
    settings = Settings.from_env()
    if settings.embedded:
        print("note: DATABASE_URL is SQLite; the targets are for PostgreSQL", file=sys.stderr)
    upgrade(settings.database_url)
    fixtures = Fixtures(settings)
    server = LiveServer({"RATE_LIMIT_MULTIPLIER": "1000", "ENVIRONMENT": os.environ.get("ENVIRONMENT", "test")})
    try:
        server.wait_ready()
        # The first requests build routes and fill connection pools; they are not measured.
        warm_up = fixtures.consultant_headers()
        for _ in range(3):
            requests.get(server.url + "/api/clients", headers=warm_up, timeout=10).raise_for_status()
        results = [result for measure in MEASUREMENTS for result in measure(server, fixtures, args)]
    finally:
        server.stop()
    print(f"database: {settings.database_url.split('://', 1)[0]}, cache: {'redis' if settings.redis_url else 'memory'}")
    print(f"{'measurement':<44} {'runs':>4} {'median ms':>9} {'max ms':>9} {'target ms':>9}  verdict")
    for result in results:
        print(result.row())
    return (
        0 if all(max(r.seconds) <= r.target for r in results) else 3
    )  # 3: it ran, and a figure missed its target (README, Benchmarks)


if __name__ == "__main__":
    sys.exit(main())
