"""Speed of the consultant side, over HTTP against a real `kindling serve`.

    DATABASE_URL=postgresql+psycopg2://… [REDIS_URL=redis://…] python -m benchmarks.consultant [--runs 5]

Use a scratch database: organizations, consultants and invitations are added to it.
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

from kindling.config import Settings
from kindling.persistence.accounts import Organization
from kindling.persistence.database import make_engine, make_session_factory, upgrade
from kindling.services import accounts
from tests.live import LiveServer

ROWS = 500


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
        self.sessions = make_session_factory(make_engine(settings.database_url))
        self.run = uuid.uuid4().hex[:8]
        self.sequence = itertools.count(1)

    def organizations(self, count: int) -> list[str]:
        with self.sessions() as db:
            made = [
                Organization(name=f"Bench {self.run} {n}", slug=f"bench-{self.run}-{n}", join_code=uuid.uuid4().hex[:16])
                for n in range(count)
            ]
            db.add_all(made)
            db.commit()
            return [organization.id for organization in made]

    def consultant_headers(self) -> dict:
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
        return {"Authorization": f"Bearer {token}"}


def timed_post(url: str, **kwargs) -> tuple[float, requests.Response]:
    started = time.perf_counter()
    response = requests.post(url, timeout=60, **kwargs)
    elapsed = time.perf_counter() - started
    response.raise_for_status()
    return elapsed, response


def bulk_invite(server: LiveServer, fixtures: Fixtures, runs: int) -> list[Result]:
    """A 500-row file of new invitations, then the same file again (every row already pending)."""
    organization_ids = fixtures.organizations(ROWS)
    csv = ("organizationId,message\n" + "".join(f"{oid},Let us work together\n" for oid in organization_ids)).encode()
    files = {"file": ("clients.csv", csv, "text/csv")}
    fresh, repeated = [], []
    for _ in range(runs):
        headers = fixtures.consultant_headers()
        seconds, response = timed_post(server.url + "/api/bulk/invite", files=files, headers=headers)
        assert response.json()["invited"] == ROWS, response.json()["failed"]
        fresh.append(seconds)
        seconds, response = timed_post(server.url + "/api/bulk/invite", files=files, headers=headers)
        assert response.json()["invited"] == ROWS
        repeated.append(seconds)
    return [
        Result(f"bulk invite, {ROWS} new invitations", fresh, target=1.0),
        Result(f"bulk invite, {ROWS} rows already pending", repeated, target=1.0),
    ]


# Each measurement takes the server, the fixtures and the number of runs.
MEASUREMENTS = [bulk_invite]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
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
        results = [result for measure in MEASUREMENTS for result in measure(server, fixtures, args.runs)]
    finally:
        server.stop()
    print(f"database: {settings.database_url.split('://', 1)[0]}, cache: {'redis' if settings.redis_url else 'memory'}")
    print(f"{'measurement':<44} {'runs':>4} {'median ms':>9} {'max ms':>9} {'target ms':>9}  verdict")
    for result in results:
        print(result.row())
    return 0 if all(max(r.seconds) <= r.target for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
