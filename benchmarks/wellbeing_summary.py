"""Time the organization wellbeing aggregates (GET /api/wellbeing?scope=organization) per period.

Usage: python benchmarks/wellbeing_summary.py [--responses 100000] [--people 1000]
BENCH_DATABASE_URL picks the database (default: a temporary SQLite file); it is migrated
and filled with one organization's responses spread over the last year. Use a throwaway database.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import statistics
import tempfile
import time

from sqlalchemy import insert, text

from kindling.accounts.models import Organization, User
from kindling.platform.base import new_id, utcnow
from kindling.platform.database import make_engine, make_session_factory, upgrade
from kindling.wellbeing import service as wellbeing
from kindling.wellbeing.models import WellbeingResponse


def fill(session, *, responses: int, people: int) -> str:
    organization = Organization(name="Bench", slug=f"bench-{new_id()}", join_code=new_id()[:32])
    session.add(organization)
    session.flush()
    users = [
        {
            "id": new_id(),
            "email": f"{new_id()}@bench.test",
            "name": "B",
            "password_hash": "x",
            "account_type": "member",
            "organization_id": organization.id,
            "role": "member",
            "active": True,
            "created_at": utcnow(),
        }
        for _ in range(people)
    ]
    session.execute(insert(User), users)
    now = utcnow()
    rows = []
    for _ in range(responses):
        label = random.choice(wellbeing.SENTIMENT_LABELS)
        rows.append(
            {
                "id": new_id(),
                "organization_id": organization.id,
                "user_id": random.choice(users)["id"],
                "mood": random.randint(1, 5),
                "stress": random.randint(1, 5),
                "energy": random.choice([None, 1, 2, 3, 4, 5]),
                "comment": "text" if label != "neutral" else None,
                "anonymous": False,
                "sentiment_label": label,
                "sentiment_compound": 0.0,
                "created_at": now - dt.timedelta(seconds=random.randint(0, 365 * 86400)),
            }
        )
    for start in range(0, len(rows), 5000):
        session.execute(insert(WellbeingResponse), rows[start : start + 5000])
    session.commit()
    # Fresh statistics, as autovacuum would have gathered them by now in production.
    session.execute(text("ANALYZE"))
    session.commit()
    return organization.id


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--responses", type=int, default=100_000)
    parser.add_argument("--people", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    url = os.environ.get("BENCH_DATABASE_URL") or f"sqlite:///{tempfile.mkdtemp()}/bench.db"
    upgrade(url)
    engine = make_engine(url)
    sessions = make_session_factory(engine)
    with sessions() as session:
        started = time.perf_counter()
        organization_id = fill(session, responses=args.responses, people=args.people)
        print(
            f"{engine.dialect.name}: {args.responses} responses by {args.people} people, filled in {time.perf_counter() - started:.1f} s"
        )
    for period in wellbeing.PERIOD_DAYS:
        timings = []
        with sessions() as session:
            for _ in range(args.repeat):
                started = time.perf_counter()
                summary = wellbeing.summarize_organization(session, organization_id=organization_id, period=period)
                timings.append((time.perf_counter() - started) * 1000)
        print(
            f"  period={period:<8} responses={summary.figures.responses:>7}  median {statistics.median(timings):7.1f} ms  max {max(timings):7.1f} ms"
        )


if __name__ == "__main__":
    main()
