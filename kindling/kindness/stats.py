"""Kindness statistics of an organization, read from its tallies and cached for five minutes.

The cached entry names the generation it was computed in, and each organization's generation
is replaced once a change to its acts has committed. A reader fetches both in one round trip
and uses the entry only when the generations agree: a reader that computed from data older
than the change, and stored its result late, has stored an entry nobody uses.
"""

from __future__ import annotations

import datetime as dt
from decimal import ROUND_HALF_UP, Decimal

import orjson
from sqlalchemy import event, func, select
from sqlalchemy.orm import Session as DbSession

from kindling.kindness.models import KindnessAct, KindnessRecipientTally, KindnessTally
from kindling.platform import jsoncodec
from kindling.platform.base import new_id, utcnow
from kindling.platform.cache import Cache

CATEGORIES = ("peer_recognition", "community", "wellbeing")
STATS_TTL = 5 * 60
# Outlives the entries it names; when it expires, readers simply start a new generation.
GENERATION_TTL = 24 * 60 * 60
RECENT_WINDOW = dt.timedelta(days=7)
TOP_RECIPIENTS = 5
CENT = Decimal("0.01")


def get_stats(db: DbSession, cache: Cache, *, organization_id: str) -> dict:
    """The organization's statistics, from the cache when they are there."""
    return orjson.loads(get_stats_json(db, cache, organization_id=organization_id))


def get_stats_json(db: DbSession, cache: Cache, *, organization_id: str) -> str:
    """The organization's statistics as the JSON text the cache keeps, so that an answer from the
    cache can be sent as stored, never decoded and encoded again."""
    generation_key, entry_key = _generation_key(organization_id), _entry_key(organization_id)
    generation, entry = cache.get_many([generation_key, entry_key])
    if generation is None:
        generation = new_id()
        cache.set(generation_key, generation, GENERATION_TTL)
    elif entry is not None:
        entry_generation, _, cached = entry.partition(":")
        if entry_generation == generation:
            return cached
    encoded = jsoncodec.dumps(compute_stats(db, organization_id=organization_id)).decode()
    cache.set(entry_key, f"{generation}:{encoded}", STATS_TTL)
    return encoded


def compute_stats(db: DbSession, *, organization_id: str) -> dict:
    """The organization's statistics, computed now."""
    by_category = dict.fromkeys(CATEGORIES, 0)
    verification_sum = ripple_sum = 0
    tallies = db.execute(
        select(
            KindnessTally.category, KindnessTally.acts, KindnessTally.verification_sum, KindnessTally.ripple_sum
        ).where(KindnessTally.organization_id == organization_id)
    )
    for category, acts, verification, ripple in tallies:
        by_category[category] = acts
        verification_sum += verification
        ripple_sum += ripple
    total = sum(by_category.values())
    # Ripple scores are whole or half points: keep them as half points until the end.
    half_points = 2 * verification_sum + ripple_sum
    average = (Decimal(half_points) / (2 * total)).quantize(CENT, ROUND_HALF_UP) if total else Decimal(0)
    recent = db.scalar(
        select(func.count())
        .select_from(KindnessAct)
        .where(KindnessAct.organization_id == organization_id, KindnessAct.created_at >= utcnow() - RECENT_WINDOW)
    )
    top = db.execute(
        select(KindnessRecipientTally.recipient_id, KindnessRecipientTally.acts)
        .where(KindnessRecipientTally.organization_id == organization_id)
        .order_by(KindnessRecipientTally.acts.desc(), KindnessRecipientTally.recipient_id.asc())
        .limit(TOP_RECIPIENTS)
    )
    return {
        "total": total,
        "byCategory": by_category,
        "averageRippleScore": float(average),
        "totalRippleScore": half_points / 2,
        "recentCount": recent,
        "topRecipients": [{"userId": recipient, "count": count} for recipient, count in top],
    }


def invalidate_after_commit(db: DbSession, cache: Cache, organization_id: str) -> None:
    """Retire the organization's cached statistics once the session's changes have committed."""

    def new_generation(_session: DbSession) -> None:
        cache.set(_generation_key(organization_id), new_id(), GENERATION_TTL)

    event.listen(db, "after_commit", new_generation, once=True)


def _generation_key(organization_id: str) -> str:
    return f"kindness:stats-generation:{organization_id}"


def _entry_key(organization_id: str) -> str:
    return f"kindness:stats:{organization_id}"
