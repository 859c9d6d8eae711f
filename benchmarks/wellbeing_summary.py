"""Time the organization wellbeing aggregates (GET /api/wellbeing?scope=organization) per period.

Usage: python benchmarks/wellbeing_summary.py [--responses 100000] [--people 1000] [--repeat 5]
BENCH_DATABASE_URL picks the database (default: a temporary SQLite file); it is migrated
and filled with one organization's responses spread over the last year, and each of their
weeks published (figures without noise, as their averages). The aggregates read the published
weeks only. Use a throwaway database.
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
from kindling.platform import periods
from kindling.platform.base import new_id, utcnow
from kindling.platform.database import make_engine, make_session_factory, upgrade
from kindling.wellbeing import service as wellbeing
from kindling.wellbeing.models import WellbeingResponse, WellbeingWeek


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
        created_at = now - dt.timedelta(seconds=random.randint(0, 365 * 86400))
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
                "created_at": created_at,
                "week_start": periods.week_of(created_at),
                "published_in": 1,
            }
        )
    for start in range(0, len(rows), 5000):
        session.execute(insert(WellbeingResponse), rows[start : start + 5000])
    session.execute(insert(WellbeingWeek), published_weeks(organization.id, rows))
    session.commit()
    # Fresh statistics, as autovacuum would have gathered them by now in production.
    session.execute(text("ANALYZE"))
    session.commit()
    return organization.id


def published_weeks(organization_id: str, rows: list[dict]) -> list[dict]:
    """Each week's figures, as revision 1 publishes them (here without noise)."""
    weeks: dict[dt.date, list[dict]] = {}
    for row in rows:
        weeks.setdefault(row["week_start"], []).append(row)
    published = []
    for week_start, answers in weeks.items():
        energies = [answer["energy"] for answer in answers if answer["energy"] is not None]
        labels = [answer["sentiment_label"] for answer in answers if answer["comment"] is not None]
        published.append(
            {
                "organization_id": organization_id,
                "week_start": week_start,
                "revision": 1,
                "published_at": utcnow(),
                "respondents": len({answer["user_id"] for answer in answers}),
                "responses": len(answers),
                "mood_average": round(statistics.fmean(answer["mood"] for answer in answers), 2),
                "stress_average": round(statistics.fmean(answer["stress"] for answer in answers), 2),
                "energy_respondents": len(energies) or None,
                "energy_average": round(statistics.fmean(energies), 2) if energies else None,
                **{label: labels.count(label) for label in wellbeing.SENTIMENT_LABELS},
            }
        )
    return published


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
    for period in periods.PERIOD_WEEKS:
        timings = []
        with sessions() as session:
            for _ in range(args.repeat):
                started = time.perf_counter()
                summary = wellbeing.summarize(
                    session, organization_ids=[organization_id], window=periods.window(period)
                )[organization_id]
                timings.append((time.perf_counter() - started) * 1000)
        responses = summary.figures.responses if summary else 0
        print(
            f"  period={period:<8} responses={responses:>7}  median {statistics.median(timings):7.1f} ms  max {max(timings):7.1f} ms"
        )


if __name__ == "__main__":
    main()
