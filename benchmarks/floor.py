"""The floor for benchmarks/load.py: a minimal Flask app that answers the same JSON from the
same database queries as Kindling, without the contract (no validation, no session lookup,
no rate limits, no error envelope). Served the same way, through uvicorn and a2wsgi:

    FLOOR_USER_ID=… FLOOR_ORGANIZATION_ID=… DATABASE_URL=… REDIS_URL=… \\
        python -m uvicorn benchmarks.floor:app --workers 2 --port 8001
"""

from __future__ import annotations

import os

import flask
from a2wsgi import WSGIMiddleware

from kindling import __version__
from kindling.config import Settings
from kindling.kindness import acts as kindness
from kindling.kindness import stats as kindness_stats
from kindling.kindness.views import act_body
from kindling.platform import health
from kindling.platform.access import Principal
from kindling.platform.base import utcnow
from kindling.platform.cache import make_cache, redis_breaker
from kindling.platform.database import make_engine, make_session_factory

settings = Settings.from_env()
engine = make_engine(settings.database_url)
sessions = make_session_factory(engine)
cache = make_cache(settings.redis_url, redis_breaker())
database_probe = health.DatabaseProbe(engine)
caller = Principal(
    user_id=os.environ["FLOOR_USER_ID"],
    account_type="member",
    organization_id=os.environ["FLOOR_ORGANIZATION_ID"],
    role="admin",
    session_id="floor",
)
floor = flask.Flask(__name__)


@floor.get("/api/health")
def get_health():
    results = health.run_checks(database_probe, cache)
    return {
        "status": "ok" if all(result.ok for result in results.values()) else "degraded",
        "timestamp": utcnow(),
        "service": "kindling",
        "version": __version__,
        "environment": settings.environment,
        "checks": {name: result.as_dict() for name, result in results.items()},
        "strictMode": settings.strict_health_check,
    }


@floor.get("/api/kindness/stats")
def get_stats():
    with sessions() as db:
        return {"data": kindness_stats.get_stats(db, cache, organization_id=caller.organization_id)}


@floor.post("/api/kindness")
def create_act():
    body = flask.request.get_json()
    with sessions.begin() as db:
        act = kindness.create_act(
            db,
            cache,
            caller=caller,
            description=body["description"],
            category=body["category"],
            verification_level=body["verificationLevel"],
            recipient_id=body["recipientId"],
        )
        return {"data": act_body(act)}, 201


@floor.get("/api/kindness")
def list_acts():
    with sessions() as db:
        acts, next_cursor = kindness.list_acts(db, caller=caller, limit=int(flask.request.args.get("limit", 100)))
        return {"data": [act_body(act) for act in acts], "nextCursor": next_cursor}


app = WSGIMiddleware(floor)
