"""Portfolio milestones: an organization's totals crossing a threshold, told once to its consultants."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import ScalarSelect, bindparam, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session as DbSession

from kindling import outbox
from kindling.accounts.models import Organization
from kindling.consulting import clients
from kindling.consulting.models import PortfolioMilestone
from kindling.platform.base import utcnow
from kindling.platform.database import changed_rows

MILESTONES = {
    "kindness_acts": (100, 500, 1_000, 5_000, 10_000),
    "volunteer_hours": (100, 1_000),
}


def highest_on_record(metric: str) -> ScalarSelect:
    """The highest threshold of `metric` on record for the organization bound as `organization`,
    or null. The thresholds on record are always all those up to it: `record_milestones` notes
    every one a total has reached."""
    return (
        select(func.max(PortfolioMilestone.threshold))
        .where(PortfolioMilestone.organization_id == bindparam("organization"), PortfolioMilestone.metric == metric)
        .scalar_subquery()
    )


def unrecorded(metric: str, total: float, highest: int | None) -> bool:
    """Whether `total` has reached a threshold of `metric` above `highest`, the highest on record."""
    return any((highest or 0) < threshold <= total for threshold in MILESTONES[metric])


def record_milestones(
    db: DbSession,
    *,
    organization_id: str,
    kindness_acts_total: int | None = None,
    volunteer_hours_total: float | None = None,
) -> list[tuple[str, int]]:
    """Note the milestones an organization's totals have reached, and tell its consultants.

    Each (organization, metric, threshold) happens once, however many transactions race
    to it: the one that inserts the milestone row emits `portfolio.milestone` to every
    consultant with an active relationship with the organization. Returns the milestones
    reached now.
    """
    totals = {"kindness_acts": kindness_acts_total, "volunteer_hours": volunteer_hours_total}
    crossed = [
        (metric, threshold)
        for metric, total in totals.items()
        if total is not None
        for threshold in MILESTONES[metric]
        if total >= threshold
    ]
    if not crossed:
        return []
    known = {
        (metric, threshold)
        for metric, threshold in db.execute(
            select(PortfolioMilestone.metric, PortfolioMilestone.threshold).where(
                PortfolioMilestone.organization_id == organization_id
            )
        )
    }
    now = utcnow()
    reached = [
        (metric, threshold)
        for metric, threshold in crossed
        if (metric, threshold) not in known and _insert_once(db, organization_id, metric, threshold, now)
    ]
    if not reached:
        return []
    organization = db.get_one(Organization, organization_id)
    consultant_ids = clients.active_consultant_ids(db, organization_id=organization_id)
    for metric, threshold in reached:
        for consultant_id in consultant_ids:
            outbox.emit(
                db,
                consultant_id=consultant_id,
                type="portfolio.milestone",
                data={
                    "organizationId": organization.id,
                    "organizationName": organization.name,
                    "metric": metric,
                    "threshold": threshold,
                    "value": totals[metric],
                    "reachedAt": now,
                },
            )
    return reached


def _insert_once(db: DbSession, organization_id: str, metric: str, threshold: int, now: dt.datetime) -> bool:
    # ON CONFLICT DO NOTHING keeps the caller's transaction usable when another one got there first.
    dialect = postgresql if db.get_bind().dialect.name == "postgresql" else sqlite
    statement = (
        dialect.insert(PortfolioMilestone)
        .values(organization_id=organization_id, metric=metric, threshold=threshold, reached_at=now)
        .on_conflict_do_nothing()
    )
    return changed_rows(db, statement) == 1
